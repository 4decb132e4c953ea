"""Hybrid schedules: different instances for different parts of the day, each priced its way.

Syntax (`--hybrid`): comma-separated parts `NAME:HOURS:INSTANCE`, e.g.
`day:8:p4d.24xlarge,night:16:g5.xlarge` - 8 h/day of a training instance and 16 h/day of a
small inference instance. INSTANCE is an instance type (looked up in the same provider/region as
`--offer`), a full `provider/instance/region` key, or a price like `$1.20` (on-demand only).
Each part is costed like a stand-alone usage pattern (`compare`): a commitment for a part
covers that instance around the clock, so a night-only part rarely justifies one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from gpurent.cloud.billing import BillingRule
from gpurent.errors import InputError
from gpurent.pricing.payment_options import Comparison, Prices, SpotRisk, UsagePattern, compare


@dataclass(frozen=True, slots=True, kw_only=True)
class HybridPart:
    """One part of the day: a name, hours per day, and the instance reference as written."""

    name: str
    hours_per_day: float
    instance: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PartCost:
    """A part's costing under every option, and the cheapest."""

    part: HybridPart
    comparison: Comparison

    @property
    def best_cost_usd(self) -> float:
        """Cost in USD of the cheapest option for this part."""
        return self.comparison.options[0].cost_usd


@dataclass(frozen=True, slots=True, kw_only=True)
class HybridResult:
    """Per-part costs; total with each part at its cheapest option."""

    parts: tuple[PartCost, ...]
    total_cost_usd: float
    total_on_demand_usd: float  # each part on demand on its own instance
    hours: float  # hours the schedule covers in all
    baseline_usd_per_hour: float | None = None  # the comparison's on-demand price
    baseline_usd: float | None = None  # that price for the same hours: the table's baseline


def parse_hybrid(text: str) -> list[HybridPart]:
    """Parse `NAME:HOURS:INSTANCE[,...]`; hours must be > 0 and sum to at most 24."""
    parts: list[HybridPart] = []
    for raw in text.split(","):
        chunk = raw.strip()
        if not chunk:
            continue
        fields = chunk.split(":", 2)
        if len(fields) != 3 or not all(f.strip() for f in fields):
            raise InputError(
                f"--hybrid part {chunk!r}: write NAME:HOURS:INSTANCE, "
                "e.g. day:8:p4d.24xlarge,night:16:g5.xlarge"
            )
        name, hours_text, instance = (f.strip() for f in fields)
        try:
            hours = float(hours_text)
        except ValueError:
            raise InputError(
                f"--hybrid part {name!r}: hours {hours_text!r} is not a number"
            ) from None
        if not (math.isfinite(hours) and 0 < hours <= 24):
            raise InputError(f"--hybrid part {name!r}: hours must be in (0, 24], got {hours_text}")
        parts.append(HybridPart(name=name, hours_per_day=hours, instance=instance))
    if not parts:
        raise InputError("--hybrid is empty; e.g. day:8:p4d.24xlarge,night:16:g5.xlarge")
    total = sum(p.hours_per_day for p in parts)
    if total > 24 + 1e-9:
        raise InputError(f"--hybrid hours add up to {total:g} h per day; at most 24")
    names = [p.name for p in parts]
    if len(set(names)) != len(names):
        raise InputError(f"--hybrid part names repeat ({', '.join(names)}); name each part once")
    return parts


def parse_price_ref(instance: str) -> float | None:
    """`$1.20` or `1.20` -> 1.2 $/h; None when the reference is an instance name."""
    text = instance.strip().removeprefix("$")
    try:
        value = float(text)
    except ValueError:
        return None
    if not (math.isfinite(value) and value > 0):
        raise InputError(f"--hybrid price {instance!r} must be a positive $/h")
    return value


def cost_hybrid(
    parts: Sequence[tuple[HybridPart, Prices]],
    *,
    days_per_month: float,
    months: float,
    risk: SpotRisk | None,
    baseline_usd_per_hour: float | None = None,
    rule: BillingRule | None = None,
) -> HybridResult:
    """Cost every part with `compare` and add up the cheapest option of each; with
    `baseline_usd_per_hour` (the on-demand price of the comparison shown above it), also that
    price for the same hours, so the saving is against the same baseline as that table."""
    if not parts:
        raise InputError("a hybrid schedule needs at least one part")
    costed = []
    for part, prices in parts:
        usage = UsagePattern(
            hours_per_day=part.hours_per_day, days_per_month=days_per_month, months=months
        )
        costed.append(PartCost(part=part, comparison=compare(usage, prices, risk, rule)))
    on_demand = sum(
        next(o.cost_usd for o in c.comparison.options if o.option == "on-demand") for c in costed
    )
    hours = sum(c.comparison.usage.total_hours for c in costed)
    return HybridResult(
        parts=tuple(costed),
        total_cost_usd=sum(c.best_cost_usd for c in costed),
        total_on_demand_usd=on_demand,
        hours=hours,
        baseline_usd_per_hour=baseline_usd_per_hour,
        baseline_usd=None if baseline_usd_per_hour is None else baseline_usd_per_hour * hours,
    )
