"""Checkpoint intervals: Young's and Daly's optima for exponential interruptions.

Both take the checkpoint cost delta (seconds to write one checkpoint, during which no progress is
made) and M, the mean time to interruption (seconds). Young (1974): tau = sqrt(2 delta M).
Daly (2006), a higher-order correction valid for delta < 2M:
tau = sqrt(2 delta M) * [1 + (1/3) sqrt(delta / 2M) + (1/9) (delta / 2M)] - delta, else tau = M.
Both assume exponentially distributed lifetimes; spot lifetimes are heavy tailed (see
`docs/spot.md`), so an interval fitted to a trace's empirical lifetimes is offered as well.
"""

from __future__ import annotations

import math

from gpurent.errors import InputError


def _check(checkpoint_cost_s: float, mtti_s: float) -> None:
    if not (checkpoint_cost_s > 0 and math.isfinite(checkpoint_cost_s)):
        raise InputError(
            f"checkpoint cost must be a positive number of seconds, got {checkpoint_cost_s}"
        )
    if not (mtti_s > 0):
        raise InputError(f"mean time to interruption must be positive, got {mtti_s} s")


def young_interval_s(checkpoint_cost_s: float, mtti_s: float) -> float:
    """Young's first-order optimal compute time between checkpoints, in seconds."""
    _check(checkpoint_cost_s, mtti_s)
    if math.isinf(mtti_s):
        return math.inf
    return math.sqrt(2.0 * checkpoint_cost_s * mtti_s)


def daly_interval_s(checkpoint_cost_s: float, mtti_s: float) -> float:
    """Daly's higher-order optimal compute time between checkpoints, in seconds."""
    _check(checkpoint_cost_s, mtti_s)
    if math.isinf(mtti_s):
        return math.inf
    if checkpoint_cost_s >= 2.0 * mtti_s:
        return mtti_s
    ratio = checkpoint_cost_s / (2.0 * mtti_s)
    base = math.sqrt(2.0 * checkpoint_cost_s * mtti_s)
    return base * (1.0 + math.sqrt(ratio) / 3.0 + ratio / 9.0) - checkpoint_cost_s
