"""Parallel layouts (issue 12): pipeline bubble and memory, sequence and context parallelism,
recomputation, HSDP, the communication per link, and their one-line errors."""

from __future__ import annotations

import dataclasses

import pytest
from tests.conftest import run_cli

from gpurent.catalog import get_gpu
from gpurent.catalog.precision import Precision
from gpurent.errors import InputError
from gpurent.estimate import estimate
from gpurent.estimate.constants import load_constants
from gpurent.estimate.estimator import (
    llm_dp_network_bytes,
    pipeline_bubble_fraction,
    resolve_model,
)
from gpurent.estimate.perf import (
    NCCL_BASE_LATENCY_S,
    group_collective_time_s,
    network_link,
    ring_time_s,
)
from gpurent.workload.spec import Recompute, Sharding, Task, Workload

H100 = get_gpu("H100")


def _llm(**kw: object) -> Workload:
    base: dict[str, object] = {
        "model": "llama3-8b",
        "precision": Precision.BF16,
        "batch_size_per_gpu": 1,
        "seq_len": 4096,
    }
    base.update(kw)
    return Workload(**base)  # type: ignore[arg-type]


# --- pipeline bubble -------------------------------------------------------------------------


def test_bubble_is_the_megatron_formula() -> None:
    assert pipeline_bubble_fraction(1, 8) == 0.0
    assert pipeline_bubble_fraction(4, 8) == pytest.approx(3 / 11)
    assert pipeline_bubble_fraction(4, 8, 2) == pytest.approx(3 / 19)


@pytest.mark.parametrize("m", [1, 2, 4, 8, 16, 64])
@pytest.mark.parametrize("v", [1, 2, 4])
def test_more_stages_never_shrink_the_bubble(m: int, v: int) -> None:
    bubbles = [pipeline_bubble_fraction(p, m, v) for p in range(1, 33)]
    assert bubbles == sorted(bubbles)


@pytest.mark.parametrize("p", [2, 4, 8, 16])
def test_more_micro_batches_and_virtual_stages_never_grow_it(p: int) -> None:
    for v in (1, 2, 4):
        by_m = [pipeline_bubble_fraction(p, m, v) for m in range(1, 65)]
        assert by_m == sorted(by_m, reverse=True)
    for m in (1, 4, 16):
        by_v = [pipeline_bubble_fraction(p, m, v) for v in range(1, 9)]
        assert by_v == sorted(by_v, reverse=True) and by_v[1] < by_v[0]


def test_estimate_step_pays_the_bubble_and_interleaving_shrinks_it() -> None:
    """Same GPUs and micro-batch: fewer micro-batches per step cost throughput; interleaving
    (vp 2, 80 layers / (4 x 2)) wins it back, less its extra sends."""
    w = _llm(model="llama3-70b", tensor_parallel=8, pipeline_parallel=4, gradient_accumulation=4)
    few = estimate(w, H100, 32, nodes=4, inter_node_gbps=400)
    many = estimate(
        dataclasses.replace(w, gradient_accumulation=32), H100, 32, nodes=4, inter_node_gbps=400
    )
    inter = estimate(
        dataclasses.replace(w, virtual_pipeline_stages=2), H100, 32, nodes=4, inter_node_gbps=400
    )
    assert few.throughput < inter.throughput < many.throughput
    assert inter.communication_time_s > few.communication_time_s  # v x the p2p sends


def test_interleaving_holds_more_activations_on_the_first_stage() -> None:
    w = _llm(model="llama3-70b", tensor_parallel=8, pipeline_parallel=4, gradient_accumulation=8)
    one = estimate(w, H100, 32, nodes=4).memory.activations_gib
    two = estimate(dataclasses.replace(w, virtual_pipeline_stages=2), H100, 32, nodes=4)
    # (1 + (p - 1) / (p v)) = 1.375 x the 1F1B in-flight activations at most
    assert one < two.memory.activations_gib <= one * 1.375 + 1e-9


