"""The small hand-written markets of the policy tests: one availability list per zone."""

from __future__ import annotations

from gpurent.spot.io.trace import Trace, align_zones
from gpurent.spot.sim.job_market import Market, build_market

GAP = 0.1  # hours per tick


def market(*zones: list[int], k: float = 3.0) -> Market:
    """A market of `zones` (1 = spot available that tick) at spot price ratio `k`."""
    traces = [Trace(name=f"z{i}", gap_hours=GAP, available=tuple(v)) for i, v in enumerate(zones)]
    return build_market(align_zones(traces), price_ratio=k)
