"""What a spot policy sees and the safety net every deadline-aware policy shares.

A policy is asked once per tick what to run: `IDLE`, `ON_DEMAND` or spot in zone z (`z + 1`),
given the tick, the progress so far (in ticks, fractional: a tick past its changeover is 1) and
the instance it holds (after a preemption the simulator has already set it to `IDLE`). It may
read the market's availability up to and including the current tick (never the future).

Safety net ("Can't Be Late", Wu et al., NSDI'24, section 5.2, with the rounding of its public
simulator's uniform-progress strategy), in ticks: with work left w and time left r, a policy
not running spot goes on-demand and stays there once ceil(w + 2D) >= floor(r), and takes a new
spot instance only while ceil(w + 2D) < floor(r). Then w + 2D <= r - 1 at the last idle tick,
and a spot instance lost after any number of ticks has cost at most D of slack, so on-demand
(one more changeover D) still finishes: no policy using this net misses a deadline that is
feasible on on-demand (D + W <= N).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

from gpurent.spot.sim.job_market import ON_DEMAND, Market, TickPlan


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class RunView:
    """One run as a policy sees it: the plan, the market and where the run starts in it."""

    plan: TickPlan
    market: Market
    start_tick: int


class Policy(Protocol):
    """An online policy: `start` once per run, then `decide` once per tick."""

    name: str

    def start(self, run: RunView) -> None:
        """Reset the policy's state for a new run."""

    def decide(self, t: int, progress_ticks: float, current: int, row: tuple[bool, ...]) -> int:
        """The instance to hold at tick t of the run (`row[z]`: zone z usable now)."""
        ...


_EPS = 1e-9


class SafetyNet:
    """Shared state of the safety net: committed to on-demand until the end once triggered."""

    def __init__(self) -> None:
        self.committed = False
        self._n = 0.0
        self._w = 0.0
        self._two_d = 0.0

    def start(self, run: RunView) -> None:
        """Reset for a new run: uncommitted; the run's deadline and work in ticks."""
        self.committed = False
        self._n = run.plan.deadline_ticks
        self._w = run.plan.work_ticks
        self._two_d = 2 * run.plan.changeover_ticks

    def slack(self, t: int, progress_ticks: float) -> float:
        """Ticks to spare: ticks left minus work ticks left."""
        return (self._n - t) - (self._w - progress_ticks)

    def _room(self, t: int, progress_ticks: float) -> bool:
        """ceil(work left + 2D) < floor(time left): a new spot instance is still safe."""
        need = math.ceil(self._w - progress_ticks + self._two_d - _EPS)
        return need < math.floor(self._n - t + _EPS)

    def must_commit(self, t: int, progress_ticks: float, current: int) -> bool:
        """True once the job must go (or stay) on on-demand to be sure to finish."""
        if self.committed:
            return True
        if current > ON_DEMAND:  # running spot: exploitation, safe by construction
            return False
        if not self._room(t, progress_ticks):
            self.committed = True
        return self.committed

    def may_take_spot(self, t: int, progress_ticks: float) -> bool:
        """A new spot instance (changeover included) is safe only with room for 2D."""
        return not self.committed and self._room(t, progress_ticks)


def first_zone(row: tuple[bool, ...]) -> int:
    """Index of the first usable zone, or -1."""
    for z, ok in enumerate(row):
        if ok:
            return z
    return -1
