"""`lookahead-up` (round 7): proven-up that, before a way back to spot, prices what a loss of
the new instance would cost when it would take the slack below the break-even rule's bound.
Its safety properties (no miss where spot vanishes, deterministic, online only) are checked
with breakeven-up's in test_breakeven_up.py, and so is its CLI run."""

from __future__ import annotations

from gpurent.spot.io.trace import Trace, align_zones
from gpurent.spot.sim.evaluate import run_policy
from gpurent.spot.sim.job_market import JobSpec, Market, build_market
from gpurent.spot.sim.policies import LookaheadUniformProgressPolicy

GAP = 0.1
NAME = LookaheadUniformProgressPolicy.name


def market(*zones: list[int], k: float = 3.0) -> Market:
    traces = [Trace(name=f"z{i}", gap_hours=GAP, available=tuple(v)) for i, v in enumerate(zones)]
    return build_market(align_zones(traces), price_ratio=k)


# History: each long spell (200 ticks) is followed by three spells of 12 ticks, 12 times. A
# spell that has lasted the age gate (4.5 ticks) has a capped mean residual life of ~50
# ticks, far above the break-even 1 + D (3k - 1) / (k - 1) = 9 ticks (D = 2, k = 3), but 3 in
# 4 of the spells that lasted that long ended within 9 ticks more.
HIST = ([1] * 200 + [0] * 2 + ([1] * 12 + [0] * 2) * 3) * 12
JOB = JobSpec(job_hours=95.0, deadline_hours=100.0, changeover_hours=0.2)  # W 950, N 1000


def medium_spells_then_long() -> Market:
    """A preemption and an outage put the run on an on-demand catch-up; then six 12-tick
    spells before a long one. Each lost return costs 2D + 1 = 5 ticks of slack; the break-even
    rule stops acting below ~3D + 0.5 x 3 x ~900 / 51 ~ 32 ticks of slack after a changeover."""
    return market(HIST + [1] * 3 + [0] * 25 + ([1] * 12 + [0] * 2) * 6 + [1] * 1200)


def test_skips_the_return_whose_loss_would_cross_the_bound() -> None:
    m = medium_spells_then_long()
    start = [len(HIST)]
    ours = run_policy(NAME, m, JOB, start).results[0]
    proven = run_policy("proven-up", m, JOB, start).results[0]
    up = run_policy("uniform-progress", m, JOB, start).results[0]
    assert ours.finished and proven.finished and up.finished
    # proven-up returns on every medium spell until its slack is below the bound, and then
    # sits in lifetime-up's catch-up: worse than failover UP here. Ours keeps the slack that
    # the last return would have lost and goes back to spot sooner.
    assert proven.cost_usd_per_node > up.cost_usd_per_node
    assert ours.cost_usd_per_node < proven.cost_usd_per_node
    assert ours.cost_usd_per_node < up.cost_usd_per_node
    assert ours.spot_progress_hours > proven.spot_progress_hours


def test_with_slack_to_spare_it_is_proven_up() -> None:
    # A loose deadline (C/R = 0.6): no loss of a return can take the slack near the bound, so
    # the look-ahead never vetoes and every decision is proven-up's.
    m = medium_spells_then_long()
    job = JobSpec(job_hours=60.0, deadline_hours=100.0, changeover_hours=0.2)
    start = [len(HIST), len(HIST) + 40]
    proven = run_policy("proven-up", m, job, start).results
    assert proven != run_policy("uniform-progress", m, job, start).results  # it does return
    assert run_policy(NAME, m, job, start).results == run_policy("proven-up", m, job, start).results
