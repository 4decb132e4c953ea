"""LoRA/QLoRA with ZeRO-3/FSDP: the frozen base weights are sharded, so every micro-batch still
all-gathers them (forward, and again in backward with reshard-after-forward) while only the
adapter gradients are reduce-scattered (issue 12: this used to be priced as zero communication).

The formula under test, per micro-batch step and GPU over a ring of `dp` data-parallel ranks:
    volume = (2 x W_base + G_adapter) x (dp - 1) / dp,  time ~ volume / link bandwidth
with W_base the base-weight bytes of one model-parallel shard (2 B/param bf16, 0.53 B/param
QLoRA's 4-bit storage) and G_adapter the adapter gradients' bytes."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest
from tests.conftest import run_cli as run

from gpurent.catalog import get_gpu
from gpurent.estimate import bundled_estimator
from gpurent.estimate import estimator as est_mod
from gpurent.estimate.memory import lora_params
from gpurent.workload import preset
from gpurent.workload.models import get_model
from gpurent.workload.spec import Sharding, Task, Workload
from gpurent.workload.zoo import llm_params

GBPS = 25.0
LINK_BYTES_PER_S = GBPS / 8.0 * 1e9


def _lora_zero3(task: Task = Task.FINETUNE_LORA) -> Workload:
    from dataclasses import replace

    return replace(preset("llama-lora"), task=task, sharding=Sharding.ZERO3)


def _cli_estimate(*extra: str) -> dict[str, float]:
    code, out, err = run(
        "estimate",
        "--preset",
        "llama-lora",
        "--gpu",
        "GH200",
        "--gpus",
        "3",
        "--nodes",
        "3",
        "--inter-node-gbps",
        str(GBPS),
        "--json",
        *extra,
    )
    assert code == 0, err
    doc: dict[str, float] = json.loads(out)
    return doc


def test_lora_zero3_over_slow_network_pays_the_base_weight_all_gathers() -> None:
    doc = _cli_estimate("--sharding", "zero3")
    n = llm_params(get_model("llama3-8b").llm)  # type: ignore[arg-type]
    base_bytes = 2.0 * n  # bf16 frozen weights, ~16 GB
    gathers_s = 2.0 * (2.0 / 3.0) * base_bytes / LINK_BYTES_PER_S  # ~6.9 s at the nominal rate
    hidden_at_most_s = doc["compute_time_s"] + doc["memory_time_s"]
    assert doc["communication_time_s"] > gathers_s - hidden_at_most_s > 5.0
    assert doc["communication_time_s"] < 3.0 * base_bytes / LINK_BYTES_PER_S
    assert doc["scaling_efficiency"] < 0.3
    assert doc["bottleneck"] == "communication"


@pytest.mark.parametrize("sharding", ["none", "zero1", "zero2"])
def test_lora_without_weight_sharding_only_reduces_the_small_adapter_gradients(
    sharding: str,
) -> None:
    doc = _cli_estimate("--sharding", sharding)
    adapter_bytes = 2.0 * lora_params(get_model("llama3-8b"), 16)  # ~84 MB of bf16 gradients
    allreduce_s = 2.0 * (2.0 / 3.0) * adapter_bytes / LINK_BYTES_PER_S
    assert allreduce_s < 0.1
    assert doc["communication_time_s"] <= allreduce_s
    assert doc["scaling_efficiency"] > 0.9


def test_qlora_zero3_gathers_the_four_bit_weights() -> None:
    engine = bundled_estimator()
    gpu = get_gpu("GH200")
    lora = engine.estimate(_lora_zero3(), gpu, 3, nodes=3, inter_node_gbps=GBPS)
    qlora = engine.estimate(_lora_zero3(Task.FINETUNE_QLORA), gpu, 3, nodes=3, inter_node_gbps=GBPS)
    assert 0.0 < qlora.communication_time_s < 0.4 * lora.communication_time_s
    model = get_model("llama3-8b")
    lora_v = est_mod.llm_dp_traffic_bytes(_lora_zero3(), model, 3)
    qlora_v = est_mod.llm_dp_traffic_bytes(_lora_zero3(Task.FINETUNE_QLORA), model, 3)
    assert qlora_v / lora_v == pytest.approx(0.53 / 2.0, rel=0.02)


@pytest.mark.parametrize(
    "task", [Task.FINETUNE_LORA, Task.FINETUNE_QLORA, Task.FINETUNE_FULL, Task.TRAINING]
)
@pytest.mark.parametrize("sharding", list(Sharding))
def test_lower_inter_node_bandwidth_never_speeds_up_a_step(task: Task, sharding: Sharding) -> None:
    from dataclasses import replace

    engine = bundled_estimator()
    gpu = get_gpu("H100")
    wl = replace(preset("llama-lora"), task=task, sharding=sharding)
    steps = [
        engine.estimate(wl, gpu, 16, nodes=2, inter_node_gbps=g).step_time_s
        for g in (10.0, 25.0, 50.0, 100.0, 200.0, 400.0, 800.0, 3200.0)
    ]
    assert all(a >= b for a, b in pairwise(steps)), steps


@pytest.mark.parametrize("task", [Task.FINETUNE_LORA, Task.FINETUNE_QLORA, Task.TRAINING])
def test_more_nodes_never_lower_zero3_traffic_per_gpu(task: Task) -> None:
    engine = bundled_estimator()
    gpu = get_gpu("GH200")
    wl = _lora_zero3(task)
    model = get_model("llama3-8b")
    volumes = [est_mod.llm_dp_traffic_bytes(wl, model, n) for n in range(1, 13)]
    assert volumes[0] == 0.0 and all(v > 0 for v in volumes[1:])
    assert all(a <= b for a, b in pairwise(volumes)), volumes
    comms = [
        engine.estimate(wl, gpu, n, nodes=n, inter_node_gbps=GBPS).communication_time_s
        for n in range(2, 13)
    ]
    assert all(a <= b for a, b in pairwise(comms)), comms
