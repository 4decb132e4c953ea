"""Spot price history as step functions; hour-of-week profiles; "cheapest on weekday evenings?".

AWS reports a spot price when it changes, so each (zone, instance type, product) series is a step
function: a price holds until the next record, and the last one until the end of the data window
(forward fill; nothing is assumed before a series' first record). Hour-of-week profiles have 168
bins (0 = Monday 00:00-01:00 in the chosen UTC offset) and are time-weighted: each bin averages
the price over the seconds that fell in it. To pool many series of different price levels, each
series is divided by its own time-weighted mean (a relative price, 1.0 = the series' average).

The weekday-evening question is answered by comparing the bin means of weekday-evening bins
(Mon-Fri, `evening_hours`, local time) with the other covered bins: the effect size is the
relative difference, and a permutation test over bins (fixed seed, so the answer is repeatable)
says how often a random set of bins of the same size differs as much. Whole bins are permuted,
not samples, because successive prices are strongly autocorrelated. With fewer than
`MIN_DAYS_FOR_VERDICT` days of data no verdict is given: the data cannot say.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from gpurent.errors import DataError, InputError
from gpurent.spot.io.price_io import PriceRecord
from gpurent.spot.io.trace import Trace

HOURS_PER_WEEK = 168
MIN_DAYS_FOR_VERDICT = 14.0
"""Two weeks: each weekday-evening bin is then seen at least twice."""
SIGNIFICANCE = 0.05
MIN_EFFECT = 0.01
"""A pattern smaller than 1% of the price is reported as not mattering, significant or not."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PriceSeries:
    """One step function: `prices_usd_per_hour[i]` holds from `times[i]` until the next time
    (the last one until `end`)."""

    zone: str
    instance_type: str
    product: str
    times: tuple[datetime, ...]
    prices_usd_per_hour: tuple[float, ...]
    end: datetime

    @property
    def label(self) -> str:
        """The series' name: zone/instance type/product."""
        return f"{self.zone}/{self.instance_type}/{self.product}"

    def segments(self) -> list[tuple[datetime, datetime, float]]:
        """(start, end, price) pieces of the step function, zero-length ones dropped."""
        bounds = [*self.times[1:], self.end]
        return [
            (t0, t1, p)
            for t0, t1, p in zip(self.times, bounds, self.prices_usd_per_hour, strict=True)
            if t1 > t0
        ]

    def value_at(self, when: datetime) -> float | None:
        """The price in force at `when` (None before the first record)."""
        current = None
        for t, p in zip(self.times, self.prices_usd_per_hour, strict=True):
            if t > when:
                break
            current = p
        return current

    def mean_usd_per_hour(self) -> float:
        """Time-weighted mean price over the series' span."""
        segs = self.segments()
        total = sum((t1 - t0).total_seconds() for t0, t1, _ in segs)
        if total <= 0:
            return self.prices_usd_per_hour[-1]
        return sum((t1 - t0).total_seconds() * p for t0, t1, p in segs) / total


@dataclass(frozen=True, slots=True, kw_only=True)
class Profile:
    """168 hour-of-week bins: mean value (None when the bin saw no data) and seconds observed."""

    means: tuple[float | None, ...]
    seconds: tuple[float, ...]
    utc_offset_hours: int

    @property
    def covered_bins(self) -> int:
        """Number of hour-of-week bins that saw data."""
        return sum(1 for m in self.means if m is not None)


@dataclass(frozen=True, slots=True, kw_only=True)
class PatternTest:
    """Hour-of-week bins of a group vs the rest: bin means, relative effect, permutation p."""

    quantity: str
    group: str
    group_mean: float | None
    other_mean: float | None
    relative_difference: float | None
    p_value: float | None
    group_bins: int
    other_bins: int
    days_of_data: float
    verdict: str


