"""The small hand-written markets of the policy tests: one availability list per zone."""

from __future__ import annotations

from gpurent.spot.io.trace import Trace, align_zones
from gpurent.spot.sim.job_market import Market, build_market

GAP = 0.1  # hours per tick


def market(*zones: list[int], k: float = 3.0) -> Market:
    """A market of `zones` (1 = spot available that tick) at spot price ratio `k`."""
    traces = [Trace(name=f"z{i}", gap_hours=GAP, available=tuple(v)) for i, v in enumerate(zones)]
    return build_market(align_zones(traces), price_ratio=k)


def first_zone(m: Market) -> Market:
    """The same market with its first zone only (the policies' one-zone behaviour)."""
    return Market(
        zone_names=m.zone_names[:1],
        gap_hours=m.gap_hours,
        usable=m.usable[:1],
        spot_usd_per_hour=m.spot_usd_per_hour[:1],
        on_demand_usd_per_hour=m.on_demand_usd_per_hour,
    )
