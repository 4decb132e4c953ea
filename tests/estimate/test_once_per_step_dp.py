"""A data-parallel collective run once per optimizer step (DDP/ZeRO-1/2 gradients) hides only
behind the micro-batch whose backward produces its gradients, not behind every micro-batch."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from gpurent.catalog import get_gpu
from gpurent.catalog.precision import Precision
from gpurent.estimate import estimate
from gpurent.estimate.constants import load_constants
from gpurent.estimate.estimator import (
    LLM_COMM_OVERLAP,
    LlmComm,
    exposed_dp_per_micro_batch_s,
    llm_comm_times,
)
from gpurent.workload import Sharding, Workload
from gpurent.workload.models import get_model


def _comm(dp_s: float, dp_step_s: float) -> LlmComm:
    return LlmComm(dp_s=dp_s, tp_s=0.0, pp_s=0.0, cp_s=0.0, dp_step_s=dp_step_s)


@pytest.mark.parametrize(("dp_s", "once"), [(0.0, 0.5), (0.2, 0.0), (0.3, 0.4), (0.0, 0.01)])
def test_one_micro_batch_is_the_old_rule(dp_s: float, once: float) -> None:
    window = LLM_COMM_OVERLAP * 0.25
    assert exposed_dp_per_micro_batch_s(_comm(dp_s, once), 0.25, 1) == pytest.approx(
        max(0.0, dp_s + once - window)
    )


def test_a_once_per_step_collective_longer_than_a_micro_batch_is_paid_once_per_step() -> None:
    # 0.5 s of gradient all-reduce, 0.1 s micro-batches: spreading it over 16 micro-batches
    # (0.031 s each) would hide all of it; only the last micro-batch's 0.09 s can
    cm = _comm(0.0, 0.5)
    per_mb = exposed_dp_per_micro_batch_s(cm, 0.1, 16)
    assert per_mb * 16 == pytest.approx(0.5 - LLM_COMM_OVERLAP * 0.1)


def test_exposure_per_step_never_shrinks_with_more_micro_batches() -> None:
    for dp_s, once in ((0.0, 0.5), (0.2, 0.3), (0.05, 0.0), (0.12, 0.2)):
        per_step = [
            m * exposed_dp_per_micro_batch_s(_comm(dp_s, once), 0.1, m) for m in range(1, 65)
        ]
        assert all(b >= a - 1e-12 for a, b in itertools.pairwise(per_step))
        assert all(0.0 <= x / m <= dp_s + once for m, x in enumerate(per_step, start=1))


def test_zero1_over_a_slow_network_pays_its_all_reduce_once_per_step() -> None:
    """Llama 3 8B, ZeRO-1 over 2 nodes on 100 Gbit/s: the gradient all-reduce (seconds) dwarfs a
    micro-batch, so with 8 micro-batches the step still carries all of it but one window."""
    gpu = get_gpu("H100")
    wl = Workload(
        model="llama3-8b",
        precision=Precision.BF16,
        batch_size_per_gpu=1,
        seq_len=4096,
        sharding=Sharding.ZERO1,
        gradient_accumulation=8,
    )
    est = estimate(wl, gpu, 16, nodes=2, inter_node_gbps=100.0)
    cm = llm_comm_times(
        wl,
        get_model("llama3-8b"),
        gpu,
        num_gpus=16,
        nodes=2,
        seq=4096,
        comm=load_constants().comm,
        inter_node_gbps=100.0,
        interconnect=None,
    )
    assert cm.dp_s == 0.0 and cm.dp_step_s > 1.0  # ZeRO-1: once per step, over a slow link
    window = LLM_COMM_OVERLAP * (est.compute_time_s + est.memory_time_s)
    assert est.communication_time_s * 8 >= cm.dp_step_s - window - 1e-9
    # and accumulation still amortises it: 8 micro-batches pay less per micro-batch than 1
    one = estimate(replace(wl, gradient_accumulation=1), gpu, 16, nodes=2, inter_node_gbps=100.0)
    assert est.communication_time_s < one.communication_time_s
