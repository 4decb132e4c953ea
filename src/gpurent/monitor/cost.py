"""The cost meter: money spent, money wasted on idle or under-used GPU time, monthly projection.

Pure. The instance price comes from the catalog (`price_from_catalog`, by instance type and
optionally provider and region) or is given (`InstancePrice.given`); `gpurent.monitor.instance`
detects the instance type from cloud metadata (`--instance auto`).

Method: each sample stands for the time until the next one (the latest for the median of the
last 1,000 intervals).
A GPU's share of the instance price is price / GPU count. Idle waste is the full share during
idle samples. Under-use waste is the share times (1 - activity) during non-idle samples, where
activity is SM utilisation (GPM) or, without it, busy % — then under-use is underestimated,
since busy % overstates activity.
"""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from gpurent.catalog import Offer
from gpurent.errors import InputError, NotFoundError
from gpurent.monitor.rules import Thresholds, is_idle
from gpurent.monitor.sample import Sample
from gpurent.units import HOURS_PER_MONTH, SECONDS_PER_HOUR


@dataclass(frozen=True, slots=True, kw_only=True)
class InstancePrice:
    """The price of the watched instance in USD per hour, its GPU count and where it came from."""

    label: str
    price_usd_per_hour: float  # the whole instance, on demand unless said otherwise
    gpu_count: int | None  # None: take it from the samples
    source: str

    @staticmethod
    def given(price_usd_per_hour: float, gpu_count: int | None = None) -> InstancePrice:
        """The price given on the command line; InputError if it is negative or not a number."""
        if not price_usd_per_hour >= 0:
            raise InputError(
                f"--price-usd-per-hour must be a non-negative number, got {price_usd_per_hour}"
            )
        return InstancePrice(
            label="given price",
            price_usd_per_hour=price_usd_per_hour,
            gpu_count=gpu_count,
            source="--price-usd-per-hour",
        )


