"""Spot availability traces: one zone's instance counts (and optionally spot prices) per tick.

A trace is what a prober saw in one zone every `gap_hours`: how many spot instances could be
obtained at each tick (0 = none), and optionally the spot price then, in $/h per instance.
This is the input model of "Can't Be Late" (Wu et al., NSDI'24), whose public traces are
probes of AWS p3.2xlarge every ~195 s. Parsing files lives in `trace_io`; this module is pure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from gpurent.errors import DataError


@dataclass(frozen=True, slots=True, kw_only=True)
class Trace:
    """One zone's spot availability, tick by tick.

    `available[i]` is the number of spot instances obtainable at tick i (a job needing N nodes
    can run there only if it is >= N: all-or-none). `price_usd_per_hour[i]`, when known, is the
    spot price per instance at tick i. `on_demand_usd_per_hour` is the on-demand price of the
    same instance when the source states it. Tick i starts at `start_time + i * gap_hours`.
    """

    name: str
    gap_hours: float
    available: tuple[int, ...]
    price_usd_per_hour: tuple[float, ...] | None = None
    on_demand_usd_per_hour: float | None = None
    start_time: datetime | None = None

    def __post_init__(self) -> None:
        where = f"trace {self.name!r}"
        if not self.available:
            raise DataError(f"{where} has no ticks; give a trace with at least one sample")
        if not (math.isfinite(self.gap_hours) and self.gap_hours > 0):
            raise DataError(f"{where}: tick gap must be a positive number of hours")
        if any(v < 0 for v in self.available):
            raise DataError(f"{where}: availability counts must be >= 0")
        prices = self.price_usd_per_hour
        if prices is not None:
            if len(prices) != len(self.available):
                raise DataError(
                    f"{where}: {len(prices)} prices for {len(self.available)} ticks; "
                    "give one price per tick"
                )
            if not all(math.isfinite(p) and p >= 0 for p in prices):
                raise DataError(f"{where}: prices must be finite and >= 0 $/h")
        od = self.on_demand_usd_per_hour
        if od is not None and not (math.isfinite(od) and od > 0):
            raise DataError(f"{where}: on-demand price must be > 0 $/h, got {od}")

    @property
    def ticks(self) -> int:
        """Number of ticks."""
        return len(self.available)

    @property
    def duration_hours(self) -> float:
        """Hours covered by the trace (ticks x gap)."""
        return self.ticks * self.gap_hours

    def availability_fraction(self, nodes: int = 1) -> float:
        """Share of ticks at which `nodes` spot instances could be had."""
        return sum(1 for v in self.available if v >= nodes) / self.ticks

    def truncated(self, ticks: int) -> Trace:
        """The first `ticks` ticks of this trace."""
        prices = self.price_usd_per_hour
        return Trace(
            name=self.name,
            gap_hours=self.gap_hours,
            available=self.available[:ticks],
            price_usd_per_hour=None if prices is None else prices[:ticks],
            on_demand_usd_per_hour=self.on_demand_usd_per_hour,
            start_time=self.start_time,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class AlignedZones:
    """Several zones' traces aligned tick by tick (same length, same gap)."""

    traces: tuple[Trace, ...]
    notes: tuple[str, ...] = ()

    @property
    def ticks(self) -> int:
        """Number of ticks in each aligned trace."""
        return self.traces[0].ticks

    @property
    def gap_hours(self) -> float:
        """Hours between two ticks."""
        return self.traces[0].gap_hours


def align_zones(traces: Sequence[Trace], gap_tolerance: float = 0.05) -> AlignedZones:
    """Align zones tick by tick: truncate all to the shortest, and require the same gap.

    Gaps may differ by `gap_tolerance` (relative) as probes drift; the first trace's gap is
    used. Truncation is reported in `notes` so the caller can warn the user.
    """
    if not traces:
        raise DataError("no trace given; pass at least one --trace FILE")
    gap = traces[0].gap_hours
    for tr in traces[1:]:
        if abs(tr.gap_hours - gap) > gap_tolerance * gap:
            raise DataError(
                f"trace {tr.name!r} has ticks every {tr.gap_hours * 3600:.0f} s but "
                f"{traces[0].name!r} every {gap * 3600:.0f} s; zones must share a tick gap"
            )
    shortest = min(tr.ticks for tr in traces)
    notes: list[str] = []
    names = [tr.name for tr in traces]
    if len(set(names)) != len(names):
        raise DataError(f"zone names repeat ({', '.join(names)}); give each zone once")
    out: list[Trace] = []
    for tr in traces:
        if tr.ticks > shortest:
            notes.append(
                f"trace {tr.name!r} truncated from {tr.ticks} to {shortest} ticks "
                "to align with the shortest zone"
            )
            tr = tr.truncated(shortest)
        out.append(tr)
    return AlignedZones(traces=tuple(out), notes=tuple(notes))


def combine_nodes(traces: Sequence[Trace], name: str) -> Trace:
    """One zone from per-node traces: the count at a tick is how many of the nodes' traces
    have spot then, so a job on N nodes runs only while all N are held ("Can't Be Late",
    section 5.3: one lost node stops the job). Traces are aligned first (`align_zones`);
    prices, when every node has them, are the mean per node."""
    aligned = align_zones(traces)
    rows = [tr.available for tr in aligned.traces]
    counts = tuple(sum(1 for v in col if v > 0) for col in zip(*rows, strict=True))
    priced = [tr.price_usd_per_hour for tr in aligned.traces]
    prices = None
    if all(p is not None for p in priced):
        cols = zip(*[p for p in priced if p is not None], strict=True)
        prices = tuple(sum(col) / len(traces) for col in cols)
    first = aligned.traces[0]
    return Trace(
        name=name,
        gap_hours=first.gap_hours,
        available=counts,
        price_usd_per_hour=prices,
        on_demand_usd_per_hour=first.on_demand_usd_per_hour,
        start_time=first.start_time,
    )
