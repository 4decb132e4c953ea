"""Fits is judged against the memory a job can allocate, not the datasheet's nominal figure."""

from __future__ import annotations

import dataclasses

from gpurent.catalog import get_gpu
from gpurent.estimate import estimate
from gpurent.workload import preset


def test_reported_usable_memory_is_the_capacity() -> None:
    l4 = get_gpu("L4")
    assert l4.memory_gib == 24 and l4.usable_memory_gib == 22.35
    assert l4.capacity_gib == 22.35
    a100 = get_gpu("A100-SXM4-40GB")
    assert a100.usable_memory_gib is None and a100.capacity_gib == a100.memory_gib


def test_a_job_between_usable_and_nominal_memory_does_not_fit() -> None:
    l4 = get_gpu("L4")
    # llama3-8b serving, 512-token prompts + 256 generated: batch 45 needs ~22.8 GiB per GPU,
    # above the 22.35 GiB an L4 lets a job allocate and below its nominal 24.
    work = dataclasses.replace(preset("llm-inference"), batch_size_per_gpu=45)
    est = estimate(work, l4)
    nominal = estimate(work, dataclasses.replace(l4, usable_memory_gib=None))
    assert l4.capacity_gib < est.memory.total_gib <= l4.memory_gib
    assert est.memory.total_gib == nominal.memory.total_gib
    assert not est.fits
    assert nominal.fits
