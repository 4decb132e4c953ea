"""`proven-up` (round 6): breakeven-up whose way back from an on-demand catch-up waits until
the spot spell has lasted the break-even life. Its safety properties (no miss where spot
vanishes, deterministic, online only) are checked with breakeven-up's in
test_breakeven_up.py, and so is its CLI run."""

from __future__ import annotations

from tests.spot.markets import market

from gpurent.spot.sim.evaluate import run_policy
from gpurent.spot.sim.job_market import JobSpec, Market
from gpurent.spot.sim.policies import ProvenUniformProgressPolicy

NAME = ProvenUniformProgressPolicy.name


# History of heavy-tailed spells: each long spell (200 ticks) is followed by three blips of 3
# ticks, 12 times (so 12 long spells are known). At a spell's first tick the capped mean
# residual life is ~51 ticks, far above the break-even 1 + D (3k - 1) / (k - 1) = 9 ticks
# (D = 2, k = 3), although 3 spells in 4 end after 3 ticks; a spell that has lasted 9 ticks is
# a long one.
HIST = ([1] * 200 + [0] * 2 + ([1] * 3 + [0] * 2) * 3) * 12
JOB = JobSpec(job_hours=95.0, deadline_hours=100.0, changeover_hours=0.2)  # W 950, N 1000


def flapping_then_long() -> Market:
    """A preemption and an outage put the run on an on-demand catch-up (~6 ticks of slack
    below UP's line: ~120 ticks of catch-up); then the zone flaps (3 ticks up, 3 down, 5
    times) before a long spell."""
    return market(HIST + [1] * 3 + [0] * 25 + ([1] * 3 + [0] * 3) * 5 + [1] * 1200)


def test_waits_out_the_blips_that_breakeven_up_takes() -> None:
    m = flapping_then_long()
    start = [len(HIST)]
    ours = run_policy(NAME, m, JOB, start).results[0]
    eager = run_policy("breakeven-up", m, JOB, start).results[0]
    assert ours.finished and eager.finished
    assert eager.preemptions >= 3  # breakeven-up re-enters the flapping zone on every blip
    assert ours.preemptions < eager.preemptions
    assert ours.changeovers < eager.changeovers
    assert ours.cost_usd_per_node < eager.cost_usd_per_node


def test_still_leaves_on_demand_for_a_proven_spell_where_lifetime_up_stays() -> None:
    # The long spell after the blips: once it has lasted 9 ticks, ours goes back to spot;
    # lifetime-up's slack bound (3D + min(0.9 x UP's line, 2 x 3 x ~940 / 52)) holds it on
    # on-demand for much longer.
    m = flapping_then_long()
    start = [len(HIST)]
    ours = run_policy(NAME, m, JOB, start).results[0]
    old = run_policy("lifetime-up", m, JOB, start).results[0]
    assert ours.finished and old.finished
    assert ours.spot_progress_hours > old.spot_progress_hours + 5
    assert ours.cost_usd_per_node < old.cost_usd_per_node