def build_series(
    records: Iterable[PriceRecord],
    *,
    end: datetime | None = None,
    zones: Sequence[str] = (),
    instance_types: Sequence[str] = (),
    products: Sequence[str] = (),
) -> list[PriceSeries]:
    """Group records into step functions, filtered; `end` defaults to the last record's time."""
    groups: dict[tuple[str, str, str], dict[datetime, float]] = {}
    all_records = list(records)
    if not all_records:
        raise DataError("no price records to analyse")
    for r in all_records:
        if zones and r.zone not in zones:
            continue
        if instance_types and r.instance_type not in instance_types:
            continue
        if products and r.product not in products:
            continue
        groups.setdefault((r.zone, r.instance_type, r.product), {})[r.time] = r.price_usd_per_hour
    if not groups:
        raise InputError(
            "no price series match the filters (--zone/--instance-type/--product); "
            f"the data has e.g. {_examples(all_records)}"
        )
    window_end = end or max(r.time for r in all_records)
    out = []
    for (zone, itype, product), by_time in sorted(groups.items()):
        times = sorted(by_time)
        out.append(
            PriceSeries(
                zone=zone,
                instance_type=itype,
                product=product,
                times=tuple(times),
                prices_usd_per_hour=tuple(by_time[t] for t in times),
                end=max(window_end, times[-1]),
            )
        )
    return out


def _examples(records: Sequence[PriceRecord]) -> str:
    seen = sorted({(r.zone, r.instance_type, r.product) for r in records})[:3]
    return "; ".join("/".join(k) for k in seen)


def hour_of_week(when: datetime, utc_offset_hours: int = 0) -> int:
    """The hour of the week (0: Monday 00h, 167: Sunday 23h) of when, plus utc_offset_hours."""
    local = when + timedelta(hours=utc_offset_hours)
    return local.weekday() * 24 + local.hour


def _accumulate(
    sums: list[float], secs: list[float], t0: datetime, t1: datetime, value: float, *, offset: int
) -> None:
    """Spread `value` over [t0, t1) into hour-of-week bins, weighted by seconds."""
    t = t0
    while t < t1:
        next_hour = t.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
        stop = min(next_hour, t1)
        dt = (stop - t).total_seconds()
        b = hour_of_week(t, offset)
        sums[b] += value * dt
        secs[b] += dt
        t = stop


def _profile(sums: list[float], secs: list[float], offset: int) -> Profile:
    return Profile(
        means=tuple(s / w if w > 0 else None for s, w in zip(sums, secs, strict=True)),
        seconds=tuple(secs),
        utc_offset_hours=offset,
    )


def price_profile(
    series: Sequence[PriceSeries], *, utc_offset_hours: int = 0, relative: bool = True
) -> Profile:
    """Time-weighted hour-of-week profile of price (relative to each series' mean by default)."""
    if not -12 <= utc_offset_hours <= 14:
        raise InputError(f"--utc-offset must be between -12 and 14 hours, got {utc_offset_hours}")
    sums = [0.0] * HOURS_PER_WEEK
    secs = [0.0] * HOURS_PER_WEEK
    for s in series:
        scale = s.mean_usd_per_hour() if relative else 1.0
        if scale <= 0:
            continue
        for t0, t1, p in s.segments():
            _accumulate(sums, secs, t0, t1, p / scale, offset=utc_offset_hours)
    return _profile(sums, secs, utc_offset_hours)


def availability_profile(
    traces: Sequence[Trace], *, utc_offset_hours: int = 0, nodes: int = 1
) -> Profile:
    """Hour-of-week share of time with >= `nodes` spot instances, pooled over traces."""
    sums = [0.0] * HOURS_PER_WEEK
    secs = [0.0] * HOURS_PER_WEEK
    for tr in traces:
        if tr.start_time is None:
            raise DataError(f"trace {tr.name!r} has no start time; use a dated CSV trace")
        gap = timedelta(hours=tr.gap_hours)
        for i, count in enumerate(tr.available):
            t0 = tr.start_time + i * gap
            _accumulate(
                sums, secs, t0, t0 + gap, 1.0 if count >= nodes else 0.0, offset=utc_offset_hours
            )
    return _profile(sums, secs, utc_offset_hours)


def is_weekday_evening(bin_index: int, evening_hours: tuple[int, int]) -> bool:
    """Whether hour-of-week bin bin_index is Monday to Friday in evening_hours [start, stop)."""
    day, hour = divmod(bin_index, 24)
    start, stop = evening_hours
    return day < 5 and start <= hour < stop


