"""Mixture-of-experts zoo entries and expert parallelism (issue 18)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from tests.conftest import run_cli as run

from gpurent.catalog import Precision, get_gpu
from gpurent.errors import InputError
from gpurent.estimate import estimate
from gpurent.estimate.perf import bandwidth_bps, llm_training_features
from gpurent.workload import Sharding, Task, Workload
from gpurent.workload.models import get_model
from gpurent.workload.zoo import (
    llm_active_params,
    llm_flops_per_token,
    llm_matmul_params,
    llm_params,
)

# (model, total parameters, active parameters per token) as each source states them
PUBLISHED = [
    ("mixtral-8x7b", 46.7e9, 12.9e9),  # Mistral AI, "Mixtral of experts" (Dec 2023)
    ("qwen3-30b-a3b", 30.5e9, 3.3e9),  # Qwen/Qwen3-30B-A3B model card
    ("qwen3-235b-a22b", 235e9, 22e9),  # Qwen/Qwen3-235B-A22B model card
]
MIXTRAL = Workload(
    model="mixtral-8x7b", precision=Precision.BF16, batch_size_per_gpu=1, seq_len=4096
)


@pytest.mark.parametrize(("model", "total", "active"), PUBLISHED)
def test_parameters_and_flops_per_token_match_the_source_within_2_percent(
    model: str, total: float, active: float
) -> None:
    shape = get_model(model).llm
    assert shape is not None and shape.is_moe
    assert llm_params(shape) == pytest.approx(total, rel=0.02)
    assert llm_active_params(shape) == pytest.approx(active, rel=0.02)
    # forward FLOPs per token of a 1-token context: 2 x the published active parameters less
    # the untied input embedding (a lookup, no matrix product)
    assert not shape.tied_embeddings
    matmul = active - shape.vocab * shape.hidden
    assert llm_flops_per_token(shape, 1, training=False) == pytest.approx(2 * matmul, rel=0.02)
    # training is 3x forward, attention included (causal: 6 L h s)
    s = 4096
    attn = 6.0 * shape.layers * shape.hidden * s
    assert llm_flops_per_token(shape, s) == pytest.approx(6 * llm_matmul_params(shape) + attn)


def test_dense_models_count_all_parameters_as_active() -> None:
    shape = get_model("llama3-8b").llm
    assert shape is not None and not shape.is_moe
    assert llm_active_params(shape) == llm_params(shape)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--model", "mixtral-8x7b", "--gpus", "8", "--ep", "3"), ("3", "8 experts")),
        (("--model", "mixtral-8x7b", "--gpus", "4", "--ep", "8"), ("8", "4 data-parallel")),
        (("--model", "llama3-8b", "--gpus", "8", "--ep", "2"), ("2", "llama3-8b", "dense")),
    ],
)
def test_bad_expert_parallel_is_one_line_naming_the_numbers(
    args: tuple[str, ...], words: tuple[str, ...]
) -> None:
    code, out, err = run("estimate", *args, "--gpu", "H100", "--batch-size", "1")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    for w in words:
        assert w in err, (w, err)


def test_expert_parallel_shards_the_experts_weights_and_states() -> None:
    gpu = get_gpu("H200")
    one = estimate(MIXTRAL, gpu, 8)
    ep8 = estimate(replace(MIXTRAL, expert_parallel=8), gpu, 8)
    model = get_model("mixtral-8x7b")
    shape = model.llm
    assert shape is not None
    experts = shape.layers * shape.experts * 3 * shape.hidden * (shape.ffn_hidden or 0)
    share = 1.0 - experts / model.num_params * (1 - 1 / 8)
    assert ep8.memory.weights_gib == pytest.approx(one.memory.weights_gib * share, rel=1e-9)
    assert ep8.memory.optimizer_gib == pytest.approx(one.memory.optimizer_gib * share, rel=1e-9)
    assert ep8.memory.total_gib < one.memory.total_gib


@pytest.mark.parametrize("sharding", [Sharding.ZERO1, Sharding.ZERO3])
def test_zero_shards_the_experts_over_the_expert_data_parallel_ranks_only(
    sharding: Sharding,
) -> None:
    # 64 GPUs, ZeRO over all 64: each expert lives on 64 / ep of them, so its optimizer state
    # is split 64 / ep ways (Megatron's expert-data-parallel group); per GPU the training
    # state is then the same at every ep, where dividing the experts by ep and again by 64
    # would shrink it ep-fold
    gpu = get_gpu("H200")
    wl = replace(MIXTRAL, sharding=sharding)
    by_ep = {ep: estimate(replace(wl, expert_parallel=ep), gpu, 64).memory for ep in (1, 2, 8)}
    for ep in (2, 8):
        assert by_ep[ep].optimizer_gib == pytest.approx(by_ep[1].optimizer_gib, rel=1e-9)
    if sharding is Sharding.ZERO3:
        for ep in (2, 8):
            assert by_ep[ep].gradients_gib == pytest.approx(by_ep[1].gradients_gib, rel=1e-9)
    # without sharding each GPU keeps its 1 / ep of the experts' whole state
    plain = {ep: estimate(replace(MIXTRAL, expert_parallel=ep), gpu, 64).memory for ep in (1, 8)}
    assert plain[8].optimizer_gib < plain[1].optimizer_gib


def test_all_to_all_and_imbalance_are_priced_and_said() -> None:
    """With ZeRO-3 over 2 nodes: ep trades the experts' gathers for all-to-alls; the notes
    name both stated terms and the interval is wider than a dense model's."""
    gpu = get_gpu("H100")
    wl = replace(MIXTRAL, expert_parallel=8)
    est = estimate(wl, gpu, 16, nodes=2, inter_node_gbps=3200)
    assert any("all-to-all" in n and "imbalance x1.1" in n for n in est.notes)
    assert "mixture of experts" in est.interval_class
    # 4 GPUs per node: the 8-GPU expert group spans two nodes, so its all-to-alls cross the
    # network and a slow one costs more
    spread = replace(wl, sharding=Sharding.NONE)
    fast = estimate(spread, gpu, 16, nodes=4, inter_node_gbps=3200)
    slow = estimate(spread, gpu, 16, nodes=4, inter_node_gbps=25)
    assert slow.communication_time_s > 2 * fast.communication_time_s