def test_first_stage_holds_p_micro_batches_in_flight() -> None:
    """Activations per GPU with pp 4: min(pp, m) micro-batches of a quarter of the layers."""
    base = _llm(model="llama3-70b", tensor_parallel=8, gradient_accumulation=8)
    flat = estimate(base, H100, 8).memory.activations_gib
    piped = estimate(dataclasses.replace(base, pipeline_parallel=4), H100, 32, nodes=4)
    m1 = estimate(
        dataclasses.replace(base, pipeline_parallel=4, gradient_accumulation=1), H100, 32, nodes=4
    )
    assert piped.memory.activations_gib < flat  # logits live on the last stage only
    assert piped.memory.activations_gib > m1.memory.activations_gib


# --- sequence parallel, recompute ------------------------------------------------------------


@pytest.mark.parametrize("tp", [2, 4, 8])
def test_sequence_parallel_never_raises_memory(tp: int) -> None:
    on = estimate(_llm(tensor_parallel=tp, sequence_parallel=True), H100, 8)
    off = estimate(_llm(tensor_parallel=tp, sequence_parallel=False), H100, 8)
    default = estimate(_llm(tensor_parallel=tp), H100, 8)
    assert on.memory.activations_gib < off.memory.activations_gib
    assert default.memory == on.memory  # the default with tp > 1 is SP on, as before


def test_sequence_parallel_prices_reduce_scatter_plus_all_gather() -> None:
    """Same bytes as the all-reduce; one more NCCL launch each (2 x base latency)."""
    on = estimate(_llm(tensor_parallel=8, sequence_parallel=True, seq_len=256), H100, 8)
    off = estimate(_llm(tensor_parallel=8, sequence_parallel=False, seq_len=256), H100, 8)
    layers = 32
    extra = 4 * layers * NCCL_BASE_LATENCY_S
    assert on.communication_time_s == pytest.approx(off.communication_time_s + extra, rel=1e-6)


def test_selective_recompute_is_between_none_and_full() -> None:
    none, sel, full = (
        estimate(_llm(recompute=r, batch_size_per_gpu=2), H100, 8)
        for r in (Recompute.NONE, Recompute.SELECTIVE, Recompute.FULL)
    )
    assert full.memory.activations_gib <= sel.memory.activations_gib
    assert sel.memory.activations_gib <= none.memory.activations_gib
    # selective reruns attention's core only: +4 L h s T FLOPs, 4 % of an 8B model's at seq
    # 4096, priced at attention's lower efficiency (about 5 % of the compute time)
    assert 1.02 < sel.compute_time_s / none.compute_time_s < 1.07
    assert full.compute_time_s > sel.compute_time_s


def test_activation_checkpointing_true_is_recompute_full() -> None:
    a = _llm(activation_checkpointing=True)
    b = _llm(recompute=Recompute.FULL)
    assert a.recompute_mode is b.recompute_mode is Recompute.FULL
    assert b.activation_checkpointing
    assert estimate(a, H100, 8) == estimate(b, H100, 8)


# --- HSDP, context parallel ------------------------------------------------------------------


def test_hsdp_cross_node_traffic_is_at_most_zero3s() -> None:
    model = resolve_model(_llm())
    for nodes in (2, 4, 8):
        n = 8 * nodes
        z3 = llm_dp_network_bytes(_llm(sharding=Sharding.ZERO3), model, n, nodes)
        hs = llm_dp_network_bytes(_llm(sharding=Sharding.HSDP), model, n, nodes)
        ddp = llm_dp_network_bytes(_llm(), model, n, nodes)
        assert 0 < hs <= z3
        # the replicas all-reduce the whole gradient through each node, as DDP does
        assert hs == pytest.approx(ddp)
        # on one node HSDP is ZeRO-3 and nothing crosses a network
        assert llm_dp_network_bytes(_llm(sharding=Sharding.HSDP), model, 8, 1) == 0.0


