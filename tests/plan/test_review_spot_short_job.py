"""Regression: a spot job shorter than the checkpoint interval writes no checkpoint."""

from __future__ import annotations

import math

import pytest

from gpurent.pricing.costs import spot_overhead


def test_job_shorter_than_the_checkpoint_interval_pays_no_checkpoints() -> None:
    # 4 nodes x 0.1/h: MTTI 9000 s; a 133 s checkpoint gives a Daly interval of ~24 min, longer
    # than the whole 211 s job, so no checkpoint is ever written. Expected extra time: the chance
    # of an interruption (1 - exp(-211/9000) = 2.3%) x (~half the job redone + 600 s restart),
    # about 7.7%, not the steady-state checkpointing overhead (+28% before this fix).
    compute_s, mtti_s, restart_s = 211.0, 9000.0, 600.0
    s = spot_overhead(
        compute_s=compute_s,
        nodes=4,
        interruptions_per_hour_per_instance=0.1,
        checkpoint_cost_s=133.0,
        restart_s=restart_s,
        trains=True,
    )
    assert s.checkpoint_time_s == 0.0
    p_fail = -math.expm1(-compute_s / mtti_s)
    first_order = 1.0 + p_fail * (compute_s / 2 + restart_s) / compute_s
    assert s.slowdown == pytest.approx(first_order, rel=0.01)
    assert s.lost_work_s + s.restart_time_s == pytest.approx(compute_s * (s.slowdown - 1.0))
