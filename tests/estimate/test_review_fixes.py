"""Regression tests for silently wrong figures found in review."""

from __future__ import annotations

import dataclasses

import pytest

from gpurent.catalog import get_gpu
from gpurent.estimate import estimate
from gpurent.workload import preset


@pytest.mark.parametrize("num_gpus", [2, 8])
def test_llm_inference_throughput_counts_every_data_parallel_replica(num_gpus: int) -> None:
    """Throughput is the total across GPUs: n independent replicas serve n x one replica's load."""
    gpu = get_gpu("H100")
    wl = preset("llm-inference")
    one = estimate(wl, gpu)
    many = estimate(wl, gpu, num_gpus)
    assert many.throughput == pytest.approx(num_gpus * one.throughput)
    assert many.samples_per_s == pytest.approx(num_gpus * one.samples_per_s)
    # tensor parallel over all GPUs: one replica, faster per request, not n x the requests
    tp = estimate(dataclasses.replace(wl, tensor_parallel=num_gpus), gpu, num_gpus)
    assert one.throughput < tp.throughput <= num_gpus * one.throughput * (1 + 1e-9)
