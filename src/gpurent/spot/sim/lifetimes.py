"""Online spot lifetime estimates from the trace so far (no look-ahead).

A spell is a maximal run of ticks in which a zone is usable; its length is the lifetime of a
spot instance taken at its start. Spot lifetimes are heavy tailed (RESEARCH: mean 2-7x the
median on AWS V100, 2023), so the age of the current spell predicts its remaining life: the
mean residual life E[L - a | L > a] is estimated from the spells that ended before now.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

IntArr = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ZoneSpells:
    """One zone's spells: start tick, end tick (exclusive, the first unusable tick), length."""

    starts: IntArr
    ends: IntArr
    lengths: IntArr
    spell_start_at: IntArr
    """For each tick, the start of the spell containing it (-1 where unusable)."""
    ended_by: IntArr
    """For each tick t, how many spells had ended by t (`ends <= t`): the past spells' count."""
    length_sums: IntArr
    """length_sums[n]: total length of the first n spells (prefix sums, length spells + 1)."""


def zone_spells(usable: npt.NDArray[np.bool_]) -> ZoneSpells:
    """Spells of one zone's usability series."""
    u = usable.astype(np.int8)
    edges = np.diff(np.concatenate([[0], u, [0]]))
    starts = np.flatnonzero(edges == 1).astype(np.int64)
    ends = np.flatnonzero(edges == -1).astype(np.int64)
    at = np.full(len(u), -1, dtype=np.int64)
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        at[s:e] = s
    # A spell cut by the end of the trace never ended in view: keep it out of the samples.
    closed = ends < len(u)
    lengths = (ends - starts)[closed]
    return ZoneSpells(
        starts=starts[closed],
        ends=ends[closed],
        lengths=lengths,
        spell_start_at=at,
        ended_by=np.searchsorted(ends[closed], np.arange(len(u)), side="right").astype(np.int64),
        length_sums=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
    )


Outliving = tuple[int, IntArr] | None
"""(age of the spell holding a tick, lengths of the past spells that outlived that age), or
None where the zone is not usable then: what every residual-life estimate here starts from."""


def outliving(spells: ZoneSpells, now: int) -> Outliving:
    """(age of the spell holding tick `now`, lengths of the spells that ended by `now` and
    outlived that age); None where the zone is not usable at `now`. Past spells only."""
    start = int(spells.spell_start_at[now])
    if start < 0:
        return None
    age = now - start + 1
    lengths = spells.lengths[: int(spells.ended_by[now])]
    return age, lengths[lengths > age]


def mean_residual_ticks(spells: ZoneSpells, now: int, min_samples: int = 5) -> float:
    """Expected usable ticks left after tick `now` in the spell holding it, from spells that
    ended by `now`; with fewer than `min_samples` of them longer than the current age, the age
    itself (heavy tails: the longer a spell has lasted, the longer it tends to last)."""
    return mean_residual_of(outliving(spells, now), min_samples)


def mean_residual_of(found: Outliving, min_samples: int = 5) -> float:
    """`mean_residual_ticks` from its `outliving` (so a policy computes that once a tick)."""
    if found is None:
        return 0.0
    age, longer = found
    if len(longer) < min_samples:
        return float(age)
    return float(longer.sum()) / len(longer) - age  # the mean, as exact (integer sum)


def residual_bounds_ticks(
    spells: ZoneSpells, now: int, z_score: float, min_samples: int = 10
) -> tuple[float, float]:
    """A confidence interval (low, high) on the remaining usable ticks after `now` in the spell
    holding it: mean residual E[L - a | L > a] of the spells that ended by `now` and outlived
    the current age a, +- `z_score` standard errors. With fewer than `min_samples` such spells
    the interval is (0, inf): no evidence, so it separates this zone from no other."""
    found = outliving(spells, now)
    if found is None:
        return 0.0, 0.0
    age, longer = found
    n = len(longer)
    if n < min_samples:
        return 0.0, float("inf")
    mean = float(longer.mean()) - age
    half = z_score * float(longer.std(ddof=1)) / float(np.sqrt(n))
    return max(0.0, mean - half), mean + half


def spell_totals(spells: ZoneSpells, now: int) -> tuple[int, int]:
    """(spells that ended by tick `now`, their total usable ticks): one zone's contribution to
    the pooled mean spell length `sum ticks / sum spells` (the inverse preemption rate per
    usable tick), from the past only."""
    seen = int(spells.ended_by[now])
    return seen, int(spells.length_sums[seen])


def capped_residual_ticks(
    spells: ZoneSpells, now: int, cap_ticks: float, min_samples: int = 10
) -> float | None:
    """E[min(L - a, cap) | L > a]: the remaining usable ticks after tick `now` in the spell
    holding it, capped at `cap_ticks` (e.g. the work left), averaged over the spells that ended
    by `now` and outlived the current age a; 0 where the zone is not usable at `now`; None
    (no evidence) with fewer than `min_samples` such spells."""
    return capped_residual_of(outliving(spells, now), cap_ticks, min_samples)


def capped_residual_of(found: Outliving, cap_ticks: float, min_samples: int = 10) -> float | None:
    """`capped_residual_ticks` from its `outliving` (computed once a tick by a policy)."""
    if found is None:
        return 0.0
    age, longer = found
    if len(longer) < min_samples:
        return None
    capped = np.minimum(longer - age, cap_ticks)
    return float(capped.sum()) / len(capped)  # the mean: the same reduction, faster
