"""The 80% interval every estimate carries: the estimator's own cross-validated error.

`benchmarks/fit_intervals.py` refits the constants with each GPU (and each architecture) of the
reference data left out, predicts the left-out rows and writes the 10th and 90th percentiles of
the log-residual log(measured / predicted) per class into `data/intervals.json` (with the row
count and provenance), widened about their centre by one factor per group: the smallest whose
leave-one-unit-out coverage reaches 80% (an architecture's rows err together, which percentiles
pooled over the others understate). An estimate's interval is its throughput x
[exp(log_low), exp(log_high)] of its class.

Classes, `group/scale/family`:
- group: which cross-validation describes the estimate's error:
  "within-architecture" (leave-one-GPU-out: the architecture is in the constants' fitting data,
  efficiency basis "reference"), "unseen-architecture" (leave-one-architecture-out: an
  architecture the constants were not fitted on, bases "checked", "fitted" and "assumed", which
  is what Hopper, Blackwell and CDNA are), "anchored" (a user measurement of the same GPU, model
  and precision at another GPU count or batch: the error of the model's ratio between the two);
- scale: "1gpu" | "multi";
- family: "cnn" | "transformer" (encoders) | "llm" (decoder LLMs) | "other" (RNN, TTS, recsys).
A class with fewer than `MIN_ROWS` residuals is not written; lookup falls back to
`group/scale/*`, then `group/*/*` (always written).

Stated rules (not measured):
- "assumed" architectures (no public training measurement at all) and tasks the reference data
  never measured (inference) each widen the log half-width around the log-centre by `WIDEN`;
- a user measurement of exactly the asked configuration (same GPU count and batch) is the
  figure itself: its interval is its run-to-run noise, assumed +-`MEASURED_NOISE`; an anchored
  transfer is never narrower than that.
The multipliers are clamped so that low <= 1 <= high (the point estimate lies inside).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from gpurent.errors import DataError

COVERAGE = 0.8  # the nominal coverage of every interval (10th to 90th percentile)
MIN_ROWS = 20  # a class needs this many residuals, else it is pooled
WIDEN = 1.5  # log half-width multiplier per unvalidated aspect (assumed architecture, task)
MEASURED_NOISE = 0.03  # assumed run-to-run noise of a user's own measurement, relative
GROUPS = ("within-architecture", "unseen-architecture", "anchored")
SCALES = ("1gpu", "multi")
FAMILIES = ("cnn", "transformer", "llm", "other")
_FILE = "intervals.json"


@dataclass(frozen=True, slots=True, kw_only=True)
class IntervalClass:
    """Quantiles of log(measured / predicted) over one class's cross-validation rows."""

    key: str  # "group/scale/family", "*" for a pooled level
    log_low: float  # the 10th percentile, widened (see the module doc)
    log_high: float  # the 90th percentile, widened
    rows: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Interval:
    """Multipliers on an estimate's throughput: [low, high] covers the measured value with
    probability `coverage` (on the cross-validation); `label` says which class and rule."""

    low: float
    high: float
    coverage: float
    label: str


@dataclass(frozen=True, slots=True, kw_only=True)
class IntervalTable:
    """Prediction intervals by workload class (group/scale/family), with where they came from."""

    classes: Mapping[str, IntervalClass]
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def lookup(self, group: str, scale: str, family: str) -> IntervalClass:
        """The most specific class with data: group/scale/family, group/scale/*, group/*/*."""
        for key in (f"{group}/{scale}/{family}", f"{group}/{scale}/*", f"{group}/*/*"):
            hit = self.classes.get(key)
            if hit is not None:
                return hit
        raise DataError(
            f"{_FILE} has no class {group}/*/*: regenerate it with benchmarks/fit_intervals.py"
        )


def family_class(family: str) -> str:
    """The interval family of a zoo model family (`ModelInfo.family`)."""
    if family == "cnn":
        return "cnn"
    if family == "encoder":
        return "transformer"
    if family == "decoder-llm":
        return "llm"
    return "other"


def residual_group(efficiency_basis: str) -> str:
    """The cross-validation that describes an uncalibrated estimate on this architecture."""
    return "within-architecture" if efficiency_basis == "reference" else "unseen-architecture"