def price_from_catalog(
    offers: Sequence[Offer],
    instance_type: str,
    *,
    provider: str | None = None,
    region: str | None = None,
    spot: bool = False,
) -> InstancePrice:
    """The price of `instance_type` (case-insensitive) from the catalog; the cheapest region when
    none is given (the label says so)."""
    same = [o for o in offers if o.instance_type.lower() == instance_type.lower()]
    if not same:
        raise NotFoundError("instance type", instance_type, {o.instance_type for o in offers})
    if provider:
        same = [o for o in same if o.provider.lower() == provider.lower()]
        if not same:
            raise InputError(
                f"instance type {instance_type!r} is not sold by provider {provider!r}"
            )
    if region:
        in_region = [o for o in same if o.region.lower() == region.lower()]
        if not in_region:
            raise NotFoundError("region", region, {o.region for o in same})
        same = in_region
    priced = [
        (p, o)
        for o in same
        if (p := o.spot_price_usd_per_hour if spot else o.price_usd_per_hour) is not None
    ]
    if not priced:
        kind = "spot" if spot else "on-demand"
        raise InputError(
            f"the catalog has no {kind} price for {instance_type!r}; give --price-usd-per-hour"
        )
    price, offer = min(priced, key=lambda pair: pair[0])
    where = (
        offer.region
        if region or len(priced) == 1
        else f"{offer.region}, cheapest of {len(priced)} regions"
    )
    return InstancePrice(
        label=f"{offer.provider} {offer.instance_type} ({where})",
        price_usd_per_hour=price,
        gpu_count=offer.gpu_count,
        source=f"catalog {offer.key}{' spot' if spot else ''} as of {offer.as_of or 'unknown'}",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class CostReport:
    """What the watched time cost in USD, how much went to idle or under-used GPUs, per month."""

    label: str
    price_usd_per_hour: float
    gpu_count: int
    elapsed_s: float
    spent_usd: float
    idle_wasted_usd: float
    underused_wasted_usd: float
    projected_monthly_usd: float
    wasted_share: float  # (idle + under-used waste) / spent
    activity_source: str  # what "under-used" was measured with


RECENT_GAPS = 1_000  # the last sample stands for the median of this many most recent intervals


class CostMeter:
    """The running cost meter of a monitor session: `add` each sample as it comes, `report` at
    any time, both O(1) in the session's length (a day at 1 Hz with 8 GPUs costs the same per
    refresh as a minute).

    Each sample stands for the time until the next one; the latest stands for the median of the
    last `RECENT_GAPS` intervals. Waste is kept in GPU-seconds and priced when reported, so a
    GPU count learnt from later samples prices the whole session alike."""

    __slots__ = (
        "_gaps",
        "_idle_gpu_s",
        "_last",
        "_max_gpus",
        "_price",
        "_sources",
        "_thresholds",
        "_timed_s",
        "_under_gpu_s",
    )

    def __init__(self, price: InstancePrice, thresholds: Thresholds | None = None) -> None:
        self._price = price
        self._thresholds = thresholds or Thresholds()
        self._last: Sample | None = None
        self._gaps: deque[float] = deque(maxlen=RECENT_GAPS)
        self._timed_s = 0.0  # the intervals of every sample but the latest
        self._idle_gpu_s = 0.0
        self._under_gpu_s = 0.0  # GPU-seconds x (1 - activity)
        self._max_gpus = 0
        self._sources: set[str] = set()

    def add(self, sample: Sample) -> None:
        """Close the previous sample's interval at this one's time, then hold this one."""
        prev = self._last
        if prev is not None:
            gap_s = max(0.0, sample.timestamp_s - prev.timestamp_s)
            self._gaps.append(gap_s)
            idle, under = self._held(prev, gap_s)
            self._timed_s += gap_s
            self._idle_gpu_s += idle
            self._under_gpu_s += under
        self._last = sample
        self._max_gpus = max(self._max_gpus, len(sample.gpus))
        self._sources.update(
            "sm_util_pct" if g.sm_util_pct is not None else "gpu_busy_pct"
            for g in sample.gpus
            if not g.lost and g.activity_pct is not None
        )

    def _held(self, sample: Sample, dt_s: float) -> tuple[float, float]:
        """The (idle, under-used) GPU-seconds of `sample` held for `dt_s`."""
        idle = under = 0.0
        for g in sample.gpus:
            if g.lost:
                idle += dt_s  # paid for, doing nothing
                continue
            activity = g.activity_pct
            if activity is None:
                continue
            if is_idle(g, self._thresholds):
                idle += dt_s
            else:
                under += dt_s * max(0.0, 1.0 - activity / 100.0)
        return idle, under

    def report(self) -> CostReport:
        """Spent and wasted money over every sample added so far; a pure read (the exporter's
        or live view's reading changes nothing)."""
        price = self._price
        idle_s, under_s, elapsed_s = self._idle_gpu_s, self._under_gpu_s, self._timed_s
        if self._last is not None:  # the latest sample, held for the recent median interval
            last_s = statistics.median(self._gaps) if self._gaps else 0.0
            idle_add, under_add = self._held(self._last, last_s)
            idle_s, under_s, elapsed_s = idle_s + idle_add, under_s + under_add, elapsed_s + last_s
        gpu_count = price.gpu_count or self._max_gpus
        per_gpu_usd_per_s = (
            price.price_usd_per_hour / gpu_count / SECONDS_PER_HOUR if gpu_count else 0.0
        )
        spent = price.price_usd_per_hour * elapsed_s / SECONDS_PER_HOUR
        idle_usd, under_usd = idle_s * per_gpu_usd_per_s, under_s * per_gpu_usd_per_s
        return CostReport(
            label=price.label,
            price_usd_per_hour=price.price_usd_per_hour,
            gpu_count=gpu_count,
            elapsed_s=elapsed_s,
            spent_usd=spent,
            idle_wasted_usd=idle_usd,
            underused_wasted_usd=under_usd,
            projected_monthly_usd=price.price_usd_per_hour * HOURS_PER_MONTH,
            wasted_share=(idle_usd + under_usd) / spent if spent > 0 else 0.0,
            activity_source="+".join(sorted(self._sources)) or "none",
        )


def meter(
    samples: Sequence[Sample], price: InstancePrice, thresholds: Thresholds | None = None
) -> CostReport:
    """Spent and wasted money over `samples` at `price` (a `CostMeter` fed every sample)."""
    m = CostMeter(price, thresholds)
    for sample in samples:
        m.add(sample)
    return m.report()
