from __future__ import annotations

import numpy as np
import pytest
from tests.spot.markets import GAP, market

from gpurent.errors import InputError
from gpurent.spot.io.trace import Trace, align_zones
from gpurent.spot.sim.evaluate import run_policy
from gpurent.spot.sim.job_market import JobSpec, Market, build_market, run_starts, tick_plan
from gpurent.spot.sim.lifetimes import mean_residual_ticks, zone_spells
from gpurent.spot.sim.policies import LifetimeUniformProgressPolicy
from gpurent.spot.sim.simulator import simulate

JOB = JobSpec(job_hours=1.0, deadline_hours=2.0, changeover_hours=0.2)  # W=10, N=20, D=2


def one(policy: str, m: Market, job: JobSpec = JOB) -> tuple[float, int, float]:
    s = run_policy(policy, m, job, [0])
    return s.mean_cost_normalized, s.deadline_misses, s.mean_spot_fraction


def test_tick_plan_keeps_changeover_work_and_deadline_fractional() -> None:
    plan = tick_plan(JobSpec(job_hours=0.95, deadline_hours=2.05, changeover_hours=0.15), GAP)
    assert (plan.work_ticks, plan.deadline_ticks, plan.changeover_ticks) == pytest.approx(
        (9.5, 20.5, 1.5)
    )
    assert plan.run_ticks == 21 and plan.feasible_on_demand


def test_on_demand_pays_changeover_and_partial_last_tick() -> None:
    m = market([0] * 30)
    assert one("on-demand", m)[0] == pytest.approx(1.2)  # (2 + 10) ticks x 0.1 h x 3 / (3 x 1)
    job = JobSpec(job_hours=0.95, deadline_hours=2.0, changeover_hours=0.2)
    assert one("on-demand", m, job)[0] == pytest.approx((0.2 + 0.95) * 3 / (3 * 0.95))


def test_all_spot_costs_spot_price() -> None:
    m = market([1] * 30)
    for policy in ("greedy", "uniform-progress", "lifetime-up", "optimal"):
        cost, misses, spot = one(policy, m)
        assert cost == pytest.approx(1.2 / 3) and misses == 0 and spot == pytest.approx(1.0)


def test_greedy_preempted_then_on_demand_at_last_safe_moment() -> None:
    m = market([1] * 5 + [0] * 25)
    s = run_policy("greedy", m, JOB, [0])
    r = s.results[0]
    # 5 spot ticks (2 changeover + 3 work) at 1, then on-demand from slack = 2D: 9 ticks at 3.
    assert r.cost_usd_per_node == pytest.approx(0.5 + 2.7)
    assert (r.preemptions, r.changeovers, r.finished) == (1, 2, True)
    assert r.spot_progress_hours == pytest.approx(0.3)
    assert one("optimal", m)[0] == pytest.approx(3.2 / 3)


def test_lifetime_up_leaves_on_demand_catch_up_early_for_a_long_lived_zone() -> None:
    # History: long spells (mean residual life > 6 k D / (k - 1) = 9 ticks). Then a 30-tick
    # outage puts UP behind its line on on-demand; spot returns and stays up. UP's hysteresis
    # holds on-demand until ahead of ep(t + 2D); ours goes back as soon as
    # (slack 95 ticks > 3D + 0.9 x UP's slack line ~ 90).
    hist = ([1] * 60 + [0] * 5) * 6
    z = hist + [1] * 3 + [0] * 30 + [1] * 1100
    m = market(z)
    job = JobSpec(job_hours=90.0, deadline_hours=100.0, changeover_hours=0.1)  # W=900, N=1000
    start = len(hist)
    ours = run_policy("lifetime-up", m, job, [start]).results[0]
    up = run_policy("uniform-progress", m, job, [start]).results[0]
    assert ours.finished and up.finished
    assert ours.spot_progress_hours > up.spot_progress_hours + 0.3
    assert ours.cost_usd_per_node < up.cost_usd_per_node
    assert mean_residual_ticks(zone_spells(m.usable[0]), start + 34) > 9


