"""The hindsight optimum: the cheapest schedule knowing the whole trace in advance.

The "omniscient" policy of "Can't Be Late" (Wu et al., NSDI'24, Table 3) on the same fractional
model as the simulator (`model`, `simulator`): decisions at tick boundaries, a changeover of
D = d / gap ticks (fractional), billing stopped the moment the work is done.

Dynamic programming backward over ticks, exact on a slack grid. With slack used
j = t - progress (ticks lost to idling and changeovers so far), a tick of running keeps j, a
tick idle adds 1 and a changeover adds D, so every reachable j is a whole multiple of 1/q
when D = m / q: the DP's slack axis has step 1/q, and a changeover of m steps spans
c = ceil(D) ticks, the last one partly working. States at the start of tick t: free (no
instance), or holding instance i (on-demand, or spot in zone z) past its changeover; and j,
0..floor((N - W) q). Moves: idle a tick; run the held instance a tick (spot only while its
zone is usable; the tick in which the work ends is billed up to then); drop it; start a new
instance, which bills the c ticks of its changeover window and needs its zone usable through
them; or, where the work ends inside the window's last tick, bills from t only up to the end
(D plus the work left) and needs it usable up to then; that end must fall within the tick's
span (the deadline's cut last tick is part of a tick: issue 16, a start there was once billed
as a whole tick). All runs of a batch are solved together,
vectorised over (run, instance, slack).

q is the smallest denominator (<= `MAX_STEPS_PER_TICK`) that states D exactly (0.05 h on 10-min
ticks: D = 3/10, q = 10; on the CBL 195 s traces: D = 12/13, q = 13). Where none does, D is
rounded down to the grid: the optimum is then still a lower bound, no longer exact.
The schedule is replayed through the simulator (same rules as every policy) and reported as
the simulator counts it; on a rounded grid the cost reported is the DP's (a lower bound).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from gpurent.spot.sim.job_market import IDLE, JobSpec, Market, TickPlan, tick_plan
from gpurent.spot.sim.policies.base import RunView
from gpurent.spot.sim.policies.baselines import OnDemandPolicy
from gpurent.spot.sim.simulator import RunResult, SimSummary, simulate_run, summarize

_INF = np.inf
_EPS = 1e-9
_BATCH_BYTES = 64 * 2**20
"""Memory for the recorded choices of one batch of runs (they are replayed afterwards)."""
MAX_STEPS_PER_TICK = 240
"""Finest slack grid (steps per tick) the DP uses to state the changeover exactly."""
Arr = npt.NDArray[np.float64]
BoolArr = npt.NDArray[np.bool_]
Int8Arr = npt.NDArray[np.int8]


def slack_grid(changeover_ticks: float) -> tuple[int, int]:
    """(q, m): slack steps per tick and the changeover in steps, m / q <= D (= when exact)."""
    frac = Fraction(changeover_ticks).limit_denominator(MAX_STEPS_PER_TICK)
    if abs(float(frac) - changeover_ticks) <= _EPS * max(1.0, changeover_ticks):
        return frac.denominator, frac.numerator
    q = MAX_STEPS_PER_TICK
    return q, math.floor(changeover_ticks * q + _EPS)


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
    if not plan.feasible_on_demand:
        return [simulate_run(OnDemandPolicy(), market, plan, s) for s in start_ticks]
    q, _ = slack_grid(plan.changeover_ticks)
    length = math.floor((plan.deadline_ticks - plan.work_ticks) * q + _EPS) + 1
    per_run = plan.run_ticks * (market.zones + 2) * length
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
    n_t, w, n, gap = plan.run_ticks, plan.work_ticks, plan.deadline_ticks, plan.gap_hours
    q, m = slack_grid(plan.changeover_ticks)
    c = math.ceil(m / q - _EPS) if m else 0  # ticks of a changeover window
    exact = abs(m / q - plan.changeover_ticks) <= _EPS * max(1.0, plan.changeover_ticks)
    length = math.floor((n - w) * q + _EPS) + 1
    price, ok = _windows(market, starts, n_t)
    b, s_count = price.shape[0], price.shape[1]
    span = np.minimum(1.0, n - np.arange(n_t))  # the last tick is cut at the deadline
    barred = np.where(ok, 0.0, _INF)  # added to a value: unusable instance -> inf
    zeros = np.zeros((b, s_count, 1))
    cum_price = np.concatenate([zeros, np.cumsum(price * (gap * span), axis=2)], axis=2)
    cum_ok = np.concatenate([zeros, np.cumsum(ok, axis=2)], axis=2)
    used = np.arange(length) / q  # slack used at each index

    inf_free = np.full((b, length), _INF)
    v_free_next = inf_free
    v_run_hist: list[Arr] = [np.full((b, s_count, length), _INF)] * max(c, 1)  # t+1, t+2..
    free_choice = np.empty((n_t, b, length), dtype=np.int8)  # -1 idle, else instance started
    run_stay = np.empty((n_t, b, s_count, length), dtype=np.bool_)
    for t in range(n_t - 1, -1, -1):
        rem = w - t + used  # work left at (t, j)
        finishing = rem <= span[t] + _EPS
        p_t = price[:, :, t]
        stay = v_run_hist[0] + (p_t * gap + barred[:, :, t])[:, :, None]
        fin_cost = p_t[:, :, None] * gap * rem[None, None, :] + barred[:, :, t][:, :, None]
        stay[:, :, finishing] = fin_cost[:, :, finishing]
        if c == 0:
            start_val = stay
        else:
            start_val = np.full((b, s_count, length), _INF)
            if m < length and t + c <= n_t:
                window_ok = (cum_ok[:, :, t + c] - cum_ok[:, :, t]) == c
                start_cost = np.where(window_ok, cum_price[:, :, t + c] - cum_price[:, :, t], _INF)
                np.add(  # the work goes on past the window, to the state j + m
                    v_run_hist[c - 1][:, :, m:],
                    start_cost[:, :, None],
                    out=start_val[:, :, : length - m],
                )
            _bill_ends_in_window(
                start_val,
                t,
                rem,
                m / q,
                c,
                cum_ok=cum_ok,
                cum_price=cum_price,
                price=price,
                span=span,
                gap=gap,
            )
        idle = np.full((b, length), _INF)
        if q < length:
            idle[:, : length - q] = v_free_next[:, q:]
        # best new instance per (run, slack); a loop over the few instances beats argmin
        best_start = start_val[:, 0, :].copy()
        arg_start = np.zeros((b, length), dtype=np.int8)
        for i in range(1, s_count):
            better = start_val[:, i, :] < best_start
            np.copyto(best_start, start_val[:, i, :], where=better)
            arg_start[better] = i
        v_free = np.minimum(idle, best_start)
        free_choice[t] = np.where(best_start < idle, arg_start, IDLE)
        done = rem <= _EPS
        v_free[:, done] = 0.0
        stay[:, :, done] = 0.0
        v_run = np.minimum(stay, v_free[:, None, :])
        np.less_equal(stay, v_free[:, None, :], out=run_stay[t])
        v_run_hist = [v_run, *v_run_hist[: max(c, 1) - 1]]
        v_free_next = v_free
    results = []
    for k, start in enumerate(starts):
        value = float(v_free_next[k, 0])
        if not np.isfinite(value):
            results.append(simulate_run(OnDemandPolicy(), market, plan, start))
            continue
        hindsight = _Hindsight(free_choice[:, k], run_stay[:, k], q, c)
        r = simulate_run(hindsight, market, plan, start)
        if exact:
            results.append(r)  # the schedule replayed by the simulator's rules
            continue
        results.append(
            RunResult(
                start_tick=start,
                cost_usd_per_node=value,
                cost_normalized=value / (market.on_demand_usd_per_hour * w * gap),
                finished=True,
                progress_hours=w * gap,
                spot_progress_hours=r.spot_progress_hours,
                changeovers=r.changeovers,
                preemptions=r.preemptions,
            )
        )
    return results


def _bill_ends_in_window(
    start_val: Arr,
    t: int,
    rem: Arr,
    changeover: float,
    c: int,
    *,
    cum_ok: Arr,
    cum_price: Arr,
    price: Arr,
    span: Arr,
    gap: float,
) -> None:
    """Where the work ends inside the changeover window of an instance taken at tick t, set
    `start_val` (run, instance, slack) to its cost: billed from t for the changeover plus the
    work left, e ticks, at each tick's price, the end tick partly; only the ticks up to the end
    need the zone usable, and the end must fall within its tick's span (the last tick is cut at
    the deadline), else inf."""
    n_t = price.shape[2]
    e = changeover + rem  # ticks from t to the end of the work
    k_end = np.ceil(e - _EPS).astype(np.int64) - 1  # the window's tick in which the work ends
    ending = np.flatnonzero(k_end < c)
    if not ending.size:
        return
    start_val[:, :, ending] = _INF
    for k in range(min(c, n_t - t)):
        js = np.flatnonzero((k_end == k) & (e - k <= span[t + k] + _EPS))
        if not js.size:
            continue
        ok = (cum_ok[:, :, t + k + 1] - cum_ok[:, :, t]) == k + 1
        before = np.where(ok, cum_price[:, :, t + k] - cum_price[:, :, t], _INF)
        last = price[:, :, t + k][:, :, None] * (gap * (e[js] - k))[None, None, :]
        start_val[:, :, js] = before[:, :, None] + last


class _Hindsight:
    """Plays the DP's recorded choices through the simulator."""

    name = "optimal"

    def __init__(self, free_choice: Int8Arr, run_stay: BoolArr, q: int, c: int) -> None:
        self._free = free_choice
        self._stay = run_stay
        self._q = q
        self._c = c
        self._until = 0
        self._last = free_choice.shape[1] - 1

    def start(self, run: RunView) -> None:
        del run
        self._until = 0

    def decide(self, t: int, progress_ticks: float, current: int, row: tuple[bool, ...]) -> int:
        del row
        if current != IDLE and t < self._until:
            return current  # inside the changeover window the DP paid for
        j = min(max(round((t - progress_ticks) * self._q), 0), self._last)
        if current != IDLE and self._stay[t, current, j]:
            return current
        choice = int(self._free[t, j])
        if choice != IDLE:
            self._until = t + self._c
        return choice


def simulate_optimal(
    market: Market,
    job: JobSpec,
    start_ticks: Sequence[int],
    progress: Callable[[int], None] | None = None,
) -> SimSummary:
    """The hindsight optimum for every start tick, summarised like an online policy."""
    plan = tick_plan(job, market.gap_hours)
    runs = optimal_runs(market, plan, start_ticks, progress)
    return summarize("optimal", runs, job.job_hours, job.nodes)
