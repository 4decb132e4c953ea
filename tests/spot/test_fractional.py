"""The changeover is a duration, not a tick count (Can't Be Late's simulator: a switch sets a
remaining overhead of d; each tick yields max(gap - remaining, 0) of progress)."""

from __future__ import annotations

import pytest

from gpurent.spot.io.trace import Trace, align_zones
from gpurent.spot.sim.evaluate import run_policy
from gpurent.spot.sim.job_market import JobSpec, Market, build_market

GAP = 1 / 6  # 10-minute ticks


def _market(values: list[int], k: float = 3.0) -> Market:
    tr = Trace(name="z", gap_hours=GAP, available=tuple(values))
    return build_market(align_zones([tr]), price_ratio=k)


def test_a_three_minute_changeover_is_billed_three_minutes_not_a_tick() -> None:
    m = _market([0] * 40)
    job = JobSpec(job_hours=2.0, deadline_hours=6.0, changeover_hours=0.05)
    s = run_policy("on-demand", m, job, [0])
    # 3 min of changeover + 2 h of work at k, over k x 2 h
    assert s.mean_cost_normalized == pytest.approx((0.05 + 2.0) / 2.0)
    r = s.results[0]
    assert r.finished and r.progress_hours == pytest.approx(2.0)


def test_progress_in_the_changeover_tick_is_the_rest_of_the_tick() -> None:
    # Spot for 2 ticks then gone: 20 min - 12 min changeover = 8 min of spot progress.
    m = _market([1, 1] + [0] * 60)
    job = JobSpec(job_hours=3.0, deadline_hours=8.0, changeover_hours=0.2)
    r = run_policy("greedy", m, job, [0]).results[0]
    assert r.spot_progress_hours == pytest.approx(2 * GAP - 0.2)
    assert r.finished and r.preemptions == 1
