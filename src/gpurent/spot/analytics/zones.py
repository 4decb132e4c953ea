"""Which zones to spread spot work over: availability, lifetimes, correlation, best subset.

From aligned per-zone traces (same tick gap, truncated to the shortest), this computes per zone
the share of ticks with capacity and a lifetime summary (Kaplan-Meier, heavy tails), the pairwise
phi coefficient of *unavailability* (Pearson correlation of two 0/1 series: +1 = the zones dry
up together, 0 = unrelated), and an exhaustive search over all zone subsets of size k for the
one with the smallest measured P(all unavailable at the same tick). That probability is counted
on the aligned ticks, not assumed: the independence product is reported beside it, to show how
far correlation moves the answer. Unavailability masks are Python ints used as bitsets, so a
subset's joint outage is one AND and one popcount.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from gpurent.errors import InputError
from gpurent.spot.analytics.survival import LifetimeSummary, lifetimes_from_trace, summarize
from gpurent.spot.io.trace import Trace, align_zones

MAX_SUBSETS = 2_000_000


@dataclass(frozen=True, slots=True, kw_only=True)
class ZoneStats:
    """One zone: share of ticks with >= `nodes` instances, and its lifetimes (None if never up)."""

    name: str
    availability: float
    lifetimes: LifetimeSummary | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ZonePair:
    """Phi coefficient of unavailability for two zones (None when one never changes)."""

    zone_a: str
    zone_b: str
    phi: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ZoneSet:
    """A subset of zones with its measured and independence-assumed P(all unavailable)."""

    zones: tuple[str, ...]
    p_all_unavailable: float
    p_all_unavailable_if_independent: float


@dataclass(frozen=True, slots=True, kw_only=True)
class ZoneReport:
    """Everything `gpurent spot zones` prints. `ranked` holds the best few subsets, best first."""

    ticks: int
    gap_hours: float
    nodes: int
    set_size: int
    zones: tuple[ZoneStats, ...]
    pairs: tuple[ZonePair, ...]
    recommended: ZoneSet
    ranked: tuple[ZoneSet, ...]
    subsets_searched: int
    notes: tuple[str, ...]


def _mask(trace: Trace, nodes: int) -> int:
    """Bit i set when the zone lacks `nodes` instances at tick i."""
    bits = "".join("1" if v < nodes else "0" for v in reversed(trace.available))
    return int(bits, 2) if bits else 0


def phi_coefficient(a: int, b: int, ticks: int) -> float | None:
    """Pearson correlation of two 0/1 series given as bitsets over `ticks` ticks."""
    n11 = (a & b).bit_count()
    n1_ = a.bit_count()
    n_1 = b.bit_count()
    n10, n01 = n1_ - n11, n_1 - n11
    n00 = ticks - n11 - n10 - n01
    den = n1_ * (ticks - n1_) * n_1 * (ticks - n_1)
    if den == 0:
        return None
    return (n11 * n00 - n10 * n01) / math.sqrt(den)


DEFAULT_SET_SIZE = 3  # zones to spread over when --size is not given (fewer if fewer given)


def analyse_zones(
    traces: Sequence[Trace], *, set_size: int | None = None, nodes: int = 1, top: int = 5
) -> ZoneReport:
    """Per-zone availability and lifetimes, pairwise phi, and the best `set_size` zones
    (default: min(3, zones given))."""
    if nodes < 1:
        raise InputError(f"--nodes must be >= 1, got {nodes}")
    aligned = align_zones(traces)
    zones = aligned.traces
    if set_size is None:
        set_size = min(DEFAULT_SET_SIZE, len(zones))
    if not 1 <= set_size <= len(zones):
        raise InputError(
            f"--size {set_size} needs at least that many zones; {len(zones)} given "
            f"({', '.join(t.name for t in zones)})"
        )
    n_subsets = math.comb(len(zones), set_size)
    if n_subsets > MAX_SUBSETS:
        raise InputError(
            f"{n_subsets} subsets of {set_size} among {len(zones)} zones is too many to search; "
            "pass fewer zones or a smaller --size"
        )
    ticks = aligned.ticks
    masks = [_mask(t, nodes) for t in zones]
    p_down = [m.bit_count() / ticks for m in masks]
    stats = []
    for tr in zones:
        lives = lifetimes_from_trace(tr, nodes)
        stats.append(
            ZoneStats(
                name=tr.name,
                availability=tr.availability_fraction(nodes),
                lifetimes=summarize(lives) if lives else None,
            )
        )
    pairs = tuple(
        ZonePair(
            zone_a=zones[i].name,
            zone_b=zones[j].name,
            phi=phi_coefficient(masks[i], masks[j], ticks),
        )
        for i, j in itertools.combinations(range(len(zones)), 2)
    )
    sets: list[ZoneSet] = []
    for combo in itertools.combinations(range(len(zones)), set_size):
        joint = masks[combo[0]]
        for k in combo[1:]:
            joint &= masks[k]
        sets.append(
            ZoneSet(
                zones=tuple(zones[k].name for k in combo),
                p_all_unavailable=joint.bit_count() / ticks,
                p_all_unavailable_if_independent=math.prod(p_down[k] for k in combo),
            )
        )
    sets.sort(key=lambda s: (s.p_all_unavailable, s.p_all_unavailable_if_independent, s.zones))
    return ZoneReport(
        ticks=ticks,
        gap_hours=aligned.gap_hours,
        nodes=nodes,
        set_size=set_size,
        zones=tuple(stats),
        pairs=pairs,
        recommended=sets[0],
        ranked=tuple(sets[:top]),
        subsets_searched=len(sets),
        notes=aligned.notes,
    )
