"""`dp-up3` (round 11): dp-up2 that idles through an outage of every zone while the slack keeps
the predicted loss of the rest. Its safety properties (no spot, spot vanishing, deterministic,
online only, the CLI run) are checked with breakeven-up's in test_breakeven_up.py."""

from __future__ import annotations

import numpy as np
import pytest
from tests.spot.lockstep import Lockstep, assert_shadows_no_parameter
from tests.spot.markets import GAP, first_zone, market

from gpurent.errors import InputError
from gpurent.spot.sim.evaluate import run_policy
from gpurent.spot.sim.job_market import IDLE, ON_DEMAND, JobSpec, Market, tick_plan
from gpurent.spot.sim.policies import (
    CatchUpSlackValuePolicy,
    OutageIdleSlackValuePolicy,
)
from gpurent.spot.sim.policies.dp_up3 import failover_history
from gpurent.spot.sim.simulator import simulate, simulate_run

NAME = OutageIdleSlackValuePolicy.name


def regional(seed: int, ticks: int = 2400) -> Market:
    """Three zones of one region: shared outages (mean 12 ticks, every ~40) and each zone's own
    blips, so that the job is often behind UP's line while every zone is out."""
    rng = np.random.default_rng(seed)
    shared: list[int] = []
    while len(shared) < ticks:
        shared += [1] * int(rng.geometric(1 / 40)) + [0] * int(rng.geometric(1 / 12))
    zones = []
    for _ in range(3):
        own = (rng.random(ticks) > 0.08).astype(int)
        zones.append([a * b for a, b in zip(shared[:ticks], own.tolist(), strict=True)])
    return market(*zones)


JOB = JobSpec(job_hours=30.0, deadline_hours=50.0, changeover_hours=0.1)  # C/R 0.6, D = 1 tick


def test_failover_history_counts_outages_up_ticks_and_instances_taken() -> None:
    usable = np.array([[1, 1, 0, 0, 0, 1, 1], [0, 1, 1, 0, 0, 0, 1]], dtype=bool)
    out, up, taken = failover_history(usable)
    # Ticks 3 and 4 have no zone; zone 0 is taken at 0, lost at 2 (zone 1 taken), zone 1 lost
    # at 3, zone 0 taken again at 5: three instances. Entry a covers the ticks before a.
    assert out == [0, 0, 0, 0, 1, 2, 2, 2]
    assert up == [0, 1, 2, 3, 3, 3, 4, 5]
    assert taken == [0, 1, 1, 2, 2, 2, 3, 3]


def test_idles_through_shared_outages_and_costs_less_than_dp_up2_and_up() -> None:
    ours = dp2 = up = 0.0
    for seed in range(3):
        m = regional(seed)
        starts = list(range(600, 1800, 150))
        a = run_policy(NAME, m, JOB, starts)
        b = run_policy(CatchUpSlackValuePolicy.name, m, JOB, starts)
        c = run_policy("uniform-progress", m, JOB, starts)
        assert a.deadline_misses == b.deadline_misses == c.deadline_misses == 0
        ours += a.mean_cost_normalized
        dp2 += b.mean_cost_normalized
        up += c.mean_cost_normalized
    assert ours < 0.97 * dp2 and ours < up


def lockstep(leave_on_demand: bool) -> Lockstep:
    """dp-up3 deciding, dp-up2 shadowing it (`tests/spot/lockstep.py`)."""
    cls = type("D3", (OutageIdleSlackValuePolicy,), {"leave_on_demand": leave_on_demand})
    return Lockstep(cls(), CatchUpSlackValuePolicy())


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("leave", [False, True])
def test_departs_from_dp_up2_only_by_idling_instead_of_on_demand_in_an_outage(
    seed: int, leave: bool
) -> None:
    m = regional(seed)
    plan = tick_plan(JOB, GAP)
    differ = 0
    for start in (700, 1000, 1300):
        rec = lockstep(leave)
        assert simulate_run(rec, m, plan, start).finished
        assert all(
            a == IDLE
            and b == ON_DEMAND
            and cur in ((IDLE, ON_DEMAND) if leave else (IDLE,))
            and not up
            for a, b, cur, up, _ in rec.differ
        ), rec.differ
        differ += len(rec.differ)
    assert differ > 0  # the rule acted


def test_one_zone_is_dp_up2() -> None:
    m = regional(0)
    one = first_zone(m)
    starts = [600, 900, 1200]
    a = run_policy(NAME, one, JOB, starts)
    b = run_policy(CatchUpSlackValuePolicy.name, one, JOB, starts)
    assert a.results == b.results


def test_without_history_or_with_an_unreachable_reserve_it_is_dp_up2() -> None:
    m = regional(1)
    starts = [600, 900, 1200]
    b = run_policy(CatchUpSlackValuePolicy.name, m, JOB, starts)
    for attrs in ({"min_history_hours": 1e6}, {"outage_reserve_factor": 1e6}):
        cls = type("D3", (OutageIdleSlackValuePolicy,), attrs)
        assert simulate(cls, m, JOB, starts).results == b.results


def test_bad_reserve_factor_is_a_one_line_error() -> None:
    cls = type("Bad", (OutageIdleSlackValuePolicy,), {"outage_reserve_factor": -1.0})
    with pytest.raises(InputError) as err:
        cls()
    assert "reserve factor" in str(err.value) and "\n" not in str(err.value)


def test_overrides_no_parameter_of_dp_up2() -> None:
    # A dp-up3 knob named like one of its ancestors' (breakeven-up's `reserve_factor`) would
    # silently change dp-up2's own decisions; every inherited parameter must stay dp-up2's.
    assert_shadows_no_parameter(
        OutageIdleSlackValuePolicy,
        {"name", "outage_reserve_factor", "min_history_hours", "min_zones", "leave_on_demand"},
        CatchUpSlackValuePolicy,
        {"__init__", "start", "decide", "_idle_affordable"},
    )


def test_one_zone_with_returns_from_on_demand_is_dp_up2() -> None:
    # A heavy-tailed zone where dp-up2 leaves on-demand catch-ups (test_dp_up2.py's fixture).
    cycle = ([1] * 12 + [0] * 3) * 4 + [1] * 400 + [0] * 3
    m = market(cycle * 12)
    starts = list(range(len(cycle) * 6, len(cycle) * 7, 7))
    job = JobSpec(job_hours=27.0, deadline_hours=30.0, changeover_hours=0.2)
    a = run_policy(NAME, m, job, starts)
    b = run_policy(CatchUpSlackValuePolicy.name, m, job, starts)
    assert a.results == b.results
