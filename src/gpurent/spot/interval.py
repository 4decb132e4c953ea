"""Checkpoint intervals: Young's and Daly's optima for exponential interruptions.

Both take the checkpoint cost delta (seconds to write one checkpoint, during which no progress is
made) and M, the mean time to interruption (seconds). Young (1974): tau = sqrt(2 delta M).
Daly (2006), a higher-order correction valid for delta < 2M:
tau = sqrt(2 delta M) * [1 + (1/3) sqrt(delta / 2M) + (1/9) (delta / 2M)] - delta, else tau = M.
Both assume exponentially distributed lifetimes; spot lifetimes are heavy tailed (see
`docs/spot-analytics.md`), so an interval fitted to a trace's empirical lifetimes is offered as
well: `interval_from_lifetimes_s` minimises the expected overhead by exact summation over the
Kaplan-Meier distribution of the observed (possibly censored) lifetimes.

Overhead model (renewal-reward over one instance life of length L): the first `restart_s` of each
life reload the last checkpoint; then cycles of tau seconds of work followed by delta seconds of
checkpoint. Work is kept only when its checkpoint completed before the interruption, so one life
keeps W(L) = tau * floor((L - R) / (tau + delta)). The overhead per unit of useful work is
E[L] / E[W] - 1 (paid seconds that were not useful, per useful second), split into checkpoint
time, restart time and lost work. For exponential L this is minimised near Young/Daly.
The 2-minute interruption notice is not used (a conservative choice).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpurent.errors import InputError

if TYPE_CHECKING:  # imported where used: pricing a plan's spot overhead needs none of it
    from gpurent.spot.analytics.survival import Survival

GUIDE_FIXED_INTERVAL_S = 15 * 60.0
"""The guide's rule of thumb: a checkpoint every 15 minutes."""


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


@dataclass(frozen=True, slots=True, kw_only=True)
class Overhead:
    """Expected overhead of checkpointing every `interval_s`, per second of useful work.

    `total` = checkpoint + restart + lost_work (e.g. 0.08 = the job takes 8% more paid time than
    its pure compute). `slowdown` = 1 + total, the factor to apply to a spot price to get its
    effective price per hour of useful work.
    """

    interval_s: float
    total: float
    checkpoint: float
    restart: float
    lost_work: float

    @property
    def slowdown(self) -> float:
        """Factor by which checkpointing stretches the run: 1 + overhead per second of work."""
        return 1.0 + self.total


@dataclass(frozen=True, slots=True, kw_only=True)
class IntervalChoice:
    """The empirical optimum next to Young, Daly and the guide's fixed 15 minutes.

    Every overhead is evaluated on the same empirical (Kaplan-Meier) distribution, so the
    comparison says what each rule would cost on this trace. `mtti_s` is the censoring-aware
    exponential MTTI (observed time / interruptions) fed to Young and Daly.
    """

    checkpoint_cost_s: float
    restart_s: float
    mtti_s: float
    best: Overhead
    young: Overhead
    daly: Overhead
    fixed_15min: Overhead
    lifetimes: int
    censored: int


def _check_overhead_args(interval_s: float, checkpoint_cost_s: float, restart_s: float) -> None:
    if not (interval_s > 0 and math.isfinite(interval_s)):
        raise InputError(
            f"checkpoint interval must be a positive number of seconds, got {interval_s}"
        )
    if not (checkpoint_cost_s >= 0 and math.isfinite(checkpoint_cost_s)):
        raise InputError(f"checkpoint cost must be >= 0 seconds, got {checkpoint_cost_s}")
    if not (restart_s >= 0 and math.isfinite(restart_s)):
        raise InputError(f"restart time must be >= 0 seconds, got {restart_s}")


def overhead_exponential(
    interval_s: float, checkpoint_cost_s: float, mtti_s: float, restart_s: float = 0.0
) -> Overhead:
    """Exact expected overhead for exponentially distributed lifetimes with mean `mtti_s`."""
    _check_overhead_args(interval_s, checkpoint_cost_s, restart_s)
    if not mtti_s > 0:
        raise InputError(f"mean time to interruption must be positive, got {mtti_s} s")
    cycle = interval_s + checkpoint_cost_s
    if math.isinf(mtti_s):
        return Overhead(
            interval_s=interval_s,
            total=checkpoint_cost_s / interval_s,
            checkpoint=checkpoint_cost_s / interval_s,
            restart=0.0,
            lost_work=0.0,
        )
    q = math.exp(-cycle / mtti_s)
    cycles = math.exp(-restart_s / mtti_s) * q / -math.expm1(-cycle / mtti_s)
    restart = -mtti_s * math.expm1(-restart_s / mtti_s)
    return _shares(
        interval_s,
        life_s=mtti_s,
        work_s=interval_s * cycles,
        ckpt_s=checkpoint_cost_s * cycles,
        restart_s=restart,
    )


def _shares(
    interval_s: float, *, life_s: float, work_s: float, ckpt_s: float, restart_s: float
) -> Overhead:
    """Overhead as shares of useful work, from an expected life split into work, checkpoints,
    restarts and (the rest) lost work; infinite when no work gets done."""
    if work_s <= 0:
        return Overhead(
            interval_s=interval_s,
            total=math.inf,
            checkpoint=math.inf,
            restart=math.inf,
            lost_work=math.inf,
        )
    lost = max(life_s - work_s - ckpt_s - restart_s, 0.0)
    return Overhead(
        interval_s=interval_s,
        total=(ckpt_s + restart_s + lost) / work_s,
        checkpoint=ckpt_s / work_s,
        restart=restart_s / work_s,
        lost_work=lost / work_s,
    )