def test_workload_file_and_csv_column(tmp_path: Path) -> None:
    job = tmp_path / "moe.toml"
    job.write_text(
        'model = "qwen3-30b-a3b"\nprecision = "bf16"\nbatch_size_per_gpu = 1\n'
        "seq_len = 4096\nep = 4\n",
        encoding="utf-8",
    )
    code, out, err = run("estimate", "--workload", str(job), "--gpu", "H100", "--gpus", "8")
    assert code == 0, err
    assert "EP4" in out
    csv = tmp_path / "rows.csv"
    csv.write_text(
        "model,gpu,num_gpus,precision,batch_size,seq_len,ep\n"
        "mixtral-8x7b,H100,8,bf16,1,4096,8\n"
        "mixtral-8x7b,H100,8,bf16,1,4096,5\n",
        encoding="utf-8",
    )
    code, out, err = run("estimate", "--from-csv", str(csv), "--json")
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert rows[0]["throughput"] > 0
    assert "expert parallel 5 does not divide" in rows[1]["error"]


def test_api_error() -> None:
    with pytest.raises(InputError, match="does not divide mixtral-8x7b's 8 experts"):
        estimate(replace(MIXTRAL, expert_parallel=6), get_gpu("H100"), 12)


def test_planner_lays_moe_models_out_with_expert_parallelism() -> None:
    from gpurent.plan.layouts import candidate_layouts

    moe = list(candidate_layouts(MIXTRAL, 8, 1))
    assert moe and all(lay.expert_parallel == 8 for lay in moe if lay.tensor_parallel == 1)
    assert all(8 % lay.expert_parallel == 0 for lay in moe)
    assert any("EP8" in lay.label for lay in moe)
    dense = list(candidate_layouts(replace(MIXTRAL, model="llama3-8b"), 8, 1))
    assert all(lay.expert_parallel == 1 for lay in dense)
    # every candidate is one the estimator accepts
    for lay in moe:
        estimate(lay.apply(MIXTRAL), get_gpu("H100"), 8)


def test_token_dispatch_adds_activation_traffic_per_routed_expert() -> None:
    """Each MoE layer keeps a token's hidden state once per routed expert and gets it back once
    per expert: 4 k h bytes per token per MoE layer on top of a dense layer's 34 h."""
    model = get_model("qwen3-30b-a3b")
    s = model.llm
    assert s is not None and s.is_moe
    gpu = get_gpu("H100")
    x_mem = llm_training_features(
        model, gpu, Precision.BF16, Task.TRAINING, batch=1, seq_len=4096, checkpointing=False
    )[2]
    dense = 34.0 * 4096 * s.hidden * s.layers
    dispatch = 4.0 * s.experts_per_token * s.hidden * 4096 * s.moe_layers
    assert x_mem * bandwidth_bps(gpu) == pytest.approx(dense + dispatch, rel=1e-9)


@pytest.mark.parametrize("name", ["llama3-8b", "mixtral-8x7b", "gpt2", "mpt-7b"])
def test_the_input_embedding_is_a_lookup_and_a_tied_head_counts_once(name: str) -> None:
    """Matmul weights = active parameters less an untied input embedding; a tied model's one
    embedding matrix is its output layer, so nothing is taken off."""
    shape = get_model(name).llm
    assert shape is not None
    lookup = 0 if shape.tied_embeddings else shape.vocab * shape.hidden
    assert llm_matmul_params(shape) == llm_active_params(shape) - lookup
    assert llm_flops_per_token(shape, 1, training=False) == pytest.approx(
        2.0 * llm_matmul_params(shape) + 2.0 * shape.layers * shape.hidden, rel=0.05
    )