@pytest.mark.parametrize("gbps", [25.0, 100.0, 400.0])
def test_hsdp_is_faster_than_zero3_across_nodes_and_holds_more(gbps: float) -> None:
    z3 = estimate(_llm(sharding=Sharding.ZERO3), H100, 32, nodes=4, inter_node_gbps=gbps)
    hs = estimate(_llm(sharding=Sharding.HSDP), H100, 32, nodes=4, inter_node_gbps=gbps)
    dp = estimate(_llm(sharding=Sharding.NONE), H100, 32, nodes=4, inter_node_gbps=gbps)
    assert hs.communication_time_s <= z3.communication_time_s
    assert z3.memory.total_gib < hs.memory.total_gib < dp.memory.total_gib
    one_node = estimate(_llm(sharding=Sharding.HSDP), H100, 8)
    assert one_node.memory == estimate(_llm(sharding=Sharding.ZERO3), H100, 8).memory


def test_context_parallel_splits_activations_and_adds_ring_traffic() -> None:
    w = _llm(seq_len=32768, tensor_parallel=8, sharding=Sharding.ZERO1)
    cp1 = estimate(w, H100, 16, nodes=2)
    cp2 = estimate(dataclasses.replace(w, context_parallel=2), H100, 16, nodes=2)
    assert cp2.memory.activations_gib < 0.6 * cp1.memory.activations_gib
    # the same tokens per step on the same GPUs: cp 2 has half the replicas, each half the work
    assert cp2.samples_per_s == pytest.approx(cp1.samples_per_s, rel=0.5)
    assert cp2.communication_time_s > 0


# --- communication per link ------------------------------------------------------------------


def test_collective_latency_and_volume() -> None:
    comm = load_constants().comm
    ib = network_link(400.0, comm)
    eth = network_link(25.0, comm)
    assert (ib.kind, eth.kind) == ("ib/roce", "ethernet")
    assert eth.step_latency_s > ib.step_latency_s
    # no bytes: pure latency; an all-reduce on 16 ranks takes the tree's 2 log2 16 = 8 steps
    assert ring_time_s(0.0, 16, ib, 2.0) == pytest.approx(
        NCCL_BASE_LATENCY_S + 8 * ib.step_latency_s
    )
    assert ring_time_s(0.0, 4, ib, 1.0) == pytest.approx(
        NCCL_BASE_LATENCY_S + 3 * ib.step_latency_s
    )
    big = 1e9
    assert ring_time_s(big, 4, ib, 2.0) == pytest.approx(
        2 * 3 / 4 * big / ib.bus_bytes_per_s, rel=1e-3
    )


def test_nvl72_domain_keeps_cross_node_groups_on_nvlink() -> None:
    comm = load_constants().comm
    gb200, b200 = get_gpu("GB200"), get_gpu("B200")
    kw = {"passes": 2.0, "inter_node_gbps": 400.0, "interconnect": None, "comm": comm}
    across_rack = group_collective_time_s(1e9, gb200, 8, group_nodes=2, gpus_per_node=4, **kw)  # type: ignore[arg-type]
    across_ib = group_collective_time_s(1e9, b200, 8, group_nodes=2, gpus_per_node=4, **kw)  # type: ignore[arg-type]
    assert across_rack < across_ib / 5
    # tensor parallel 8 over two 4-GPU GB200 nodes is allowed (NVL72) and priced on NVLink
    w = _llm(tensor_parallel=8)
    est = estimate(w, gb200, 8, nodes=2)
    one_node = estimate(w, b200, 8)
    assert est.communication_time_s == pytest.approx(one_node.communication_time_s, rel=0.05)
    with pytest.raises(InputError, match="tensor parallel 8 does not divide the 4 GPUs"):
        estimate(w, H100, 8, nodes=2)


