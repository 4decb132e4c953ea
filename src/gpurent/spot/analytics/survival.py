"""Spot lifetimes from availability traces, with right-censoring (Kaplan-Meier).

A lifetime is a run of consecutive ticks at which the zone had capacity (`available >= nodes`):
an instance started at the beginning of the run is assumed to be reclaimed when the run ends
(the "Can't Be Late" trace model). A run still going at the end of the trace is right-censored
(we only know the lifetime is at least that long); a run already going at the first tick is
left-truncated, and is treated as censored at its observed length (a lower bound), which errs
towards shorter lifetimes, i.e. towards checkpointing more often.

Spot lifetimes are heavy tailed (mean 2-7x the median in the 2023 AWS V100 traces, see
docs/spot-analytics.md), so the exponential assumption of Young/Daly is checked, not assumed:
the survival curve S(t) = P(lifetime > t) is estimated by Kaplan-Meier over all runs.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass

from gpurent.errors import DataError, InputError
from gpurent.spot.io.trace import Trace


@dataclass(frozen=True, slots=True, kw_only=True)
class Lifetime:
    """One observed run of availability, in hours; `censored` when its end was not seen."""

    duration_h: float
    censored: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Survival:
    """A Kaplan-Meier survival curve: S(t) = `survival[i]` for `times_h[i] <= t < times_h[i+1]`.

    `times_h[0]` is 0 with survival 1. `horizon_h` is the longest observed lifetime: beyond it
    the curve is unknown (restricted means are taken up to it).
    """

    times_h: tuple[float, ...]
    survival: tuple[float, ...]
    horizon_h: float
    events: int
    censored: int

    def at(self, t_h: float) -> float:
        """S(t): the probability that a lifetime exceeds `t_h` hours (held flat past horizon)."""
        i = bisect.bisect_right(self.times_h, t_h) - 1
        return self.survival[max(i, 0)]

    def restricted_mean_h(self, limit_h: float | None = None) -> float:
        """Integral of S from 0 to `limit_h` (default the horizon), in hours."""
        limit = self.horizon_h if limit_h is None else min(limit_h, self.horizon_h)
        total = 0.0
        for i, t in enumerate(self.times_h):
            if t >= limit:
                break
            end = self.times_h[i + 1] if i + 1 < len(self.times_h) else limit
            total += self.survival[i] * (min(end, limit) - t)
        return total

    def quantile_h(self, q: float) -> float | None:
        """Smallest t with P(lifetime <= t) >= q; None when the curve never gets that low."""
        for t, s in zip(self.times_h, self.survival, strict=True):
            if 1.0 - s >= q - 1e-12:
                return t
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class LifetimeSummary:
    """Heavy-tail summary of lifetimes, hours. KM-based figures account for censoring."""

    runs: int
    censored: int
    median_h: float | None
    p90_h: float | None
    restricted_mean_h: float
    exponential_mtti_h: float
    naive_mean_h: float
    naive_median_h: float


def lifetimes_from_trace(trace: Trace, nodes: int = 1) -> list[Lifetime]:
    """Runs of `available >= nodes` in one trace, as lifetimes in hours (censoring flagged)."""
    if nodes < 1:
        raise InputError(f"--nodes must be >= 1, got {nodes}")
    out: list[Lifetime] = []
    run = 0
    started_at_zero = False
    for i, count in enumerate(trace.available):
        if count >= nodes:
            if run == 0:
                started_at_zero = i == 0
            run += 1
        elif run:
            out.append(Lifetime(duration_h=run * trace.gap_hours, censored=started_at_zero))
            run = 0
    if run:
        out.append(Lifetime(duration_h=run * trace.gap_hours, censored=True))
    return out


def lifetimes_from_hours(
    lifetimes_h: Sequence[float], censored: Sequence[bool] | None = None
) -> list[Lifetime]:
    """Validate plain numbers (hours) into lifetimes; `censored` flags runs cut by the trace."""
    if not lifetimes_h:
        raise DataError("no lifetimes: the trace never had capacity; nothing to fit")
    flags = [False] * len(lifetimes_h) if censored is None else list(censored)
    if len(flags) != len(lifetimes_h):
        raise InputError(f"{len(flags)} censoring flags for {len(lifetimes_h)} lifetimes")
    out = []
    for i, v in enumerate(lifetimes_h):
        if not (isinstance(v, int | float) and math.isfinite(v) and v > 0):
            raise InputError(f"lifetime #{i + 1} must be a positive number of hours, got {v!r}")
        out.append(Lifetime(duration_h=float(v), censored=bool(flags[i])))
    return out


def kaplan_meier(lifetimes: Sequence[Lifetime]) -> Survival:
    """Kaplan-Meier estimate of P(lifetime > t) from possibly censored lifetimes."""
    if not lifetimes:
        raise DataError("no lifetimes: the trace never had capacity; nothing to fit")
    ordered = sorted(lifetimes, key=lambda x: (x.duration_h, x.censored))
    at_risk = len(ordered)
    times = [0.0]
    surv = [1.0]
    s = 1.0
    i = 0
    while i < len(ordered):
        t = ordered[i].duration_h
        deaths = leaving = 0
        while i < len(ordered) and ordered[i].duration_h == t:
            deaths += 0 if ordered[i].censored else 1
            leaving += 1
            i += 1
        if deaths:
            s *= 1.0 - deaths / at_risk
            times.append(t)
            surv.append(s)
        at_risk -= leaving
    events = sum(1 for x in lifetimes if not x.censored)
    return Survival(
        times_h=tuple(times),
        survival=tuple(surv),
        horizon_h=max(x.duration_h for x in lifetimes),
        events=events,
        censored=len(lifetimes) - events,
    )


def exponential_mtti_h(lifetimes: Sequence[Lifetime]) -> float:
    """Censoring-aware exponential MTTI: total observed time / interruptions seen (MLE), hours.

    Infinite when no interruption was observed.
    """
    events = sum(1 for x in lifetimes if not x.censored)
    total = sum(x.duration_h for x in lifetimes)
    return math.inf if events == 0 else total / events


def summarize(lifetimes: Sequence[Lifetime]) -> LifetimeSummary:
    """Median, p90 and restricted mean from Kaplan-Meier, next to naive figures."""
    km = kaplan_meier(lifetimes)
    hours = sorted(x.duration_h for x in lifetimes)
    mid = len(hours) // 2
    naive_median = hours[mid] if len(hours) % 2 else (hours[mid - 1] + hours[mid]) / 2
    return LifetimeSummary(
        runs=len(lifetimes),
        censored=km.censored,
        median_h=km.quantile_h(0.5),
        p90_h=km.quantile_h(0.9),
        restricted_mean_h=km.restricted_mean_h(),
        exponential_mtti_h=exponential_mtti_h(lifetimes),
        naive_mean_h=sum(hours) / len(hours),
        naive_median_h=naive_median,
    )
