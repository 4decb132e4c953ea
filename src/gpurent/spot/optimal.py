"""The hindsight optimum: the cheapest schedule knowing the whole trace in advance.

The "omniscient" policy of "Can't Be Late" (Wu et al., NSDI'24, Table 3), computed by dynamic
programming backward over ticks. States at the start of tick t: free (no instance), or holding
instance i (on-demand, or spot in zone z) past its changeover; and the slack left,
s = (ticks left) - (work ticks left), 0..s0 with s0 = N - W. In slack terms a tick of running
keeps s, a tick idle costs 1, a changeover D; the job is done at s = N - t. Working on slack
instead of progress keeps the arrays s0 + 1 long instead of W + 1 (19x shorter at C/R = 0.95),
and every run of a batch shares them, so the runs are solved together, vectorised over
(run, instance, slack). Moves: idle a tick; run the held instance a tick (spot only while its
zone is usable); drop it; start a new instance, which bills D ticks of changeover and needs its
zone usable through them. It uses the same tick rounding as the simulator (`model.tick_plan`),
so no online policy can beat it on the same run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from gpurent.spot.model import IDLE, ON_DEMAND, JobSpec, Market, TickPlan, tick_plan
from gpurent.spot.policies.baselines import OnDemandPolicy
from gpurent.spot.simulator import RunResult, SimSummary, simulate_run, summarize

_INF = np.inf
_BATCH_BYTES = 64 * 2**20
"""Memory for the recorded choices of one batch of runs (they are replayed afterwards)."""
Arr = npt.NDArray[np.float64]
BoolArr = npt.NDArray[np.bool_]


def _windows(market: Market, starts: Sequence[int], n: int) -> tuple[Arr, BoolArr]:
    """Price and usability per run, instance i (0 = on-demand, z + 1 = zone z) and tick."""
    z = market.zones
    idx = np.asarray(starts, dtype=np.int64)[:, None] + np.arange(n)[None, :]
    price = np.empty((len(starts), z + 1, n), dtype=np.float64)
    price[:, 0, :] = market.on_demand_usd_per_hour
    price[:, 1:, :] = market.spot_usd_per_hour[:, idx].transpose(1, 0, 2)
    ok = np.ones((len(starts), z + 1, n), dtype=np.bool_)
    ok[:, 1:, :] = market.usable[:, idx].transpose(1, 0, 2)
    return price, ok


def optimal_runs(
    market: Market,
    plan: TickPlan,
    start_ticks: Sequence[int],
    progress: Callable[[int], None] | None = None,
) -> list[RunResult]:
    """The hindsight-optimal run from each start tick (on-demand throughout if infeasible);
    `progress(n)` after each batch of n runs."""
    s0 = plan.deadline_ticks - plan.work_ticks
    if s0 < 0:
        return [simulate_run(OnDemandPolicy(), market, plan, s) for s in start_ticks]
    per_run = plan.deadline_ticks * (market.zones + 2) * (s0 + 1)
    batch = max(1, _BATCH_BYTES // per_run)
    out: list[RunResult] = []
    for i in range(0, len(start_ticks), batch):
        chunk = list(start_ticks[i : i + batch])
        out.extend(_solve_batch(market, plan, chunk))
        if progress is not None:
            progress(len(chunk))
    return out


def optimal_run(market: Market, plan: TickPlan, start_tick: int) -> RunResult:
    """The hindsight-optimal run from `start_tick` (on-demand from the start if infeasible)."""
    return optimal_runs(market, plan, [start_tick])[0]


def _solve_batch(market: Market, plan: TickPlan, starts: list[int]) -> list[RunResult]:
    n, w, d, gap = plan.deadline_ticks, plan.work_ticks, plan.changeover_ticks, plan.gap_hours
    s0 = n - w
    length = s0 + 1
    price, ok = _windows(market, starts, n)
    b, s_count = price.shape[0], price.shape[1]
    barred = np.where(ok, 0.0, _INF)  # added to a value: unusable instance -> inf
    zeros = np.zeros((b, s_count, 1))
    cum_price = np.concatenate([zeros, np.cumsum(price * gap, axis=2)], axis=2)
    cum_ok = np.concatenate([zeros, np.cumsum(ok, axis=2)], axis=2)
    last_extra = plan.last_tick_hours - gap  # the job's last tick bills only what it needs
    slack = np.arange(length)

    # t = n: done only with no slack left over (progress W exactly at the deadline).
    v_free_next = np.full((b, length), _INF)
    v_free_next[:, 0] = 0.0
    v_run_hist: list[Arr] = [np.repeat(v_free_next[:, None, :], s_count, axis=1)]  # t+1, t+2..
    free_choice = np.empty((n, b, length), dtype=np.int8)  # -1 idle, else instance started
    run_stay = np.empty((n, b, s_count, length), dtype=np.bool_)
    for t in range(n - 1, -1, -1):
        done = n - t  # slack index of "work complete" at tick t
        impossible = slack > done
        v_run_next = v_run_hist[0]
        p_t = price[:, :, t]
        stay = v_run_next + (p_t * gap + barred[:, :, t])[:, :, None]
        if 1 <= done <= length:
            stay[:, :, done - 1] += p_t * last_extra  # this tick finishes the job
        if d == 0:
            start_val = stay
        elif t + d <= n:
            window_ok = (cum_ok[:, :, t + d] - cum_ok[:, :, t]) == d
            start_cost = cum_price[:, :, t + d] - cum_price[:, :, t]
            start_cost[~window_ok] = _INF
            start_val = np.empty((b, s_count, length))
            start_val[:, :, :d] = _INF
            np.add(
                v_run_hist[d - 1][:, :, : length - d],
                start_cost[:, :, None],
                out=start_val[:, :, d:],
            )
        else:
            start_val = np.full((b, s_count, length), _INF)
        idle = np.full((b, length), _INF)
        idle[:, 1:] = v_free_next[:, :-1]
        # best new instance per (run, slack); a loop over the few instances beats argmin
        best_start = start_val[:, 0, :].copy()
        arg_start = np.zeros((b, length), dtype=np.int8)
        for i in range(1, s_count):
            better = start_val[:, i, :] < best_start
            np.copyto(best_start, start_val[:, i, :], where=better)
            arg_start[better] = i
        v_free = np.minimum(idle, best_start)
        free_choice[t] = np.where(best_start < idle, arg_start, IDLE)
        if done < length:
            v_free[:, done] = 0.0
            stay[:, :, done] = 0.0
            free_choice[t, :, done] = IDLE
        v_free[:, impossible] = _INF
        stay[:, :, impossible] = _INF
        v_run = np.minimum(stay, v_free[:, None, :])
        np.less_equal(stay, v_free[:, None, :], out=run_stay[t])
        v_run_hist.insert(0, v_run)
        del v_run_hist[max(d, 1) :]
        v_free_next = v_free
    results = []
    for k, start in enumerate(starts):
        if not np.isfinite(v_free_next[k, s0]):
            results.append(simulate_run(OnDemandPolicy(), market, plan, start))
        else:
            results.append(
                _replay(
                    market,
                    plan=plan,
                    start_tick=start,
                    price=price[k],
                    ok=ok[k],
                    free_choice=free_choice[:, k],
                    run_stay=run_stay[:, k],
                )
            )
    return results


def _replay(
    market: Market,
    *,
    plan: TickPlan,
    start_tick: int,
    price: Arr,
    ok: BoolArr,
    free_choice: npt.NDArray[np.int8],
    run_stay: BoolArr,
) -> RunResult:
    """Follow the optimal choices forward to count cost, spot hours and changeovers."""
    gap, n, w, d = plan.gap_hours, plan.deadline_ticks, plan.work_ticks, plan.changeover_ticks
    cur, co_left, p, cost = IDLE, 0, 0, 0.0
    spot_ticks = changeovers = 0
    finished = False
    for t in range(n):
        s = (n - t) - (w - p)
        if cur != IDLE and not ok[cur, t]:
            cur, co_left = IDLE, 0  # lost (the optimum never pays for this, see the DP)
        if co_left == 0 and cur != IDLE and not run_stay[t, cur, s]:
            cur = IDLE
        if co_left == 0 and cur == IDLE:
            choice = int(free_choice[t, s])
            if choice != IDLE:
                cur, co_left = choice, d
                changeovers += 1
        if cur == IDLE:
            continue
        if co_left:
            co_left -= 1
            cost += price[cur, t] * gap
            continue
        p += 1
        spot_ticks += cur > ON_DEMAND
        if p >= w:
            cost += price[cur, t] * plan.last_tick_hours
            finished = True
            break
        cost += price[cur, t] * gap
    job_hours = (w - 1) * gap + plan.last_tick_hours
    spot_hours = spot_ticks * gap - (gap - plan.last_tick_hours if finished and cur else 0.0)
    return RunResult(
        start_tick=start_tick,
        cost_usd_per_node=float(cost),
        cost_normalized=float(cost) / (market.on_demand_usd_per_hour * job_hours),
        finished=finished,
        progress_hours=job_hours if finished else p * gap,
        spot_progress_hours=float(spot_hours),
        changeovers=changeovers,
        preemptions=0,
    )


def simulate_optimal(
    market: Market,
    job: JobSpec,
    start_ticks: Sequence[int],
    progress: Callable[[int], None] | None = None,
) -> SimSummary:
    """The hindsight optimum for every start tick, summarised like an online policy."""
    plan = tick_plan(job, market.gap_hours)
    runs = optimal_runs(market, plan, start_ticks, progress)
    return summarize("optimal", runs, job.job_hours)
