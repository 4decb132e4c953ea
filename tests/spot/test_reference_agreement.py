"""gpurent's simulator agrees with an independent re-implementation of the Can't Be Late
simulator's loop (tests/spot/cbl_reference.py) within 0.5% mean normalised cost, for on-demand,
greedy and uniform progress, on synthetic traces with 5- and 10-minute ticks and changeovers
of 0.05, 0.1 and 0.2 h (issue 16)."""

from __future__ import annotations

import numpy as np
import pytest
from tests.spot.cbl_reference import run_reference

from gpurent.spot.io.trace import Trace, align_zones
from gpurent.spot.sim.evaluate import run_policy
from gpurent.spot.sim.job_market import JobSpec, build_market, run_starts

K = 3.0
DEADLINE_H = 48.0
JOB_H = 38.4  # C/R = 0.8, as in CBL's main setting
STARTS = 8
TRACES = 3


def _trace(rng: np.random.Generator, gap_h: float, days: int) -> tuple[bool, ...]:
    """Alternating spot spells and outages, exponential lengths (mean 6 h up, 1.5 h down),
    with a few one-tick blips, so that changeovers fall at every phase of a tick."""
    out: list[bool] = []
    up = bool(rng.random() < 0.8)
    while len(out) * gap_h < days * 24:
        mean_h = rng.choice([6.0, 2.0]) if up else rng.choice([1.5, 0.2])
        ticks = max(1, round(rng.exponential(mean_h) / gap_h))
        out.extend([up] * ticks)
        up = not up
    return tuple(out)


@pytest.mark.parametrize("gap_min", [5, 10])
@pytest.mark.parametrize("changeover_h", [0.05, 0.1, 0.2])
def test_simulator_agrees_with_reference_loop(gap_min: int, changeover_h: float) -> None:
    gap_h = gap_min / 60
    rng = np.random.default_rng(1600 + 10 * gap_min + round(changeover_h * 100))
    job = JobSpec(job_hours=JOB_H, deadline_hours=DEADLINE_H, changeover_hours=changeover_h)
    ours: dict[str, list[float]] = {}
    ref: dict[str, list[float]] = {}
    for i in range(TRACES):
        spot = _trace(rng, gap_h, days=6)
        tr = Trace(name=f"z{i}", gap_hours=gap_h, available=tuple(int(v) for v in spot))
        market = build_market(align_zones([tr]), price_ratio=K)
        starts = run_starts(market, job, STARTS)
        for policy in ("on-demand", "greedy", "uniform-progress"):
            s = run_policy(policy, market, job, starts)
            assert s.deadline_misses == 0, policy
            ours.setdefault(policy, []).extend(r.cost_normalized for r in s.results)
            for start in starts:
                cost, finished = run_reference(
                    spot[start:],
                    gap_s=gap_min * 60,
                    task_s=JOB_H * 3600,
                    deadline_s=DEADLINE_H * 3600,
                    overhead_s=changeover_h * 3600,
                    strategy=policy,
                    od_price=K,
                )
                assert finished, policy
                ref.setdefault(policy, []).append(cost)
    for policy, costs in ours.items():
        mine, theirs = float(np.mean(costs)), float(np.mean(ref[policy]))
        assert mine == pytest.approx(theirs, rel=0.005), (policy, mine, theirs)