def test_lifetime_up_stays_on_demand_when_spot_flaps() -> None:
    # Spells of 2 ticks: predicted life too short to pay a changeover; ours is exactly UP.
    z = [1, 1, 0, 0] * 150
    m = market(z)
    job = JobSpec(job_hours=16.0, deadline_hours=20.0, changeover_hours=0.2)
    ours = run_policy("lifetime-up", m, job, [300]).results[0]
    up = run_policy("uniform-progress", m, job, [300]).results[0]
    assert ours == up


def test_run_starts_spread_and_errors() -> None:
    m = market([1] * 100)
    job = JobSpec(job_hours=1.0, deadline_hours=5.0, changeover_hours=0.0)
    assert run_starts(m, job, 5) == [0, 10, 20, 30, 40]
    with pytest.raises(InputError, match="shorter than the deadline"):
        run_starts(m, JobSpec(job_hours=1.0, deadline_hours=20.0, changeover_hours=0), 3)


def test_job_spec_rejects_deadline_before_job() -> None:
    with pytest.raises(InputError, match="shorter than --job-hours"):
        JobSpec(job_hours=5.0, deadline_hours=4.0, changeover_hours=0.1)


def test_nodes_all_or_none() -> None:
    tr = Trace(name="z", gap_hours=GAP, available=(1, 2, 3, 0))
    m = build_market(align_zones([tr]), nodes=2, price_ratio=2.0)
    assert m.usable.tolist() == [[False, True, True, False]]


def test_trace_prices_need_an_on_demand_price() -> None:
    tr = Trace(name="z", gap_hours=GAP, available=(1, 1), price_usd_per_hour=(1.0, 2.0))
    with pytest.raises(InputError, match="--on-demand-price"):
        build_market(align_zones([tr]))
    m = build_market(align_zones([tr]), on_demand_usd_per_hour=4.0)
    assert m.on_demand_usd_per_hour == 4.0 and np.allclose(m.spot_usd_per_hour, [[1.0, 2.0]])


def test_lifetime_up_preemption_reserve_leaves_on_demand_where_ups_line_would_not() -> None:
    # C/R = 0.95 (W = 950, N = 1000, D = 2): after a preemption and an outage UP sits on an
    # on-demand catch-up and round 2's bound (3D + 0.9 x UP's slack line ~ 50 ticks) keeps it
    # there, but spells have lasted ~200 ticks, so the predicted preemptions of the rest of the
    # job need only 2 x (D + 1) x ~930 / 200 ~ 28 ticks of slack: ours goes back to spot.
    hist = ([1] * 200 + [0] * 5) * 12
    z = hist + [1] * 3 + [0] * 20 + [1] * 1100
    m = market(z)
    job = JobSpec(job_hours=95.0, deadline_hours=100.0, changeover_hours=0.2)
    start = [len(hist)]
    round2 = type("Round2", (LifetimeUniformProgressPolicy,), {"need_factor": float("inf")})
    ours = simulate(LifetimeUniformProgressPolicy, m, job, start).results[0]
    old = simulate(round2, m, job, start).results[0]
    up = run_policy("uniform-progress", m, job, start).results[0]
    assert ours.finished and old.finished and up.finished
    assert old.cost_usd_per_node == pytest.approx(up.cost_usd_per_node)
    assert ours.spot_progress_hours > old.spot_progress_hours + 10
    assert ours.cost_usd_per_node < old.cost_usd_per_node


def test_lifetime_up_takes_the_cheapest_zone_with_spot_and_failover_order_on_ties() -> None:
    """Both zones have spot all along; zone z1 costs half of z0. Failover UP takes the first
    zone given; ours takes the cheaper one. With flat prices (--price-ratio) both take z0."""
    traces = [
        Trace(name="z0", gap_hours=GAP, available=(1,) * 30, price_usd_per_hour=(1.0,) * 30),
        Trace(name="z1", gap_hours=GAP, available=(1,) * 30, price_usd_per_hour=(0.5,) * 30),
    ]
    priced = build_market(align_zones(traces), on_demand_usd_per_hour=3.0)
    up, ours = (run_policy(p, priced, JOB, [0]) for p in ("uniform-progress", "lifetime-up"))
    assert up.mean_cost_normalized == pytest.approx(1.2 * 1.0 / 3)
    assert ours.mean_cost_normalized == pytest.approx(1.2 * 0.5 / 3)
    flat = market([1] * 30, [1] * 30)
    assert one("lifetime-up", flat) == one("uniform-progress", flat)


