"""Run a named policy (online or the hindsight optimum) over a market: the spot room's facade."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gpurent.spot.sim.job_market import JobSpec, Market
from gpurent.spot.sim.optimal import simulate_optimal
from gpurent.spot.sim.policies import ONLINE_POLICIES, OPTIMAL, resolve
from gpurent.spot.sim.simulator import SimSummary, simulate


def run_policy(
    name: str,
    market: Market,
    job: JobSpec,
    start_ticks: Sequence[int],
    progress: Callable[[int], None] | None = None,
) -> SimSummary:
    """Summary of policy `name` (`auto` allowed) over runs starting at `start_ticks`;
    `progress(n)` is called as runs finish (n of them)."""
    key = resolve(name)
    if key == OPTIMAL:
        return simulate_optimal(market, job, start_ticks, progress)
    return simulate(ONLINE_POLICIES[key], market, job, start_ticks, progress)


def gap_to_optimal(summary: SimSummary, optimal: SimSummary) -> float:
    """Relative excess of a policy's mean normalised cost over the hindsight optimum's."""
    return summary.mean_cost_normalized / optimal.mean_cost_normalized - 1.0
