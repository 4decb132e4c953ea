"""Availability confidence: is a spot or marketplace price too good to be capacity?

A list price is not capacity. Two signs that an offer may not be rentable at its price:

- a spot price far below the provider's own on-demand price for the same instance, or below
  the market's usual spot/on-demand ratio for that GPU (the median over the catalog's offers
  that list both prices);
- a marketplace listing (hosts set their own prices) far below the usual on-demand price per
  GPU of that GPU at the providers that are not marketplaces.

The confidence is the price ratio over the usual ratio, capped at 1 (1: a usual price; 0.3:
a price at 30% of the usual), and at most 0.5 (the flag line) for a price 70% below the
reference, whatever the market. It is a heuristic from the catalog alone; where there is no
usual ratio to compare with, there is no confidence (None) and `--min-availability` lets the
offer pass. Pure: offers in, frozen results out.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from gpurent.catalog.offer import Offer
from gpurent.plan.constraints import PricingModel

MARKETPLACES = frozenset({"vast"})
"""Providers whose on-demand prices are hosts' own listings, not a provider's price list."""

FLAG_CONFIDENCE = 0.5  # flagged below half the usual ratio
FLAG_DISCOUNT = 0.7  # or at 70% or more off the provider's own on-demand price


@dataclass(frozen=True, slots=True, kw_only=True)
class Availability:
    """How far an offer's price departs from the usual, and the flag a plan shows for it."""

    confidence: float | None  # 0-1; None where no usual ratio is known
    discount_vs_on_demand: float | None  # 1 - price / the reference on-demand price
    usual_discount: float | None  # the market's usual discount for this GPU
    flag: str  # "" when nothing looks unusual
    basis: str  # what the price was compared with


NO_DATA = Availability(
    confidence=None,
    discount_vs_on_demand=None,
    usual_discount=None,
    flag="",
    basis="on-demand or reserved list price: no comparison",
)


@dataclass(frozen=True, slots=True)
class Market:
    """The catalog's usual ratios per GPU."""

    spot_ratio: dict[str, float]  # GPU -> median spot / on-demand
    od_per_gpu: dict[str, float]  # GPU -> median on-demand $/GPU-h outside marketplaces


def market(offers: Sequence[Offer]) -> Market:
    """Spot-to-on-demand price ratios and on-demand USD per GPU-hour per GPU, from the offers."""
    spot: dict[str, list[float]] = defaultdict(list)
    od: dict[str, list[float]] = defaultdict(list)
    for o in offers:
        if o.price_usd_per_hour and o.spot_price_usd_per_hour:
            spot[o.gpu_name].append(o.spot_price_usd_per_hour / o.price_usd_per_hour)
        if o.price_usd_per_hour and o.provider not in MARKETPLACES and o.gpu_count > 0:
            od[o.gpu_name].append(o.price_usd_per_hour / o.gpu_count)
    return Market(
        spot_ratio={g: statistics.median(v) for g, v in spot.items()},
        od_per_gpu={g: statistics.median(v) for g, v in od.items()},
    )


def _judge(ratio: float, usual: float | None, what: str, basis: str) -> Availability:
    discount = 1.0 - ratio
    usual_discount = None if usual is None else 1.0 - usual
    confidence = None
    if usual is not None and usual > 0:
        # the ratio over the usual one, and never above the flag line at FLAG_DISCOUNT off
        # the reference price (a market of one cheap offer is no evidence of capacity)
        at_flag = ratio / (1.0 - FLAG_DISCOUNT) * FLAG_CONFIDENCE
        confidence = min(1.0, ratio / usual, at_flag)
    flagged = discount >= FLAG_DISCOUNT or (confidence is not None and confidence < FLAG_CONFIDENCE)
    flag = ""
    if flagged:
        usual_text = f"; usual {usual_discount:.0%} off" if usual_discount else ""
        flag = f"verify capacity; {what} {discount:.0%} off{usual_text}"
    return Availability(
        confidence=confidence,
        discount_vs_on_demand=discount,
        usual_discount=usual_discount,
        flag=flag,
        basis=basis,
    )


def availability(offer: Offer, pricing: PricingModel, m: Market) -> Availability:
    """The offer's availability confidence under `pricing` (see the module doc)."""
    if pricing is PricingModel.SPOT:
        spot, od = offer.spot_price_usd_per_hour, offer.price_usd_per_hour
        if spot is None or not od:
            return NO_DATA
        usual = m.spot_ratio.get(offer.gpu_name)
        return _judge(
            spot / od,
            usual,
            "spot",
            f"spot against {offer.provider}'s on-demand price and the median spot/on-demand "
            f"ratio of {offer.gpu_name} offers in the catalog",
        )
    if pricing is PricingModel.ON_DEMAND and offer.provider in MARKETPLACES:
        price = offer.price_usd_per_gpu_hour
        usual_od = m.od_per_gpu.get(offer.gpu_name)
        if price is None or usual_od is None:
            return NO_DATA
        ratio = price / usual_od
        return _judge(
            ratio,
            1.0,
            "marketplace price",
            f"marketplace listing against the median on-demand $/GPU-h of {offer.gpu_name} at "
            "providers that are not marketplaces",
        )
    return NO_DATA
