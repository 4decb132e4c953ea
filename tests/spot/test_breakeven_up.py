"""`breakeven-up` (round 5): leaves an on-demand catch-up once spot's predicted life pays the
changeover and the slack it risks; never misses a feasible deadline; online only. The safety
properties are checked for `proven-up` (round 6, breakeven-up that waits for a proven spell)
too; its own behaviour is in test_proven_up.py."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from tests.conftest import run_cli
from tests.spot.markets import GAP, market

from gpurent.spot.sim.evaluate import run_policy
from gpurent.spot.sim.job_market import JobSpec, Market, tick_plan
from gpurent.spot.sim.lifetimes import capped_residual_ticks, zone_spells
from gpurent.spot.sim.policies import (
    BreakEvenUniformProgressPolicy,
    CatchUpSlackValuePolicy,
    LifetimeUniformProgressPolicy,
    OutageIdleSlackValuePolicy,
    Policy,
    ProvenUniformProgressPolicy,
    RunView,
    SlackValueUniformProgressPolicy,
)
from gpurent.spot.sim.policies.breakeven_up import break_even_ticks
from gpurent.spot.sim.simulator import simulate_run

NAME = BreakEvenUniformProgressPolicy.name
SAFE = [
    BreakEvenUniformProgressPolicy,
    ProvenUniformProgressPolicy,
    SlackValueUniformProgressPolicy,
    CatchUpSlackValuePolicy,
    OutageIdleSlackValuePolicy,
]
"""The policies whose safety properties (no miss, deterministic, online) are checked here."""


def test_break_even_life_grows_with_the_changeover_and_falls_with_the_price_ratio() -> None:
    assert break_even_ticks(0.0, 3.0) == 1.0  # no changeover: only the lost tick
    assert break_even_ticks(2.0, 3.0) == pytest.approx(1 + 2 * 8 / 2)
    assert break_even_ticks(2.0, 5.0) < break_even_ticks(2.0, 2.0)
    assert break_even_ticks(2.0, 1.0) == float("inf")  # spot no cheaper: never leave


def test_capped_residual_uses_only_ended_spells_and_caps_at_the_work_left() -> None:
    z = np.array(([1] * 50 + [0] * 2) * 12 + [1] * 10, dtype=bool)
    spells = zone_spells(z)
    now = 12 * 52 + 4  # age 5 in the current spell
    assert capped_residual_ticks(spells, now, 1000.0) == pytest.approx(45.0)
    assert capped_residual_ticks(spells, now, 20.0) == pytest.approx(20.0)
    assert capped_residual_ticks(spells, now, 1000.0, min_samples=13) is None
    assert capped_residual_ticks(spells, 50, 1000.0) == 0.0  # not usable now


def test_returns_from_on_demand_where_lifetime_up_holds_it() -> None:
    # C/R = 0.95 (W = 950, N = 1000, D = 2): spells have lasted 100 ticks. A preemption and an
    # outage put the job on an on-demand catch-up with ~44 ticks of slack after the way back.
    # lifetime-up's bound, 3D + min(0.9 x UP's line ~ 44, 2 x (D + 1) x ~947 / 100 ~ 57),
    # holds it there; a fresh spell's capped residual life (~99 ticks) is far above the
    # break-even 1 + 2 x 8 / 2 = 9 ticks and the slack covers 3D + 0.5 x 3 x ~947 / 100 ~ 20:
    # ours goes back to spot.
    hist = ([1] * 100 + [0] * 2) * 24
    z = hist + [1] * 3 + [0] * 25 + ([1] * 100 + [0] * 2) * 12
    m = market(z)
    job = JobSpec(job_hours=95.0, deadline_hours=100.0, changeover_hours=0.2)
    start = [len(hist)]
    ours = run_policy(NAME, m, job, start).results[0]
    old = run_policy("lifetime-up", m, job, start).results[0]
    assert ours.finished and old.finished
    assert ours.spot_progress_hours > old.spot_progress_hours + 5
    assert ours.cost_usd_per_node < old.cost_usd_per_node


def test_keeps_on_demand_when_the_slack_is_below_the_predicted_preemption_losses() -> None:
    # The same kind of market but spells of 30 ticks: on the catch-up (slack ~44 after the
    # way back) the rest of the job is predicted to lose 0.5 x 3 x ~926 / 30 ~ 47 ticks of
    # slack to preemptions, more than it has: the break-even rule does not act and ours decides
    # as lifetime-up; without the bound it would leave on-demand (life ~29 > 9 ticks).
    hist = ([1] * 30 + [0] * 2) * 40
    z = hist + [1] * 3 + [0] * 25 + ([1] * 30 + [0] * 2) * 40
    m = market(z)
    job = JobSpec(job_hours=95.0, deadline_hours=100.0, changeover_hours=0.2)
    plan = tick_plan(job, GAP)
    unbounded = type("Unbounded", (BreakEvenUniformProgressPolicy,), {"reserve_factor": None})
    acts = {}
    for name, policy in (
        ("ours", BreakEvenUniformProgressPolicy()),
        ("lifetime-up", LifetimeUniformProgressPolicy()),
        ("unbounded", unbounded()),
    ):
        rec = Recorder(policy)
        simulate_run(rec, m, plan, len(hist))
        acts[name] = rec.actions[:200]
    assert acts["ours"] == acts["lifetime-up"]
    assert acts["unbounded"] != acts["ours"]


def test_without_evidence_it_is_lifetime_up() -> None:
    # Fewer than 10 ended spells: the break-even rule has no evidence and does not act.
    z = [1] * 30 + [0] * 20 + [1] * 200 + [0] * 10 + [1] * 400
    m = market(z)
    job = JobSpec(job_hours=50.0, deadline_hours=60.0, changeover_hours=0.2)
    assert run_policy(NAME, m, job, [0]).results == run_policy("lifetime-up", m, job, [0]).results


@pytest.mark.parametrize("cls", SAFE)
@pytest.mark.parametrize("d", [0.0, 0.03, 0.1, 0.25])
def test_no_spot_at_all_finishes_on_demand(
    d: float, cls: type[BreakEvenUniformProgressPolicy]
) -> None:
    m = market([0] * 400, [0] * 400)
    job = JobSpec(job_hours=19.0, deadline_hours=20.0, changeover_hours=d)
    r = run_policy(cls.name, m, job, [0, 50, 150])
    od = run_policy("on-demand", m, job, [0, 50, 150])
    assert r.deadline_misses == 0
    assert r.mean_cost_normalized == pytest.approx(od.mean_cost_normalized)


@pytest.mark.parametrize("cls", SAFE)
@pytest.mark.parametrize("d", [0.03, 0.1, 0.25])
@pytest.mark.parametrize("frac", [0.6, 0.9, 0.97])
def test_spot_vanishing_near_the_end_never_misses(
    d: float, frac: float, cls: type[BreakEvenUniformProgressPolicy]
) -> None:
    # Long reliable spells (so every rule trusts spot and goes back to it eagerly), then no
    # spot at all in any zone from some tick before the deadline to the end of the trace.
    rng = random.Random(5)
    hist = ([1] * 60 + [0] * 3) * 20
    deadline_ticks = 300
    for cut in (30, 100, 200, 280, 299):
        zones = [hist + [1] * cut + [0] * (deadline_ticks - cut + 5) for _ in range(2)]
        for zone in zones:  # a few short outages before the cut, differing per zone
            for _ in range(4):
                i, n = len(hist) + rng.randrange(max(1, cut)), rng.randrange(1, 6)
                zone[i : i + n] = [0] * n
        m = market(*zones)
        job = JobSpec(
            job_hours=frac * deadline_ticks * GAP,
            deadline_hours=deadline_ticks * GAP,
            changeover_hours=d,
        )
        assert tick_plan(job, GAP).feasible_on_demand
        s = run_policy(cls.name, m, job, [len(hist)])
        assert s.deadline_misses == 0, (cut, d, frac)


def random_market(seed: int, zones: int = 3, ticks: int = 1500) -> Market:
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(zones):
        up, row = True, []
        for _ in range(ticks):
            if rng.random() < (0.03 if up else 0.3):
                up = not up
            row.append(int(up))
        rows.append(row)
    spot = rng.uniform(0.2, 0.5, size=(zones, ticks))
    return Market(
        zone_names=tuple(f"z{i}" for i in range(zones)),
        gap_hours=GAP,
        usable=np.array(rows, dtype=bool),
        spot_usd_per_hour=spot,
        on_demand_usd_per_hour=1.0,
    )


JOB = JobSpec(job_hours=45.0, deadline_hours=50.0, changeover_hours=0.1)  # W 450, N 500, D 1


@pytest.mark.parametrize("cls", SAFE)
def test_deterministic(cls: type[BreakEvenUniformProgressPolicy]) -> None:
    m = random_market(1)
    starts = [700, 800, 900]
    a = run_policy(cls.name, m, JOB, starts)
    b = run_policy(cls.name, m, JOB, starts)
    assert a.results == b.results
    # A policy object reused across runs (as `simulate` does) gives each run the same answer
    # as a fresh one.
    plan = tick_plan(JOB, GAP)
    reused = cls()
    for s, r in zip(starts, a.results, strict=True):
        assert simulate_run(reused, m, plan, s) == r
        assert simulate_run(cls(), m, plan, s) == r


class Recorder:
    """The decisions of a policy, tick by tick."""

    def __init__(self, inner: Policy) -> None:
        self.inner = inner
        self.name = inner.name
        self.actions: list[int] = []

    def start(self, run: RunView) -> None:
        self.actions = []
        self.inner.start(run)

    def decide(self, t: int, progress_ticks: float, current: int, row: tuple[bool, ...]) -> int:
        act = self.inner.decide(t, progress_ticks, current, row)
        self.actions.append(act)
        return act


@pytest.mark.parametrize("cls", SAFE)
def test_uses_no_future_information(cls: type[BreakEvenUniformProgressPolicy]) -> None:
    """A market changed after tick t (availability and prices) cannot change the decisions up
    to t; with the whole market as it was, the run is the same."""
    plan = tick_plan(JOB, GAP)
    start = 800
    for seed in range(4):
        m = random_market(seed)
        base = Recorder(cls())
        simulate_run(base, m, plan, start)
        rng = np.random.default_rng(100 + seed)
        for t in (0, 40, 150, 320, len(base.actions) - 2):
            cut = start + t + 1  # ticks from here on are rewritten
            usable = m.usable.copy()
            usable[:, cut:] = rng.random(usable[:, cut:].shape) < 0.5
            spot = m.spot_usd_per_hour.copy()
            spot[:, cut:] = rng.uniform(0.1, 0.9, size=spot[:, cut:].shape)
            other = Market(
                zone_names=m.zone_names,
                gap_hours=GAP,
                usable=usable,
                spot_usd_per_hour=spot,
                on_demand_usd_per_hour=1.0,
            )
            rec = Recorder(cls())
            simulate_run(rec, other, plan, start)
            assert rec.actions[: t + 1] == base.actions[: t + 1], (seed, t)


@pytest.mark.parametrize(
    "name",
    [
        NAME,
        ProvenUniformProgressPolicy.name,
        SlackValueUniformProgressPolicy.name,
        CatchUpSlackValuePolicy.name,
        OutageIdleSlackValuePolicy.name,
    ],
)
def test_cli_simulate_policy(write_csv, name: str) -> None:
    z = [1 if (i // 9) % 4 else 0 for i in range(80)]
    path = write_csv("z1", z)
    args = ["--job-hours", "1.5", "--deadline-hours", "2", "--changeover-hours", "0.1"]
    code, out, err = run_cli(
        "spot", "simulate", "--trace", str(path), *args, "--starts", "4", "--price-ratio", "3",
        "--policy", name, "--json",
    )  # fmt: skip
    assert code == 0, err
    got = json.loads(out)
    assert got["policy"] == name and got["runs"] == 4 and got["deadline_misses"] == 0
    code, out, err = run_cli(
        "spot", "simulate", "--trace", str(path), *args, "--starts", "4", "--price-ratio", "3",
        "--policy", "all", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert name in {r["policy"] for r in json.loads(out)["results"]}
