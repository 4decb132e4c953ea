"""Decoder LLMs count causal attention (the lower triangle), encoders the full square (issue 12,
round 11): through the zoo's public API, the estimate's MFU and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import run_cli

from gpurent.catalog import get_gpu, parse_precision
from gpurent.estimate import estimate
from gpurent.workload import get_model
from gpurent.workload.spec import Workload
from gpurent.workload.zoo import llm_flops_per_token


def _training_flops_per_token(name: str, seq: int) -> float:
    model = get_model(name)
    return 3.0 * model.forward_flops(seq) / model.units_per_sample(seq)


def test_llama3_8b_training_flops_at_8k_are_6n_plus_6lhs() -> None:
    model = get_model("llama3-8b")
    shape = model.llm
    assert shape is not None and (shape.layers, shape.hidden) == (32, 4096)
    # N: the weights a token multiplies with, without the untied input embedding (a lookup):
    # 8.03B - 128,256 x 4,096 = 7.50B, the count of ml-engineering's benchmark.py (7.505B)
    n = model.num_params - shape.vocab * shape.hidden
    assert n == pytest.approx(7.505e9, rel=0.001)
    causal = 6.0 * n + 6.0 * shape.layers * shape.hidden * 8192
    full = 6.0 * n + 12.0 * shape.layers * shape.hidden * 8192
    got = _training_flops_per_token("llama3-8b", 8192)
    assert got == pytest.approx(causal, rel=0.01)
    assert abs(got - full) / full > 0.08  # far from the full-square (PaLM) count
    assert llm_flops_per_token(shape, 8192) == pytest.approx(got, rel=1e-9)


@pytest.mark.parametrize("name", ["llama3-8b", "mpt-7b", "gpt2", "mistral-7b", "llama3-70b"])
def test_decoder_attention_grows_by_2lh_per_token_forward(name: str) -> None:
    model = get_model(name)
    shape = model.llm
    assert shape is not None
    short, long = 2048, 65536
    per_tok = [model.forward_flops(s) / s for s in (short, long)]
    assert per_tok[1] - per_tok[0] == pytest.approx(
        2.0 * shape.layers * shape.hidden * (long - short), rel=1e-9
    )


@pytest.mark.parametrize("name", ["bert-large-pretrain", "bert-base-squad"])
def test_encoders_keep_the_full_attention_count(name: str) -> None:
    model = get_model(name)
    enc = model.encoder
    assert enc is not None
    short, long = 128, 512
    per_tok = [model.forward_flops(s) / s for s in (short, long)]
    assert per_tok[1] - per_tok[0] == pytest.approx(
        4.0 * enc.layers * enc.hidden * (long - short), rel=1e-9
    )


SEQS = (2048, 8192, 32768, 65536, 131072)


def test_long_over_short_context_is_monotone() -> None:
    """Per-token FLOPs grow and estimated tokens/s fall with the context at a fixed number of
    tokens per micro-batch (at one sequence per GPU a longer one also amortises the per-step
    overhead over more tokens, so tokens/s may rise: measured runs do that too), and the
    causal/full ratio of FLOPs per token falls from ~1 towards 1/2."""
    shape = get_model("llama3-8b").llm
    assert shape is not None
    gpu = get_gpu("H100-SXM5-80GB")
    flops, tps, half = [], [], []
    for s in SEQS:
        f = _training_flops_per_token("llama3-8b", s)
        n = get_model("llama3-8b").num_params - shape.vocab * shape.hidden
        half.append(f / (6.0 * n + 12.0 * shape.layers * shape.hidden * s))
        wl = Workload(
            model="llama3-8b",
            precision=parse_precision("bf16"),
            batch_size_per_gpu=SEQS[-1] // s,
            seq_len=s,
            activation_checkpointing=True,
        )
        flops.append(f)
        tps.append(estimate(wl, gpu, 8).throughput)
    assert flops == sorted(flops) and len(set(flops)) == len(flops)
    assert tps == sorted(tps, reverse=True)
    assert half == sorted(half, reverse=True) and 0.5 < half[-1] < 0.6 and half[0] > 0.95


@pytest.mark.parametrize("seq", [4096, 65536])
def test_reported_mfu_uses_the_causal_model_flops(seq: int) -> None:
    model = get_model("llama3-8b")
    assert model.llm is not None
    gpu = get_gpu("H200-SXM-141GB")
    wl = Workload(
        model="llama3-8b", precision=parse_precision("bf16"), batch_size_per_gpu=1, seq_len=seq
    )
    e = estimate(wl, gpu, 8)
    per_gpu = e.throughput / 8
    peak = gpu.peak_tflops(parse_precision("bf16")) * 1e12
    assert e.mfu == pytest.approx(per_gpu * llm_flops_per_token(model.llm, seq) / peak, rel=1e-6)


def test_cli_json_mfu_matches_the_causal_count(tmp_path: Path) -> None:
    code, out, err = run_cli(
        "estimate",
        "--model",
        "llama3-8b",
        "--gpu",
        "H100-SXM5-80GB",
        "--gpus",
        "8",
        "--precision",
        "bf16",
        "--batch-size",
        "1",
        "--seq-len",
        "32768",
        "--sharding",
        "zero3",
        "--json",
    )
    assert code == 0, err
    doc = json.loads(out)
    shape = get_model("llama3-8b").llm
    assert shape is not None
    peak = get_gpu("H100-SXM5-80GB").peak_tflops(parse_precision("bf16")) * 1e12
    want = doc["throughput"] / 8 * llm_flops_per_token(shape, 32768) / peak
    assert doc["mfu"] == pytest.approx(want, rel=1e-6)
