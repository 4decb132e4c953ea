"""DeepSeek-V3, gpt-oss and Flux.1-dev in the zoo (issue 18): counts against their sources,
multi-head latent attention's KV cache and attention FLOPs, and the CLI end to end."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
from tests.conftest import run_cli as run

from gpurent.catalog import Precision, get_gpu
from gpurent.estimate import estimate
from gpurent.estimate.memory import llm_layer_activation_values
from gpurent.units import BYTES_PER_GIB
from gpurent.workload import Task, Workload
from gpurent.workload.models import get_model
from gpurent.workload.zoo import (
    llm_active_params,
    llm_attention_flops_per_token,
    llm_expert_params_total,
    llm_flops_per_token,
    llm_kv_cache_values,
    llm_kv_cache_values_per_token,
    llm_params,
)

# (model, total parameters, active per token as the zoo counts them, active without the input
# embedding as the source states them)
PUBLISHED = [
    # DeepSeek-V3 README_WEIGHTS.md: 671B total, 36.6B activated incl. the 0.9B output head;
    # arXiv:2412.19437, abstract: 671B, 37B activated per token
    ("deepseek-v3", 671e9, 37e9, 36.6e9),
    # OpenAI, gpt-oss model card (arXiv:2508.10925): 116.8B total, 5.13B active; 20.9B, 3.6B.
    # The card leaves the input embedding (201088 x 2880 = 0.58B) out of its active counts
    ("gpt-oss-120b", 116.8e9, 5.13e9 + 0.579e9, 5.13e9),
    ("gpt-oss-20b", 20.9e9, 3.6e9 + 0.579e9, 3.6e9),
]


@pytest.mark.parametrize(("model", "total", "active", "active_no_embedding"), PUBLISHED)
def test_total_and_active_parameters_match_the_source_within_2_percent(
    model: str, total: float, active: float, active_no_embedding: float
) -> None:
    shape = get_model(model).llm
    assert shape is not None and shape.is_moe
    assert llm_params(shape) == pytest.approx(total, rel=0.02)
    assert llm_active_params(shape) == pytest.approx(active, rel=0.02)
    embedding = shape.vocab * shape.hidden
    assert llm_active_params(shape) - embedding == pytest.approx(active_no_embedding, rel=0.02)
    # forward FLOPs of a 1-token context: 2 x the active parameters without the input embedding
    # (a lookup), the published count that leaves it out
    assert llm_flops_per_token(shape, 1, training=False) == pytest.approx(
        2 * active_no_embedding, rel=0.02
    )


def test_deepseek_dense_layers_and_shared_expert_are_counted_and_not_split_by_ep() -> None:
    shape = get_model("deepseek-v3").llm
    assert shape is not None and shape.moe_layers == 58
    routed = 58 * 256 * 3 * 7168 * 2048
    assert llm_expert_params_total(shape) == routed
    expert = 3 * 7168 * 2048
    # the shared expert runs on every token of the 58 MoE layers
    no_shared = replace(shape, shared_experts=0)
    assert llm_active_params(shape) - llm_active_params(no_shared) == 58 * expert
    # each of the 3 dense layers holds an 18432-wide MLP instead of 256 experts, a router and
    # the shared expert
    all_moe = replace(shape, dense_layers=0)
    moe_mlp = 256 * (expert + 7168) + expert
    assert llm_params(all_moe) - llm_params(shape) == 3 * (moe_mlp - 3 * 7168 * 18432)


def test_mla_caches_the_latent_not_per_head_keys_and_values() -> None:
    """DeepSeek-V3 caches kv_lora_rank + qk_rope_head_dim = 576 values per token and layer
    (arXiv:2412.19437 section 2.1.1), not 2 x 128 heads x 128."""
    model = get_model("deepseek-v3")
    shape = model.llm
    assert shape is not None
    assert llm_kv_cache_values_per_token(shape) == 61 * (512 + 64)
    wl = Workload(
        model="deepseek-v3",
        task=Task.INFERENCE,
        precision=Precision.FP8,
        batch_size_per_gpu=4,
        seq_len=4096,
        output_tokens=1024,
        tensor_parallel=8,
    )
    est = estimate(wl, get_gpu("H200"), 8)
    expected = 61 * 576 * (4096 + 1024) * 4 * 2 / 8  # 16-bit cache, split over tp 8
    assert est.memory.kv_cache_gib == pytest.approx(expected / BYTES_PER_GIB, rel=1e-9)
    mha = replace(shape, mla=None, kv_heads=128, head_dim=128)
    assert llm_kv_cache_values_per_token(mha) / llm_kv_cache_values_per_token(shape) > 50


def test_mla_attention_flops_use_its_head_dimensions() -> None:
    """Causal scores and values per token and layer: 2 x heads x (qk 192 + v 128) x s / 2
    forward, i.e. a width of 20480, not the hidden 7168."""
    shape = get_model("deepseek-v3").llm
    assert shape is not None
    s = 4096
    attn = llm_flops_per_token(shape, s, training=False) - llm_flops_per_token(
        shape, 0, training=False
    )
    assert attn == pytest.approx(2.0 * 61 * 128 * (192 + 128) / 2 * s)


def test_gpt_oss_sliding_window_layers_cache_and_attend_at_most_128_tokens() -> None:
    """gpt-oss: 18 of 36 layers attend within a 128-token window, so they cache 128 tokens and
    each query scores at most 128 keys there; the other 18 see the whole context."""
    shape = get_model("gpt-oss-120b").llm
    assert shape is not None
    per_layer = 2 * 8 * 64  # K and V of 8 KV heads of 64
    assert llm_kv_cache_values(shape, 100) == 36 * per_layer * 100
    assert llm_kv_cache_values(shape, 8192) == per_layer * (18 * 8192 + 18 * 128)
    s, w, width = 8192, 128, 2880
    full = 18 * s / 2.0
    windowed = 18 * (w - w * w / (2.0 * s))
    assert llm_attention_flops_per_token(shape, s, training=False) == pytest.approx(
        4.0 * width * (full + windowed)
    )
    dense = replace(shape, sliding_window=0)
    assert llm_attention_flops_per_token(dense, s, training=False) == pytest.approx(
        2.0 * 36 * width * s
    )
    wl = Workload(
        model="gpt-oss-120b",
        task=Task.INFERENCE,
        precision=Precision.BF16,
        batch_size_per_gpu=8,
        seq_len=8192,
        output_tokens=256,
    )
    mem = estimate(wl, get_gpu("H200"), 1).memory
    tokens = 8192 + 256
    expected = per_layer * (18 * tokens + 18 * 128) * 8 * 2
    assert mem.kv_cache_gib == pytest.approx(expected / BYTES_PER_GIB, rel=1e-9)


def test_flux_dev_counts_follow_its_config() -> None:
    """FLUX.1-dev: ~12 B parameters (model card); forward FLOPs of one 1024 px step dominated
    by 57 blocks x 4608 tokens x (12 h^2 + 2 s h) multiply-adds."""
    model = get_model("flux-dev")
    assert model.num_params == pytest.approx(12e9, rel=0.02)
    h, s = 3072, 4096 + 512
    dominant = 2.0 * s * 57 * (12 * h * h + 2 * s * h)
    assert model.forward_flops() == pytest.approx(dominant, rel=0.01)
    assert model.forward_flops() > dominant
    assert model.forward_flops() == pytest.approx(74.4e12, rel=0.005)


@pytest.mark.parametrize(
    ("model", "extra", "unit"),
    [
        ("deepseek-v3", ("--task", "inference", "--tp", "8", "--seq-len", "4096"), "tokens/s"),
        ("gpt-oss-120b", ("--task", "inference", "--seq-len", "8192"), "tokens/s"),
        ("gpt-oss-20b", ("--seq-len", "4096", "--sharding", "zero3"), "tokens/s"),
        ("flux-dev", ("--sharding", "zero3"), "images/s"),
    ],
)
def test_new_models_estimate_end_to_end_with_json(
    model: str, extra: tuple[str, ...], unit: str
) -> None:
    code, out, err = run(
        "estimate", "--model", model, "--gpu", "H200", "--gpus", "8", "--batch-size", "1",
        *extra, "--json",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert data["model"] == model and data["throughput_unit"] == unit
    assert data["throughput"] > 0 and data["memory"]["total_gib"] > 0


# the fewest GPUs whose memory holds the served weights (no activations, no KV cache):
# ceil(params x bytes / (capacity - 0.8 GiB context)), the capacity the estimate reports
@pytest.mark.parametrize(
    ("model", "precision", "gpu", "least"),
    [
        ("deepseek-v3", "bf16", "H100", 16),  # 1250 GiB / 78.8
        ("deepseek-v3", "fp8", "H100", 8),  # 625 GiB
        ("deepseek-v3", "bf16", "H200", 9),  # / 139.6
        ("deepseek-v3", "fp8", "H200", 5),
        ("gpt-oss-120b", "bf16", "H100", 3),  # 217.5 GiB
        ("gpt-oss-120b", "fp8", "H100", 2),
    ],
)
def test_a_model_that_does_not_fit_says_how_many_gpus_its_weights_need(
    model: str, precision: str, gpu: str, least: int
) -> None:
    code, out, err = run(
        "estimate", "--model", model, "--gpu", gpu, "--task", "inference",
        "--precision", precision, "--batch-size", "1", "--json",
    )  # fmt: skip
    assert code == 0, err
    notes = json.loads(out)["notes"]
    said = [n for n in notes if "alone at" in n]
    assert said, notes
    assert f"need at least {least} x {get_gpu(gpu).name}" in said[0]
    assert f"at {precision}" in said[0]


@pytest.mark.parametrize("gpu", ["H100", "H200", "B200"])
def test_least_gpus_shrinks_with_fp8_and_capacity(gpu: str) -> None:
    code, out, err = run(
        "estimate", "--model", "deepseek-v3", "--gpu", gpu, "--task", "inference",
        "--precision", "bf16", "--batch-size", "1", "--json",
    )  # fmt: skip
    assert code == 0, err
    bf16 = json.loads(out)
    code, out, err = run(
        "estimate", "--model", "deepseek-v3", "--gpu", gpu, "--task", "inference",
        "--precision", "fp8", "--batch-size", "1", "--json",
    )  # fmt: skip
    assert code == 0, err
    fp8 = json.loads(out)

    def least(est: dict[str, object]) -> int:
        notes = est["notes"]
        assert isinstance(notes, list)
        line = next(n for n in notes if "alone at" in n)
        return int(line.split("need at least ")[1].split(" x ")[0])

    capacity = bf16["memory"]
    assert isinstance(capacity, dict)
    usable = (capacity["capacity_gib"] - 0.8) * BYTES_PER_GIB
    params = get_model("deepseek-v3").num_params
    assert least(bf16) == math.ceil(2 * params / usable)
    assert least(fp8) == math.ceil(params / usable) < least(bf16)


@pytest.mark.parametrize("model", ["qwen3-30b-a3b", "deepseek-v3", "gpt-oss-120b"])
def test_serving_reads_the_kv_cache_the_shape_implies(model: str) -> None:
    """Decode time per token = (weights + KV cache x batch) / bandwidth: its batch slope over
    its intercept is the cache's bytes over the weights', whatever the bandwidth. Qwen3 MoE's
    128-wide heads on a 2,048 hidden size were once counted at 64 (half the cache)."""
    info = get_model(model)
    shape = info.llm
    assert shape is not None
    prompt, out = 4096, 256

    def memory_time(batch: int) -> float:
        wl = Workload(
            model=model,
            task=Task.INFERENCE,
            precision=Precision.BF16,
            batch_size_per_gpu=batch,
            seq_len=prompt,
            output_tokens=out,
        )
        return estimate(wl, get_gpu("B200"), 1).memory_time_s

    m1, m3 = memory_time(1), memory_time(3)
    slope = (m3 - m1) / 2
    intercept = m1 - slope
    kv = llm_kv_cache_values(shape, prompt + out / 2)
    assert slope / intercept == pytest.approx(kv / info.num_params, rel=1e-6)


def test_training_activations_count_the_experts_a_token_visits_and_the_head_widths() -> None:
    """Per token and layer: norms 4 h, q/k/v/output by their head widths, and the MLP
    intermediates of every expert a token runs (gpt-oss: 4 of 2,880; DeepSeek-V3: 8 routed + 1
    shared of 2,048), not one expert's; a dense model keeps 6 h + 2 kv + 4 ffn."""
    gpt = get_model("gpt-oss-120b")
    assert llm_layer_activation_values(gpt) == 4 * 2880 + 2 * 64 * 64 + 2 * 8 * 64 + 4 * 4 * 2880
    ds = get_model("deepseek-v3")
    attn = 4 * 7168 + 2 * 128 * 192 + 2 * 128 * 128 + (1536 + 512 + 64)
    assert llm_layer_activation_values(ds) == attn + 4 * 9 * 2048
    llama = get_model("llama3-8b")
    assert llm_layer_activation_values(llama) == 6 * 4096 + 2 * 8 * 128 + 4 * 14336
