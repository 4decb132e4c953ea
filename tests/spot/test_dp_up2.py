"""`dp-up2` (round 10): dp-up whose lost returns also cost UP's on-demand catch-up, and whose
priced verdict is final. Its safety properties (no spot, spot vanishing, deterministic, online
only, the CLI run) are checked with breakeven-up's in test_breakeven_up.py."""

from __future__ import annotations

import numpy as np
import pytest
from tests.spot.markets import GAP, market

from gpurent.errors import InputError
from gpurent.spot.sim.evaluate import run_policy
from gpurent.spot.sim.job_market import ON_DEMAND, JobSpec, Market, tick_plan
from gpurent.spot.sim.policies import (
    CatchUpSlackValuePolicy,
    RunView,
    SlackValueUniformProgressPolicy,
)
from gpurent.spot.sim.simulator import simulate, simulate_run

NAME = CatchUpSlackValuePolicy.name


def flapping() -> tuple[Market, list[int]]:
    """A heavy-tailed zone: four 12-tick spells, then one of 400, each followed by 3 down; the
    starts cover one such cycle after six cycles of history."""
    cycle = ([1] * 12 + [0] * 3) * 4 + [1] * 400 + [0] * 3
    hist = cycle * 6
    return market(hist + cycle * 6), list(range(len(hist), len(hist) + len(cycle), 7))


def test_a_flapping_zone_costs_less_than_dp_up_and_no_more_than_up() -> None:
    # D = 2 ticks, C/R = 0.9: dp-up leaves the catch-up at the age gate (5 ticks) for spells
    # that mostly end 7 ticks later; each loss costs 2D + 1 = 5 slack ticks, which UP's line
    # (falling 0.1 a tick) turns into ~50 ticks of on-demand.
    m, starts = flapping()
    job = JobSpec(job_hours=27.0, deadline_hours=30.0, changeover_hours=0.2)
    ours = run_policy(NAME, m, job, starts)
    dp = run_policy(SlackValueUniformProgressPolicy.name, m, job, starts)
    up = run_policy("uniform-progress", m, job, starts)
    assert ours.deadline_misses == dp.deadline_misses == up.deadline_misses == 0
    assert sum(r.changeovers for r in ours.results) < sum(r.changeovers for r in dp.results)
    assert ours.mean_cost_normalized < dp.mean_cost_normalized
    assert ours.mean_cost_normalized <= up.mean_cost_normalized


class Lockstep:
    """dp-up2 deciding, with dp-up asked the same question on every tick (same inputs, so the
    same safety-net state); records ticks where dp-up2 leaves on-demand and dp-up would not."""

    name = NAME

    def __init__(self) -> None:
        self.ours = CatchUpSlackValuePolicy()
        self.other = SlackValueUniformProgressPolicy()
        self.extra: list[int] = []
        self.returns = 0

    def start(self, run: RunView) -> None:
        self.ours.start(run)
        self.other.start(run)

    def decide(self, t: int, progress_ticks: float, current: int, row: tuple[bool, ...]) -> int:
        act = self.ours.decide(t, progress_ticks, current, row)
        theirs = self.other.decide(t, progress_ticks, current, row)
        if current == ON_DEMAND and act > ON_DEMAND:
            self.returns += 1
            if theirs <= ON_DEMAND:
                self.extra.append(t)
        return act


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_never_leaves_on_demand_where_dp_up_would_stay(seed: int) -> None:
    # One zone of heavy-tailed spells (Pareto, capped at 300 ticks) and short outages, so that
    # the job returns from on-demand to spot several times a run.
    rng = np.random.default_rng(seed)
    row: list[int] = []
    while len(row) < 3000:
        row += [1] * min(300, int(2 + 4 * rng.pareto(1.1))) + [0] * int(1 + rng.integers(0, 4))
    m = market(row[:3000])
    plan = tick_plan(JobSpec(job_hours=45.0, deadline_hours=50.0, changeover_hours=0.2), GAP)
    returns = 0
    for start in (2000, 2200, 2400):
        rec = Lockstep()
        r = simulate_run(rec, m, plan, start)
        assert r.finished and rec.extra == [], (start, rec.extra)
        returns += rec.returns
    assert returns > 0  # the property was exercised


def test_without_the_hold_and_with_dp_ups_fallback_it_is_dp_up() -> None:
    m, starts = flapping()
    job = JobSpec(job_hours=27.0, deadline_hours=30.0, changeover_hours=0.2)
    plain = type("Plain", (CatchUpSlackValuePolicy,), {"hold_share": 0.0, "veto_share": None})
    a = simulate(plain, m, job, starts)
    b = run_policy(SlackValueUniformProgressPolicy.name, m, job, starts)
    assert [r.cost_usd_per_node for r in a.results] == [r.cost_usd_per_node for r in b.results]


@pytest.mark.parametrize(
    ("attrs", "word"), [({"hold_share": 1.5}, "hold share"), ({"veto_share": 0.5}, "veto share")]
)
def test_bad_parameters_are_one_line_errors(attrs: dict[str, float], word: str) -> None:
    cls = type("Bad", (CatchUpSlackValuePolicy,), attrs)
    with pytest.raises(InputError) as err:
        cls()
    assert word in str(err.value) and "\n" not in str(err.value)
