"""Replay a policy over availability traces ("Can't Be Late", Wu et al., NSDI'24, section 3,
and the rules of its simulator, sky_spot's env/strategy loop).

Per tick t of a run (absolute tick start + t), in ticks (see `model.TickPlan`):
1. A spot instance whose zone is not usable at t is lost (preemption): no progress this tick.
2. The policy picks idle, on-demand or spot in a usable zone. A different instance than the one
   held sets the remaining changeover to D (billed at the new instance's price, no progress);
   taking spot in another zone, including after a preemption, is a changeover too.
3. A held instance is billed for the tick (the last tick only up to the deadline) and yields
   max(1 - remaining, 0) of progress; the remaining changeover falls by what the tick used.
   The run ends the moment the work is done (billed up to then) or at the deadline (a miss;
   its cost still counts).
Costs are per node; the normalised cost divides by the all-on-demand cost without changeover,
k * C (k = on-demand price).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from gpurent.errors import InputError
from gpurent.spot.sim.job_market import IDLE, ON_DEMAND, JobSpec, Market, TickPlan, tick_plan
from gpurent.spot.sim.policies.base import Policy, RunView

_EPS = 1e-9
"""Tolerance on progress (ticks): work within it of done is done."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunResult:
    """One run of one policy."""

    start_tick: int
    cost_usd_per_node: float
    cost_normalized: float
    finished: bool
    progress_hours: float
    spot_progress_hours: float
    changeovers: int
    preemptions: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SimSummary:
    """A policy over all runs; the dict the CLI prints with `--json` is `as_json()`."""

    policy: str
    runs: int
    mean_cost_normalized: float
    p90_cost_normalized: float
    deadline_misses: int
    mean_spot_fraction: float
    """Mean share of the job's compute hours done on spot."""
    results: tuple[RunResult, ...]
    nodes: int = 1
    """Instances the job runs on; every one is billed."""

    @property
    def mean_cost_all_nodes(self) -> float:
        """Mean cost of a run over all nodes (in $ with prices in $/h; with --price-ratio in
        spot-hours)."""
        return self.nodes * float(np.mean([r.cost_usd_per_node for r in self.results]))

    def as_json(self) -> dict[str, object]:
        """The summary as the JSON-ready dict that --json prints."""
        return {
            "policy": self.policy,
            "runs": self.runs,
            "mean_cost_normalized": self.mean_cost_normalized,
            "p90_cost_normalized": self.p90_cost_normalized,
            "deadline_misses": self.deadline_misses,
            "mean_spot_fraction": self.mean_spot_fraction,
            "nodes": self.nodes,
            "mean_cost_all_nodes": self.mean_cost_all_nodes,
        }


class _Tape:
    """The market as plain Python lists: the per-tick loop indexes them faster than numpy."""

    def __init__(self, market: Market) -> None:
        self.rows: list[tuple[bool, ...]] = [tuple(c) for c in market.usable.T.tolist()]
        self.spot: list[list[float]] = market.spot_usd_per_hour.tolist()
        self.od = market.on_demand_usd_per_hour


def simulate_run(
    policy: Policy, market: Market, plan: TickPlan, start_tick: int, *, tape: _Tape | None = None
) -> RunResult:
    """One run of `policy` from `start_tick` (see the module docstring for the rules)."""
    tape = tape or _Tape(market)
    rows, spot, od = tape.rows, tape.spot, tape.od
    gap, n, work, d = plan.gap_hours, plan.deadline_ticks, plan.work_ticks, plan.changeover_ticks
    policy.start(RunView(plan=plan, market=market, start_tick=start_tick))
    decide = policy.decide
    cur, co_left, done = IDLE, 0.0, 0.0
    cost = spot_done = 0.0
    changeovers = preemptions = 0
    finished = False
    for t in range(plan.run_ticks):
        a = start_tick + t
        row = rows[a]
        if cur > ON_DEMAND and not row[cur - 1]:
            cur, co_left = IDLE, 0.0
            preemptions += 1
        act = decide(t, done, cur, row)
        if act != cur:
            if act > ON_DEMAND and not row[act - 1]:
                raise InputError(f"policy {policy.name!r} took spot in an unavailable zone")
            cur = act
            if act != IDLE:
                co_left = d
                changeovers += 1
        if cur == IDLE:
            continue
        price = od if cur == ON_DEMAND else spot[cur - 1][a]
        span = 1.0 if n - t >= 1.0 else n - t  # the tick, cut at the deadline
        over = co_left if co_left < span else span
        co_left -= over
        run = span - over
        need = work - done
        if run >= need - _EPS:
            cost += price * gap * (over + need)
            if cur > ON_DEMAND:
                spot_done += need
            done = work
            finished = True
            break
        cost += price * gap * span
        done += run
        if cur > ON_DEMAND:
            spot_done += run
    job_hours = work * gap
    return RunResult(
        start_tick=start_tick,
        cost_usd_per_node=cost,
        cost_normalized=cost / (od * job_hours),
        finished=finished,
        progress_hours=done * gap,
        spot_progress_hours=spot_done * gap,
        changeovers=changeovers,
        preemptions=preemptions,
    )


def summarize(
    policy: str, results: Sequence[RunResult], job_hours: float, nodes: int = 1
) -> SimSummary:
    """Mean and 90th percentile of the normalised cost, misses and spot share over runs."""
    costs = np.array([r.cost_normalized for r in results], dtype=np.float64)
    spot = np.array([r.spot_progress_hours / job_hours for r in results], dtype=np.float64)
    return SimSummary(
        policy=policy,
        runs=len(results),
        mean_cost_normalized=float(costs.mean()),
        p90_cost_normalized=float(np.percentile(costs, 90)),
        deadline_misses=sum(1 for r in results if not r.finished),
        mean_spot_fraction=float(spot.mean()),
        results=tuple(results),
        nodes=nodes,
    )


def simulate(
    make_policy: Callable[[], Policy],
    market: Market,
    job: JobSpec,
    start_ticks: Sequence[int],
    progress: Callable[[int], None] | None = None,
) -> SimSummary:
    """Run a fresh policy from every start tick and summarise; `progress(1)` after each run."""
    plan = tick_plan(job, market.gap_hours)
    tape = _Tape(market)
    policy = make_policy()
    results = []
    for s in start_ticks:
        results.append(simulate_run(policy, market, plan, s, tape=tape))
        if progress is not None:
            progress(1)
    return summarize(policy.name, results, job.job_hours, job.nodes)