def overhead_empirical(
    interval_s: float, checkpoint_cost_s: float, survival: Survival, restart_s: float = 0.0
) -> Overhead:
    """Expected overhead over a Kaplan-Meier lifetime distribution (exact sum over its masses).

    Lives still running at the horizon (the longest observed lifetime) end there without loss
    (the trace ended, not the instance), so their work counts pro rata.
    """
    _check_overhead_args(interval_s, checkpoint_cost_s, restart_s)
    cycle = interval_s + checkpoint_cost_s
    masses: list[tuple[float, float, bool]] = []
    times = survival.times_h
    for i in range(1, len(times)):
        masses.append((times[i] * 3600.0, survival.survival[i - 1] - survival.survival[i], True))
    tail = survival.survival[-1]
    if tail > 0:
        masses.append((survival.horizon_h * 3600.0, tail, False))
    life = work = ckpt = restart = 0.0
    for t_s, p, interrupted in masses:
        run_s = max(t_s - restart_s, 0.0)
        n = math.floor(run_s / cycle) if interrupted else run_s / cycle
        life += p * t_s
        work += p * interval_s * n
        ckpt += p * checkpoint_cost_s * n
        restart += p * min(t_s, restart_s)
    return _shares(interval_s, life_s=life, work_s=work, ckpt_s=ckpt, restart_s=restart)


def _minimise(fn: Callable[[float], float], lo_s: float, hi_s: float) -> float:
    """Argmin over a log grid then a finer linear grid around the best point (robust to steps)."""
    points = 240
    ratio = (hi_s / lo_s) ** (1.0 / (points - 1))
    grid: list[float] = [lo_s * ratio**i for i in range(points)]
    values = [fn(x) for x in grid]
    k = min(range(points), key=values.__getitem__)
    a, b = grid[max(k - 1, 0)], grid[min(k + 1, points - 1)]
    fine = [a + (b - a) * i / 120 for i in range(121)]
    return float(min(fine, key=fn))


def interval_from_lifetimes_s(
    checkpoint_cost_s: float,
    lifetimes_h: Sequence[float],
    *,
    censored: Sequence[bool] | None = None,
    restart_s: float = 0.0,
) -> IntervalChoice:
    """The checkpoint interval minimising expected overhead on observed spot lifetimes.

    `lifetimes_h`: observed lifetimes in hours (e.g. runs of availability in a trace);
    `censored[i]` marks lifetimes whose end was not observed (still running at trace end).
    `checkpoint_cost_s`: seconds of lost progress per checkpoint; `restart_s`: seconds from a
    new instance to resumed training (provisioning + loading). Returns the empirical optimum
    (`best.interval_s`) and, on the same distribution, the overhead of Young, Daly (fed the
    censoring-aware MTTI) and of the guide's fixed 15 minutes.
    """
    from gpurent.spot.analytics.survival import kaplan_meier, lifetimes_from_hours

    _check(checkpoint_cost_s, 1.0)
    _check_overhead_args(1.0, checkpoint_cost_s, restart_s)
    lives = lifetimes_from_hours(lifetimes_h, censored)
    km = kaplan_meier(lives)
    events = km.events
    total_h = sum(x.duration_h for x in lives)
    mtti_s = math.inf if events == 0 else total_h / events * 3600.0

    def cost(tau: float) -> float:
        return overhead_empirical(tau, checkpoint_cost_s, km, restart_s).total

    hi = max(km.horizon_h * 3600.0, 2.0 * checkpoint_cost_s, 120.0)
    lo = max(min(checkpoint_cost_s / 20.0, hi / 1000.0), 1.0)
    best = _minimise(cost, lo, hi)
    young = min(young_interval_s(checkpoint_cost_s, mtti_s), hi)
    daly = min(daly_interval_s(checkpoint_cost_s, mtti_s), hi)
    return IntervalChoice(
        checkpoint_cost_s=checkpoint_cost_s,
        restart_s=restart_s,
        mtti_s=mtti_s,
        best=overhead_empirical(best, checkpoint_cost_s, km, restart_s),
        young=overhead_empirical(young, checkpoint_cost_s, km, restart_s),
        daly=overhead_empirical(daly, checkpoint_cost_s, km, restart_s),
        fixed_15min=overhead_empirical(GUIDE_FIXED_INTERVAL_S, checkpoint_cost_s, km, restart_s),
        lifetimes=len(lives),
        censored=km.censored,
    )


def interval_exponential_s(
    checkpoint_cost_s: float, mtti_s: float, restart_s: float = 0.0
) -> Overhead:
    """The interval minimising `overhead_exponential` numerically (Daly's target, exactly)."""
    _check(checkpoint_cost_s, mtti_s)
    if math.isinf(mtti_s):
        return overhead_exponential(1e12, checkpoint_cost_s, mtti_s)
    hi = max(10.0 * mtti_s, 2.0 * checkpoint_cost_s)
    lo = max(min(checkpoint_cost_s / 20.0, mtti_s / 1e4), 1e-3)
    best = _minimise(
        lambda tau: overhead_exponential(tau, checkpoint_cost_s, mtti_s, restart_s).total, lo, hi
    )
    return overhead_exponential(best, checkpoint_cost_s, mtti_s, restart_s)