def test_slower_networks_never_speed_a_multi_node_step() -> None:
    w = _llm(sharding=Sharding.ZERO3)
    speeds = [
        estimate(w, H100, 16, nodes=2, inter_node_gbps=g).throughput
        for g in (10.0, 25.0, 50.0, 100.0, 200.0, 400.0, 3200.0)
    ]
    assert speeds == sorted(speeds)


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kw", "gpus", "numbers"),
    [
        ({"virtual_pipeline_stages": 2}, 8, ("virtual pipeline stages 2", "pp is 1")),
        (
            {
                "model": "llama3-70b",
                "pipeline_parallel": 4,
                "virtual_pipeline_stages": 21,
                "gradient_accumulation": 8,
            },
            8,
            ("80 layers", "4 x 21 = 84", "vp of at most 20"),
        ),
        ({"sequence_parallel": True}, 8, ("tp is 1",)),
        (
            {"pipeline_parallel": 4, "virtual_pipeline_stages": 2, "gradient_accumulation": 6},
            8,
            ("gradient accumulation 6", "pipeline parallel 4", "--grad-accum 8"),
        ),
        ({"context_parallel": 3, "seq_len": 4096}, 9, ("context parallel 3", "4096")),
        ({"context_parallel": 2, "tensor_parallel": 4}, 12, ("12 GPUs", "4 x 2 x 1 = 8")),
        ({"context_parallel": 2, "task": Task.INFERENCE}, 8, ("context parallel 2", "inference")),
    ],
)
def test_bad_layouts_are_one_line_errors_naming_the_numbers(
    kw: dict[str, object], gpus: int, numbers: tuple[str, ...]
) -> None:
    with pytest.raises(InputError) as err:
        estimate(_llm(**kw), H100, gpus)
    msg = err.value.message
    assert "\n" not in msg
    for n in numbers:
        assert n in msg, (n, msg)


def test_cli_layout_flags_end_to_end() -> None:
    args = [
        "estimate", "--model", "llama3-70b", "--gpu", "H100", "--gpus", "32", "--nodes", "4",
        "--tp", "8", "--pp", "4", "--vp", "2", "--grad-accum", "16", "--batch-size", "1",
        "--seq-len", "8192", "--recompute", "selective", "--no-sequence-parallel", "--json",
    ]  # fmt: skip
    code, out, err = run_cli(*args)
    assert code == 0, err
    import json

    doc = json.loads(out)
    assert doc["nodes"] == 4 and doc["communication_time_s"] > 0
    code, text, err = run_cli(*args[:-1])
    assert code == 0, err
    # 4 stages, 16 micro-batches, 2 virtual stages: 3 / (2 x 16 + 3) = 8.6 %
    assert "TP8 x PP4 (VP2) x DP1, sharding none, recompute selective" in text
    assert "bubble 8.6%" in text
    code, _, err = run_cli(*args[:-1], "--vp", "21")
    assert code == 2
    assert "4 x 21 = 84" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli(
        "estimate", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--cp", "2",
        "--seq-len", "1001",
    )  # fmt: skip
    assert code == 2 and "context parallel 2" in err and "1001" in err


# --- CPU offload -----------------------------------------------------------------------------


@pytest.mark.parametrize("sharding", [Sharding.ZERO1, Sharding.ZERO3, Sharding.HSDP])
def test_cpu_offload_frees_memory_and_pays_pcie(sharding: Sharding) -> None:
    w = _llm(sharding=sharding, batch_size_per_gpu=2)
    on_gpu = estimate(w, H100, 16, nodes=2)
    off = estimate(dataclasses.replace(w, cpu_offload=True), H100, 16, nodes=2)
    assert off.memory.optimizer_gib == 0.0 < on_gpu.memory.optimizer_gib
    assert off.memory.total_gib < on_gpu.memory.total_gib
    assert off.throughput < on_gpu.throughput
    # a slower host link never makes offload faster; more accumulation amortises it
    gen4 = dataclasses.replace(H100, pcie_gen=4)
    assert estimate(dataclasses.replace(w, cpu_offload=True), gen4, 16, nodes=2).throughput < (
        off.throughput
    )
    more = dataclasses.replace(w, cpu_offload=True, gradient_accumulation=8)
    assert estimate(more, H100, 16, nodes=2).throughput >= off.throughput


def test_uneven_virtual_chunks_run_as_megatron_layouts_allow() -> None:
    """80 layers in 4 x 3 = 12 chunks do not divide evenly; Megatron-LM runs such layouts
    (--pipeline-model-parallel-layout), so it is estimated, and its bubble is the interleaved
    one: smaller than 1F1B's at the same micro-batches."""
    kw = {"model": "llama3-70b", "pipeline_parallel": 4, "gradient_accumulation": 8}
    one = estimate(_llm(**kw), H100, 8)
    three = estimate(_llm(**kw, virtual_pipeline_stages=3), H100, 8)
    assert three.throughput > one.throughput
