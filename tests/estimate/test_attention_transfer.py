"""Attention on other GPUs: fused attention kernels realize about the same share of each
generation's tensor peak, so decoder-LLM attention moves between Ampere, Ada, Hopper and
Blackwell by the peak ratio; other GPUs keep the BERT-large transfer ratio."""

from __future__ import annotations

import pytest

from gpurent.catalog import Precision, get_gpu
from gpurent.estimate import estimate
from gpurent.estimate.estimator import (
    FLASH_ATTENTION_ARCHITECTURES,
    attention_speed_ratio,
    bundled_estimator,
)
from gpurent.workload import AttentionKernel, Workload


def test_flash_attention_gpus_move_by_the_peak_ratio_others_by_the_transfer_ratio() -> None:
    a100, h100, v100 = get_gpu("A100-SXM4-80GB"), get_gpu("H100"), get_gpu("V100-SXM2-32GB")
    assert {a100.architecture, h100.architecture} <= FLASH_ATTENTION_ARCHITECTURES
    bf16 = Precision.BF16
    assert attention_speed_ratio(h100, a100, bf16, 0.5) == pytest.approx(312.0 / 989.0)
    assert attention_speed_ratio(v100, a100, bf16, 0.7) == 0.7  # Volta: no FlashAttention-2
    assert attention_speed_ratio(get_gpu("MI300X"), a100, bf16, 0.6) == 0.6


def _tokens_per_s(gpu: str, seq: int) -> float:
    wl = Workload(
        model="llama3-8b",
        precision=Precision.BF16,
        batch_size_per_gpu=1,
        seq_len=seq,
        attention_kernel=AttentionKernel.FITTED,  # the fitted term, moved by the peak ratio
    )
    return estimate(wl, get_gpu(gpu), 8).throughput


def test_long_context_gains_more_from_a_newer_gpu_than_short_context() -> None:
    """Attention weighs more at long context, and it is what moves by the whole peak ratio."""
    short = _tokens_per_s("H100", 2048) / _tokens_per_s("A100-SXM4-80GB", 2048)
    long = _tokens_per_s("H100", 65536) / _tokens_per_s("A100-SXM4-80GB", 65536)
    assert 1.0 < short < long < 989.0 / 312.0
    # the reference GPU itself is what the constants were fitted on: unchanged by the rule
    engine = bundled_estimator()
    ref = engine.reference_gpu
    assert attention_speed_ratio(ref, ref, Precision.BF16, 1.0) == 1.0