def is_business_hours(bin_index: int) -> bool:
    """Mon-Fri 09:00-17:00 local."""
    day, hour = divmod(bin_index, 24)
    return day < 5 and 9 <= hour < 17


def weekday_evening_test(
    profile: Profile,
    *,
    quantity: str,
    days_of_data: float,
    evening_hours: tuple[int, int] = (17, 22),
    permutations: int = 2000,
    seed: int = 0,
) -> PatternTest:
    """Weekday-evening bins against the others; see the module docstring for the method."""
    start, stop = evening_hours
    if not 0 <= start < stop <= 24:
        raise InputError(
            f"--evening {start}-{stop}: give START-END hours with 0 <= START < END <= 24"
        )
    return hour_group_test(
        profile,
        lambda b: is_weekday_evening(b, evening_hours),
        group_name="weekday evenings",
        quantity=quantity,
        days_of_data=days_of_data,
        permutations=permutations,
        seed=seed,
    )


def hour_group_test(
    profile: Profile,
    in_group: Callable[[int], bool],
    *,
    group_name: str,
    quantity: str,
    days_of_data: float,
    permutations: int = 2000,
    seed: int = 0,
) -> PatternTest:
    """Bins where `in_group(bin)` against the other covered bins: effect and permutation p."""
    covered = [(b, m) for b, m in enumerate(profile.means) if m is not None]
    grp = [m for b, m in covered if in_group(b)]
    other = [m for b, m in covered if not in_group(b)]
    if not grp or not other:
        return PatternTest(
            quantity=quantity,
            group=group_name,
            group_mean=_mean(grp),
            other_mean=_mean(other),
            relative_difference=None,
            p_value=None,
            group_bins=len(grp),
            other_bins=len(other),
            days_of_data=days_of_data,
            verdict=f"cannot tell: the data has no {group_name if not grp else 'other'} hours "
            f"({days_of_data:.2f} days, {profile.covered_bins} of 168 hour-of-week bins)",
        )
    grp_mean, other_mean = sum(grp) / len(grp), sum(other) / len(other)
    rel = (grp_mean - other_mean) / other_mean if other_mean else None
    observed = abs(grp_mean - other_mean)
    values = [m for _, m in covered]
    rng = random.Random(seed)
    hits = 0
    for _ in range(permutations):
        rng.shuffle(values)
        a, b = values[: len(grp)], values[len(grp) :]
        if abs(sum(a) / len(a) - sum(b) / len(b)) >= observed - 1e-15:
            hits += 1
    p = (hits + 1) / (permutations + 1)
    return PatternTest(
        quantity=quantity,
        group=group_name,
        group_mean=grp_mean,
        other_mean=other_mean,
        relative_difference=rel,
        p_value=p,
        group_bins=len(grp),
        other_bins=len(other),
        days_of_data=days_of_data,
        verdict=_verdict(
            quantity, group_name, rel, p, days=days_of_data, bins=profile.covered_bins
        ),
    )


def _verdict(
    quantity: str, group: str, rel: float | None, p: float, *, days: float, bins: int
) -> str:
    if days < MIN_DAYS_FOR_VERDICT:
        return (
            f"cannot tell: {days:.2f} days of data ({bins} of 168 hour-of-week bins); "
            f"a verdict needs at least {MIN_DAYS_FOR_VERDICT:.0f} days"
        )
    if rel is None:
        return "cannot tell: the other hours average zero"
    size = f"{abs(rel) * 100:.1f}% {'higher' if rel > 0 else 'lower'}"
    if p < SIGNIFICANCE and abs(rel) >= MIN_EFFECT:
        return f"yes, a pattern: {quantity} in {group} is {size} than other hours (p={p:.3f})"
    if p < SIGNIFICANCE:
        return (
            f"no pattern that matters: {quantity} in {group} is {size} than other hours; "
            f"detectable (p={p:.3f}) but under {MIN_EFFECT * 100:.0f}%"
        )
    return (
        f"no measurable pattern: {quantity} in {group} is {size} than other hours, "
        f"p={p:.2f} (a random set of hours differs as much {p * 100:.0f}% of the time)"
    )


def _mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None
