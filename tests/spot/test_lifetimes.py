"""Online lifetime estimates: confidence bounds use only spells that ended before now."""

from __future__ import annotations

import math

import numpy as np

from gpurent.spot.sim.lifetimes import residual_bounds_ticks, zone_spells


def _series(spell_lengths: list[int], tail: int) -> np.ndarray:
    parts: list[int] = []
    for n in spell_lengths:
        parts += [1] * n + [0]
    return np.array(parts + [1] * tail, dtype=np.bool_)


def test_bounds_need_evidence_then_bracket_the_mean_residual() -> None:
    lengths = [10, 20, 30, 40, 50, 10, 20, 30, 40, 50, 10, 20]
    usable = _series(lengths, tail=3)
    spells = zone_spells(usable)
    now = len(usable) - 1  # age 3 in the current (open) spell
    lo, hi = residual_bounds_ticks(spells, now, z_score=2.0, min_samples=20)
    assert (lo, hi) == (0.0, math.inf)
    lo, hi = residual_bounds_ticks(spells, now, z_score=2.0, min_samples=5)
    mean = float(np.mean(lengths)) - 3
    assert lo < mean < hi
    assert hi - lo > 0
    # Wider with a larger z; unusable now -> nothing left.
    lo3, hi3 = residual_bounds_ticks(spells, now, z_score=3.0, min_samples=5)
    assert lo3 <= lo and hi3 >= hi
    assert residual_bounds_ticks(spells, lengths[0], z_score=2.0) == (0.0, 0.0)


def test_bounds_ignore_spells_that_end_after_now() -> None:
    usable = _series([5] * 12 + [500], tail=0)
    spells = zone_spells(usable)
    now = 12 * 6 + 2  # inside the long spell, before it ends
    _, hi = residual_bounds_ticks(spells, now, z_score=2.0, min_samples=5)
    assert hi < 10  # the 500-tick spell has not ended: not a sample yet
