"""One spot signal: a published figure about one instance type in one region or zone.

Providers and researchers publish signals that say something about spot capacity without one's
own availability trace: AWS Spot Placement Scores (1-10, higher = more likely to get capacity),
the AWS Spot Instance Advisor's interruption-frequency buckets (<5%, 5-10%, ... of instances
interrupted in the trailing month), SpotLake archives (price, placement score and interruption
frequency over time), Azure's eviction-rate buckets. Each importer (one module per format) turns
a file's text into `SpotSignal` rows; this module is pure.

Bucket -> rate rule (stated in every output that uses it): a bucket "a-b%" means that share of
instances is interrupted per month of use; gpurent takes its midpoint p (the open top bucket
">20%" counts as 25%, the next 5-point step) and spreads it over a month of 730 h:
interruptions per instance-hour = p / 730. "<5%" -> 2.5% / 730 h = 3.4e-5/h.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from gpurent.errors import InputError

HOURS_PER_MONTH = 730.0
TOP_BUCKET_EXTRA_PCT = 5.0
"""The open top bucket (">20%") counts as its floor plus this many points."""

RATE_RULE = (
    "bucket midpoint share of instances interrupted per month of use, / 730 h "
    "(the open top bucket >20% counts as 25%)"
)
"""How a bucketed interruption frequency becomes an hourly rate."""


class SignalKind(StrEnum):
    """What a signal's `value` measures."""

    PLACEMENT_SCORE = "placement_score"  # 1..10, higher = capacity more likely
    INTERRUPTION_PCT = "interruption_pct"  # % of instances interrupted per month (bucket mid)
    SPOT_PRICE = "spot_price"  # $/h per instance
    ON_DEMAND_PRICE = "on_demand_price"  # $/h per instance


@dataclass(frozen=True, slots=True, kw_only=True)
class SpotSignal:
    """One figure from one published source, for one instance in one region (or zone).

    `zone` is None when the source gives the region only. `label` is the source's own wording
    (e.g. "5-10%" or "score 9"). For INTERRUPTION_PCT the value is the bucket midpoint in %.
    """

    source: str  # format name and file, e.g. "aws-advisor:spot-advisor-data.json"
    as_of: datetime  # when the source says it was true (aware, UTC)
    provider: str
    region: str
    zone: str | None
    instance: str
    kind: SignalKind
    value: float
    label: str

    @property
    def interruptions_per_hour(self) -> float | None:
        """Expected interruptions per instance-hour by the bucket rule (module docstring)."""
        if self.kind is not SignalKind.INTERRUPTION_PCT:
            return None
        return self.value / 100.0 / HOURS_PER_MONTH

    def as_json(self) -> dict[str, object]:
        """The signal as a JSON-ready dict (as_of in ISO 8601, kind by its value)."""
        return {
            "source": self.source,
            "as_of": self.as_of.isoformat(),
            "provider": self.provider,
            "region": self.region,
            "zone": self.zone,
            "instance": self.instance,
            "kind": self.kind.value,
            "value": self.value,
            "label": self.label,
        }


_BUCKET = re.compile(
    r"^\s*(?:(<|>|≤|≥)\s*)?(\d+(?:\.\d+)?)\s*%?\s*(?:-\s*(\d+(?:\.\d+)?)\s*%?)?\s*(\+)?\s*$"
)


def bucket_midpoint_pct(label: str, where: str) -> float:
    """Midpoint in % of a bucket label: '<5%' -> 2.5, '5-10%' -> 7.5, '>20%' or '20+' -> 25."""
    m = _BUCKET.match(label)
    if not m:
        raise InputError(
            f"{where}: interruption bucket {label!r} is not like '<5%', '5-10%' or '>20%'"
        )
    op, low_s, high_s, plus = m.groups()
    low = float(low_s)
    if high_s is not None:
        high = float(high_s)
        if high < low:
            raise InputError(f"{where}: interruption bucket {label!r} has its bounds reversed")
        mid = (low + high) / 2
    elif op in ("<", "≤"):
        mid = low / 2
    elif op in (">", "≥") or plus:
        mid = low + TOP_BUCKET_EXTRA_PCT
    else:
        mid = low
    if not (math.isfinite(mid) and 0 <= mid <= 100):
        raise InputError(f"{where}: interruption bucket {label!r} is not within 0-100%")
    return mid


def field_error(where: str, field: str, what: str) -> InputError:
    """'FILE: field X: what; fix' as one line."""
    return InputError(f"{where}: field {field!r}: {what}")


def need_str(obj: object, key: str, where: str) -> str:
    """`obj[key]` as a non-blank string, or an InputError naming the field."""
    if not isinstance(obj, dict) or key not in obj:
        raise field_error(where, key, "missing; see docs/spot.md for the format")
    value = obj[key]
    if not isinstance(value, str) or not value.strip():
        raise field_error(where, key, f"expected a non-empty string, got {value!r}")
    return value.strip()


def need_number(obj: object, key: str, where: str, *, low: float, high: float) -> float:
    """`obj[key]` as a finite number in [low, high], or an InputError naming the field."""
    if not isinstance(obj, dict) or key not in obj:
        raise field_error(where, key, "missing; see docs/spot.md for the format")
    value = obj[key]
    try:
        x = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        x = math.nan
    if not (math.isfinite(x) and low <= x <= high):
        raise field_error(where, key, f"expected a number in [{low:g}, {high:g}], got {value!r}")
    return x