def _widened(lo: float, hi: float, times: float) -> tuple[float, float]:
    centre, half = (lo + hi) / 2.0, (hi - lo) / 2.0
    return centre - half * times, centre + half * times


def widened_interval(interval: Interval, times: float, rule: str) -> Interval:
    """`interval` with its log half-width multiplied by `times` about its log-centre (clamped
    to hold the point estimate), `rule` appended to its label."""
    lo, hi = _widened(math.log(interval.low), math.log(interval.high), times)
    return Interval(
        low=min(1.0, math.exp(lo)),
        high=max(1.0, math.exp(hi)),
        coverage=interval.coverage,
        label=f"{interval.label}; {rule}",
    )


def stretched_interval(
    interval: Interval, share: float, slow: float, fast: float, rule: str
) -> Interval:
    """`interval` widened for a part of the step, `share` of it, whose own time is uncertain:
    that part taking `slow` times its estimate lowers the throughput bound to
    low / (1 - f + f slow), taking `fast` times raises it to high / (1 - f + f fast); `rule` is
    appended to the label."""
    f = min(1.0, max(0.0, share))
    return Interval(
        low=interval.low / (1.0 - f + f * slow),
        high=interval.high / (1.0 - f + f * fast),
        coverage=interval.coverage,
        label=f"{interval.label}; {rule}",
    )


def interval_for(
    table: IntervalTable,
    *,
    basis: str,
    efficiency_basis: str,
    num_gpus: int,
    model_family: str,
    trains: bool,
    exact_measurement: bool = False,
) -> Interval:
    """The interval of an estimate (see the module doc for the classes and the rules)."""
    scale = "1gpu" if num_gpus == 1 else "multi"
    family = family_class(model_family)
    noise = math.log1p(MEASURED_NOISE)
    if basis == "measured" and exact_measurement:
        return Interval(
            low=math.exp(-noise),
            high=math.exp(noise),
            coverage=COVERAGE,
            label=f"your measurement (run-to-run noise assumed +-{MEASURED_NOISE:.0%})",
        )
    group = "anchored" if basis == "measured" else residual_group(efficiency_basis)
    cls = table.lookup(group, scale, family)
    lo, hi = cls.log_low, cls.log_high
    rules: list[str] = []
    times = 1.0
    if basis != "measured" and efficiency_basis == "assumed":
        times *= WIDEN
        rules.append(f"x{WIDEN:g} width: architecture never measured")
    if not trains:
        times *= WIDEN
        rules.append(f"x{WIDEN:g} width: validated on training only")
    if times != 1.0:
        lo, hi = _widened(lo, hi, times)
    if basis == "measured":
        lo, hi = min(lo, -noise), max(hi, noise)
    label = f"{cls.key} ({cls.rows} rows)" + "".join(f"; {r}" for r in rules)
    return Interval(
        low=min(1.0, math.exp(lo)), high=max(1.0, math.exp(hi)), coverage=COVERAGE, label=label
    )


def parse_intervals(doc: Mapping[str, Any]) -> IntervalTable:
    """The table from its JSON form (`data/intervals.json`); bad content is a DataError."""
    try:
        raw = doc["classes"]
        classes = {
            key: IntervalClass(
                key=key,
                log_low=float(v["log_low"]),
                log_high=float(v["log_high"]),
                rows=int(v["rows"]),
            )
            for key, v in raw.items()
        }
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"{_FILE}: malformed ({exc}); regenerate with fit_intervals.py") from None
    for c in classes.values():
        if not c.log_low <= c.log_high:
            raise DataError(f"{_FILE}: class {c.key} has q10 > q90; regenerate it")
    for group in GROUPS:
        if f"{group}/*/*" not in classes:
            raise DataError(f"{_FILE}: no pooled class {group}/*/*; regenerate it")
    return IntervalTable(classes=classes, provenance=dict(doc.get("provenance", {})))


def load_intervals() -> IntervalTable:
    """The bundled interval table, parsed afresh on each call (the Estimator holds it)."""
    text = resources.files("gpurent.estimate.data").joinpath(_FILE).read_text(encoding="utf-8")
    return parse_intervals(json.loads(text))
