"""The cost meter: money spent, money wasted on idle or under-used GPU time, monthly projection.

Pure. The instance price comes from the catalog (`price_from_catalog`, by instance type and
optionally provider and region) or is given (`InstancePrice.given`). Cloud-metadata detection of
the instance type is not done: the user names it.

Method: each sample stands for the time until the next one (the last for the median interval).
A GPU's share of the instance price is price / GPU count. Idle waste is the full share during
idle samples. Under-use waste is the share times (1 - activity) during non-idle samples, where
activity is SM utilisation (GPM) or, without it, busy % — then under-use is underestimated,
since busy % overstates activity.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from gpurent.catalog import Offer
from gpurent.errors import InputError, NotFoundError
from gpurent.monitor.rules import Thresholds, is_idle
from gpurent.monitor.sample import Sample
from gpurent.units import HOURS_PER_MONTH, SECONDS_PER_HOUR


@dataclass(frozen=True, slots=True, kw_only=True)
class InstancePrice:
    label: str
    price_usd_per_hour: float  # the whole instance, on demand unless said otherwise
    gpu_count: int | None  # None: take it from the samples
    source: str

    @staticmethod
    def given(price_usd_per_hour: float, gpu_count: int | None = None) -> InstancePrice:
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


def _intervals_s(samples: Sequence[Sample]) -> list[float]:
    gaps = [b.timestamp_s - a.timestamp_s for a, b in itertools.pairwise(samples)]
    last = statistics.median(gaps) if gaps else 0.0
    return [*gaps, last]


def meter(
    samples: Sequence[Sample], price: InstancePrice, thresholds: Thresholds | None = None
) -> CostReport:
    """Spent and wasted money over `samples` at `price`."""
    t = thresholds or Thresholds()
    gpu_count = price.gpu_count or max((len(s.gpus) for s in samples), default=0)
    per_gpu_usd_per_s = (
        price.price_usd_per_hour / gpu_count / SECONDS_PER_HOUR if gpu_count else 0.0
    )
    idle_usd = under_usd = 0.0
    elapsed_s = 0.0
    sources: set[str] = set()
    for sample, dt_s in zip(samples, _intervals_s(samples), strict=True):
        elapsed_s += dt_s
        for g in sample.gpus:
            if g.lost:
                idle_usd += per_gpu_usd_per_s * dt_s  # paid for, doing nothing
                continue
            activity = g.activity_pct
            if activity is None:
                continue
            sources.add("sm_util_pct" if g.sm_util_pct is not None else "gpu_busy_pct")
            if is_idle(g, t):
                idle_usd += per_gpu_usd_per_s * dt_s
            else:
                under_usd += per_gpu_usd_per_s * dt_s * max(0.0, 1.0 - activity / 100.0)
    spent = price.price_usd_per_hour * elapsed_s / SECONDS_PER_HOUR
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
        activity_source="+".join(sorted(sources)) or "none",
    )
