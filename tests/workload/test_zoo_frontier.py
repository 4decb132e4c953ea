"""DeepSeek-V3, gpt-oss and Flux.1-dev in the zoo (issue 18): counts against their sources,
multi-head latent attention's KV cache and attention FLOPs, and the CLI end to end."""

from __future__ import annotations

from dataclasses import replace

import pytest
from typer.testing import CliRunner

from gpurent.catalog import Precision, get_gpu
from gpurent.cli.main import app
from gpurent.estimate import estimate
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
    # arXiv:2412.19437 section 4.2: 671B, 37B activated
    ("deepseek-v3", 671e9, 37e9, 36.6e9),
    # OpenAI, gpt-oss model card (arXiv:2508.10925): 116.8B total, 5.13B active; 20.9B, 3.6B.
    # The card leaves the input embedding (201088 x 2880 = 0.58B) out of its active counts
    ("gpt-oss-120b", 116.8e9, 5.13e9 + 0.579e9, 5.13e9),
    ("gpt-oss-20b", 20.9e9, 3.6e9 + 0.579e9, 3.6e9),
]


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, list(args))
    return r.exit_code, r.stdout, r.stderr


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
    # forward FLOPs of a 1-token context: 2 x the active parameters
    assert llm_flops_per_token(shape, 1, training=False) == pytest.approx(2 * active, rel=0.02)


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
