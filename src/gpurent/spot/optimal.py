"""The hindsight optimum: the cheapest schedule knowing the whole trace in advance.

The "omniscient" policy of "Can't Be Late" (Wu et al., NSDI'24, Table 3), computed by dynamic
programming backward over ticks, vectorised over progress (in running ticks, 0..W). States at
the start of tick t: free (no instance), or holding instance s (on-demand, or spot in zone z)
past its changeover. Moves: idle a tick; run the held instance a tick (spot only while its zone
is usable); drop it; start a new instance s', which bills D ticks of changeover and needs its
zone usable through them. It uses the same tick rounding as the simulator (`model.tick_plan`),
so no online policy can beat it on the same run.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from gpurent.spot.model import IDLE, ON_DEMAND, JobSpec, Market, TickPlan, tick_plan
from gpurent.spot.policies.baselines import OnDemandPolicy
from gpurent.spot.simulator import RunResult, SimSummary, simulate_run, summarize

_INF = np.inf
Arr = npt.NDArray[np.float64]


def _prices(market: Market, start: int, n: int) -> tuple[Arr, npt.NDArray[np.bool_]]:
    """Per instance s (0 = on-demand, z + 1 = zone z) and tick: price and usability."""
    z = market.zones
    price = np.empty((z + 1, n), dtype=np.float64)
    price[0] = market.on_demand_usd_per_hour
    price[1:] = market.spot_usd_per_hour[:, start : start + n]
    ok = np.ones((z + 1, n), dtype=np.bool_)
    ok[1:] = market.usable[:, start : start + n]
    return price, ok


def optimal_run(market: Market, plan: TickPlan, start_tick: int) -> RunResult:
    """The hindsight-optimal run from `start_tick` (on-demand from the start if infeasible)."""
    n, w, d, gap = plan.deadline_ticks, plan.work_ticks, plan.changeover_ticks, plan.gap_hours
    price, ok = _prices(market, start_tick, n)
    s_count = price.shape[0]
    # Start cost and feasibility of a changeover begun at tick t on instance s (ticks t..t+D-1).
    zeros = np.zeros((s_count, 1))
    cum_price = np.concatenate([zeros, np.cumsum(price * gap, axis=1)], axis=1)
    cum_ok = np.concatenate([zeros, np.cumsum(ok, axis=1)], axis=1)
    tick_cost = np.full(w, gap)
    tick_cost[w - 1] = plan.last_tick_hours

    v_free_next = np.full(w + 1, _INF)
    v_free_next[w] = 0.0
    v_run_hist: list[Arr] = [np.tile(v_free_next, (s_count, 1))]  # index 0 = tick t+1
    free_choice = np.empty((n, w + 1), dtype=np.int8)  # -1 idle, else instance started
    run_stay = np.empty((n, s_count, w + 1), dtype=np.bool_)
    for t in range(n - 1, -1, -1):
        v_run_next = v_run_hist[0]
        stay = np.full((s_count, w + 1), _INF)
        stay[:, :w] = price[:, t : t + 1] * tick_cost + v_run_next[:, 1:]
        stay[:, w] = 0.0
        stay[~ok[:, t]] = _INF
        if d == 0:
            start_val = stay
        elif t + d <= n:
            window_ok = (cum_ok[:, t + d] - cum_ok[:, t]) == d
            start_cost = cum_price[:, t + d] - cum_price[:, t]
            start_val = start_cost[:, None] + v_run_hist[d - 1]
            start_val[~window_ok] = _INF
            start_val[:, w] = 0.0
        else:
            start_val = np.full((s_count, w + 1), _INF)
            start_val[:, w] = 0.0
        best_start = start_val.min(axis=0)
        arg_start = start_val.argmin(axis=0)
        v_free = np.minimum(v_free_next, best_start)
        free_choice[t] = np.where(best_start < v_free_next, arg_start, IDLE)
        v_run = np.minimum(stay, v_free[None, :])
        run_stay[t] = stay <= v_free[None, :]
        v_run_hist.insert(0, v_run)
        del v_run_hist[max(d, 1) :]
        v_free_next = v_free
    if not np.isfinite(v_free_next[0]):
        return simulate_run(OnDemandPolicy(), market, plan, start_tick)
    return _replay(
        market,
        plan=plan,
        start_tick=start_tick,
        price=price,
        ok=ok,
        free_choice=free_choice,
        run_stay=run_stay,
    )


def _replay(
    market: Market,
    *,
    plan: TickPlan,
    start_tick: int,
    price: Arr,
    ok: npt.NDArray[np.bool_],
    free_choice: npt.NDArray[np.int8],
    run_stay: npt.NDArray[np.bool_],
) -> RunResult:
    """Follow the optimal choices forward to count cost, spot hours and changeovers."""
    gap, w, d = plan.gap_hours, plan.work_ticks, plan.changeover_ticks
    cur, co_left, p, cost = IDLE, 0, 0, 0.0
    spot_ticks = changeovers = 0
    finished = False
    for t in range(plan.deadline_ticks):
        if cur != IDLE and not ok[cur, t]:
            cur, co_left = IDLE, 0  # lost (the optimum never pays for this, see the DP)
        if co_left == 0 and cur != IDLE and not run_stay[t, cur, p]:
            cur = IDLE
        if co_left == 0 and cur == IDLE:
            choice = int(free_choice[t, p])
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


def simulate_optimal(market: Market, job: JobSpec, start_ticks: Sequence[int]) -> SimSummary:
    """The hindsight optimum for every start tick, summarised like an online policy."""
    plan = tick_plan(job, market.gap_hours)
    results = [optimal_run(market, plan, s) for s in start_ticks]
    return summarize("optimal", results, job.job_hours)
