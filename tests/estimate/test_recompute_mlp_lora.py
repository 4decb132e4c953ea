"""`recompute = mlp` under the tuned stack's fp8 LoRA memory count: that count already keeps
only what the MLPerf recipe stores (no frozen GEMM inputs, the SwiGLU input in fp8), so the
activation memory keeps its own rule while the step still pays the recomputed MLP forward; a
run outside that count drops its MLP intermediates."""

from __future__ import annotations

from dataclasses import replace

from gpurent.catalog import Precision, get_gpu
from gpurent.estimate import estimate
from gpurent.workload import Task, Workload
from gpurent.workload.spec import Recompute, Stack

LORA = Workload(
    model="llama2-70b",
    precision=Precision.FP8,
    batch_size_per_gpu=1,
    seq_len=8192,
    task=Task.FINETUNE_LORA,
    lora_rank=16,
    stack=Stack.TUNED,
    tensor_parallel=4,
)


def test_tuned_fp8_lora_keeps_its_memory_count_and_pays_the_recompute_time() -> None:
    gpu = get_gpu("H100")
    plain = estimate(replace(LORA, recompute=Recompute.NONE), gpu, 8)
    mlp = estimate(replace(LORA, recompute=Recompute.MLP), gpu, 8)
    assert mlp.memory.activations_gib == plain.memory.activations_gib
    assert mlp.throughput < plain.throughput


def test_outside_that_count_mlp_recompute_frees_the_intermediates() -> None:
    gpu = get_gpu("H100")
    bf16 = replace(LORA, precision=Precision.BF16, stack=Stack.NGC_24)
    plain = estimate(replace(bf16, recompute=Recompute.NONE), gpu, 8)
    mlp = estimate(replace(bf16, recompute=Recompute.MLP), gpu, 8)
    assert mlp.memory.activations_gib < plain.memory.activations_gib
    assert mlp.throughput < plain.throughput
