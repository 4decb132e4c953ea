"""The baseline policies of "Can't Be Late" (Wu et al., NSDI'24): on-demand, greedy, UP.

Uniform Progress (section 5.2), in ticks, with expected progress ep(t) = t * W / N:
1. Safety net: not on spot and slack <= 2D -> on-demand until the end (see `base`).
2. Exploitation: on spot, stay until preempted.
3. Hysteresis: on on-demand, stay until progress >= ep(t + 2D).
4. Taking risks: take spot whenever it is available (from idle, or from on-demand once the
   hysteresis lets go).
5. Uniform progress: idle, no spot and progress < ep(t) -> on-demand; on on-demand with no
   spot anywhere, stay on on-demand (as the public simulator's strategy does: going idle would
   only cost another changeover later).
With several zones this is failover UP: spot is available when any zone has it, and the first
zone (in the order given) that has it is taken, including after a preemption.
"""

from __future__ import annotations

from gpurent.spot.sim.job_market import IDLE, ON_DEMAND
from gpurent.spot.sim.policies.base import RunView, SafetyNet, first_zone


class OnDemandPolicy:
    """On-demand from the first tick to the end: the cost every other policy is normalised by."""

    name = "on-demand"

    def start(self, run: RunView) -> None:
        """Nothing to reset: the policy keeps no state."""
        del run

    def decide(self, t: int, progress_ticks: float, current: int, row: tuple[bool, ...]) -> int:
        """Always on-demand."""
        return ON_DEMAND


class GreedyPolicy:
    """Spot whenever available (stay until preempted), idle otherwise; on-demand at the last
    safe moment (the safety net) and until the end."""

    name = "greedy"

    def __init__(self) -> None:
        self.net = SafetyNet()

    def start(self, run: RunView) -> None:
        """Reset the safety net for a new run."""
        self.net.start(run)

    def decide(self, t: int, progress_ticks: float, current: int, row: tuple[bool, ...]) -> int:
        """On-demand once the safety net commits; else stay on spot, or take the first free zone."""
        net = self.net
        if net.must_commit(t, progress_ticks, current):
            return ON_DEMAND
        if current > ON_DEMAND:
            return current
        z = first_zone(row)
        if z >= 0 and net.may_take_spot(t, progress_ticks):
            return z + 1
        return IDLE


class UniformProgressPolicy:
    """Uniform Progress with hysteresis and the safety net; failover across zones.

    Subclasses change only `pick_zone` (which usable zone to take) and `spot_worth_it`
    (whether to leave idle / on-demand for spot now).
    """

    name = "uniform-progress"

    def __init__(self) -> None:
        self.net = SafetyNet()
        self._rate = 0.0
        self._two_d = 0.0

    def start(self, run: RunView) -> None:
        """Reset the safety net and the run's target rate of progress per tick."""
        self.net.start(run)
        self._rate = run.plan.work_ticks / run.plan.deadline_ticks
        self._two_d = 2 * run.plan.changeover_ticks

    def pick_zone(self, t: int, row: tuple[bool, ...]) -> int:
        """The usable zone to take at tick t, or -1 for none."""
        del t
        return first_zone(row)

    def spot_worth_it(self, t: int, zone: int, current: int) -> bool:
        """Whether leaving `current` (idle or on-demand) for spot in `zone` pays off."""
        del t, zone, current
        return True

    def decide(self, t: int, progress_ticks: float, current: int, row: tuple[bool, ...]) -> int:
        """The instance to hold at tick t: keep up uniform progress, on spot where possible."""
        net = self.net
        if net.must_commit(t, progress_ticks, current):
            return ON_DEMAND
        if current > ON_DEMAND:
            return current
        if current == ON_DEMAND and progress_ticks < self._rate * (t + self._two_d):
            return ON_DEMAND
        if net.may_take_spot(t, progress_ticks):
            z = self.pick_zone(t, row)
            if z >= 0 and self.spot_worth_it(t, z, current):
                return z + 1
        if current == ON_DEMAND and not any(row):
            return ON_DEMAND
        return ON_DEMAND if self.behind(t, progress_ticks) else IDLE

    def behind(self, t: int, progress_ticks: float) -> bool:
        """Behind the uniform-progress line ep(t) = t * W / N (then on-demand catches up)."""
        return progress_ticks < self._rate * t