def test_lifetime_up_moves_running_spot_to_a_much_cheaper_zone_with_slack_to_spare() -> None:
    """z0 (1 $/h) has spot all along; z1 (0.5 $/h) has had 20 spells of 30 ticks before the run
    and comes back 5 ticks into it. With a loose deadline ours moves (one more changeover);
    failover UP stays on z0. With flat prices neither moves."""
    history = ([1] * 30 + [0] * 2) * 20  # 640 ticks
    z1 = history + [0] * 5 + [1] * 95
    z0 = [1] * len(z1)
    job = JobSpec(job_hours=1.0, deadline_hours=8.0, changeover_hours=0.2)  # W=10, N=80, D=2
    traces = [
        Trace(name="z0", gap_hours=GAP, available=tuple(z0), price_usd_per_hour=(1.0,) * len(z0)),
        Trace(name="z1", gap_hours=GAP, available=tuple(z1), price_usd_per_hour=(0.5,) * len(z1)),
    ]
    priced = build_market(align_zones(traces), on_demand_usd_per_hour=3.0)
    up, ours = (run_policy(p, priced, job, [640]) for p in ("uniform-progress", "lifetime-up"))
    assert (up.results[0].changeovers, ours.results[0].changeovers) == (1, 2)
    # UP: 2 + 10 ticks at 1 $/h; ours: 2 + 3 at 1 $/h, then 2 + 7 at 0.5 $/h
    assert up.results[0].cost_usd_per_node == pytest.approx(12 * GAP * 1.0)
    assert ours.results[0].cost_usd_per_node == pytest.approx(5 * GAP + 9 * GAP * 0.5)
    flat = build_market(align_zones(traces), price_ratio=3.0)
    assert run_policy("lifetime-up", flat, job, [640]).results[0].changeovers == 1


class _Scripted:
    """Plays a fixed action per tick (spot in an unusable zone falls back to idle)."""

    name = "scripted"

    def __init__(self, actions: tuple[int, ...]) -> None:
        self.actions = actions

    def start(self, run: object) -> None:
        del run

    def decide(self, t: int, progress_ticks: float, current: int, row: tuple[bool, ...]) -> int:
        a = self.actions[t]
        return a if a <= 0 or row[a - 1] else -1


@pytest.mark.parametrize("changeover_hours", [0.1, 0.15, 0.05, 0.03, 0.0])
def test_optimal_equals_brute_force_over_every_schedule(changeover_hours: float) -> None:
    """On a small two-zone market with zone prices and a partial last tick, the DP's cost is
    the minimum over all 4^7 action sequences that finish, from several starts, and batching
    the runs does not change it; with fractional changeovers too (the reported cost is the
    recorded schedule replayed through the simulator)."""
    import itertools

    from gpurent.spot.sim import optimal
    from gpurent.spot.sim.simulator import simulate_run

    z0 = [1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1]
    z1 = [0, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1]
    traces = [
        Trace(name="a", gap_hours=GAP, available=tuple(z0), price_usd_per_hour=(1.0,) * 12),
        Trace(name="b", gap_hours=GAP, available=tuple(z1), price_usd_per_hour=(0.6,) * 12),
    ]
    m = build_market(align_zones(traces), on_demand_usd_per_hour=2.0)
    # W = 3.5, N = 6.5 (the last tick cut in half), D = 1, 1.5, 0.5, 0.3 or 0 ticks (with 0.3
    # the DP once billed a start in the cut last tick as a whole tick, issue 16)
    job = JobSpec(job_hours=0.35, deadline_hours=0.65, changeover_hours=changeover_hours)
    plan = tick_plan(job, GAP)
    starts = [0, 2, 4]
    dp = optimal.optimal_runs(m, plan, starts)
    for start, res in zip(starts, dp, strict=True):
        best = min(
            r.cost_usd_per_node
            for acts in itertools.product((-1, 0, 1, 2), repeat=plan.run_ticks)
            if (r := simulate_run(_Scripted(acts), m, plan, start)).finished
        )
        assert res.finished and res.cost_usd_per_node == pytest.approx(best)
    one_by_one = [optimal.optimal_run(m, plan, s).cost_usd_per_node for s in starts]
    assert one_by_one == pytest.approx([r.cost_usd_per_node for r in dp])
