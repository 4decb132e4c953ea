"""The tuned stack's fused SwiGLU keeps 3 ffn values per token for backward, eager PyTorch 4."""

from __future__ import annotations

import json
import math
from dataclasses import replace

from tests.conftest import run_cli as run

from gpurent.catalog import Precision, get_gpu
from gpurent.estimate import estimate
from gpurent.estimate.memory import (
    GATED_MLP_SAVED_EAGER,
    GATED_MLP_SAVED_FUSED,
    fuses_swiglu,
    llm_layer_activation_values,
    llm_mlp_activation_values,
)
from gpurent.workload import Sharding, Stack, Workload
from gpurent.workload.models import get_model

# MLPerf Training v5.0, Nebius, 64 x 8 H200 (mlcommons/training_results_v5.0 @ 0fdc28f,
# Nebius/results/nebius_soperator_8xH200_n64_ngc25.01_nemo/llama31_405b/): a configuration
# that ran, a row of the tuned stack's training split (benchmarks/data/mlperf_llm_pretrain_fit.csv).
NEBIUS_405B = Workload(
    model="llama3.1-405b",
    precision=Precision.FP8,
    batch_size_per_gpu=1,
    seq_len=8192,
    tensor_parallel=4,
    pipeline_parallel=8,
    virtual_pipeline_stages=8,
    context_parallel=2,
    gradient_accumulation=144,
    sharding=Sharding.ZERO1,
    stack=Stack.TUNED,
)


def test_a_gated_mlp_keeps_four_ffn_values_eager_and_three_fused() -> None:
    llama = get_model("llama3-8b")
    assert llm_mlp_activation_values(llama) == GATED_MLP_SAVED_EAGER * 14336
    assert llm_mlp_activation_values(llama, fused_swiglu=True) == GATED_MLP_SAVED_FUSED * 14336
    eager, fused = (
        llm_layer_activation_values(llama),
        llm_layer_activation_values(llama, fused_swiglu=True),
    )
    assert eager - fused == 14336  # the SiLU output, recomputed in backward


def test_a_plain_mlp_is_the_same_on_every_stack() -> None:
    gpt2 = get_model("gpt2")
    assert llm_mlp_activation_values(gpt2) == llm_mlp_activation_values(gpt2, fused_swiglu=True)


def test_only_the_tuned_stack_fuses() -> None:
    assert fuses_swiglu(NEBIUS_405B)
    for stack in Stack:
        if stack is not Stack.TUNED:
            assert not fuses_swiglu(Workload(model="llama3-8b", stack=stack)), stack


def test_the_mlperf_405b_h200_run_fits_and_the_eager_count_is_the_larger_by_the_silu_output() -> (
    None
):
    h200 = get_gpu("H200-SXM-141GB")
    tuned = estimate(NEBIUS_405B, h200, 512, nodes=64)
    assert tuned.fits, tuned.memory  # it ran; 141.8 GiB of 140.4 before the fused count
    eager = estimate(replace(NEBIUS_405B, stack=Stack.NGC_24), h200, 512, nodes=64)
    model = get_model("llama3.1-405b")
    ratio = llm_layer_activation_values(model) / llm_layer_activation_values(
        model, fused_swiglu=True
    )
    assert math.isclose(
        eager.memory.activations_gib / tuned.memory.activations_gib, ratio, rel_tol=1e-9
    )
    assert math.isclose(eager.memory.weights_gib, tuned.memory.weights_gib)


def test_the_cli_says_the_405b_run_fits_on_the_tuned_stack() -> None:
    code, out, err = run(
        "estimate", "--model", "llama3.1-405b", "--gpu", "H200-SXM-141GB", "--gpus", "512",
        "--nodes", "64", "--precision", "fp8", "--batch-size", "1", "--seq-len", "8192",
        "--tp", "4", "--pp", "8", "--vp", "8", "--cp", "2", "--grad-accum", "144",
        "--sharding", "zero1", "--stack", "tuned", "--json",
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    assert doc["fits"] is True
    assert doc["memory"]["total_gib"] < doc["memory"]["capacity_gib"]
