"""The tuned stack's attention under context parallelism runs longer: 1 + a (cp - 1) / cp."""

from __future__ import annotations

import dataclasses

import pytest

from gpurent.catalog import Precision, all_gpus, get_gpu
from gpurent.estimate import Estimator, load_constants
from gpurent.estimate.estimator import cp_attention_stretch
from gpurent.workload import Stack, Workload


def _estimator(overhead: float | None = None) -> Estimator:
    k = load_constants()
    if overhead is not None:
        tuned = dataclasses.replace(k.stacks["tuned"], cp_attention_overhead=overhead)
        k = dataclasses.replace(k, stacks={**k.stacks, "tuned": tuned})
    return Estimator(constants=k, gpus=all_gpus(), max_cached=0)


def _llama(cp: int, stack: Stack = Stack.TUNED) -> Workload:
    return Workload(
        model="llama3-8b",
        precision=Precision.FP8,
        batch_size_per_gpu=1,
        seq_len=8192,
        context_parallel=cp,
        stack=stack,
    )


def test_the_stretch_is_one_without_context_parallelism_or_the_tuned_stack() -> None:
    tuned = load_constants().stacks["tuned"]
    assert cp_attention_stretch(None, 4) == 1.0
    assert cp_attention_stretch(tuned, 1) == 1.0
    a = tuned.cp_attention_overhead
    assert a > 0.0  # fitted on the MLPerf rows with cp > 1 (fit_tuned_stack.py)
    assert cp_attention_stretch(tuned, 2) == pytest.approx(1.0 + a / 2)
    stretches = [cp_attention_stretch(tuned, cp) for cp in (1, 2, 4, 8, 16)]
    assert stretches == sorted(stretches) and stretches[-1] < 1.0 + a


def test_a_cp2_step_of_the_tuned_stack_is_slower_with_the_stretch_and_cp1_is_not() -> None:
    h100 = get_gpu("H100")
    on, off = _estimator(), _estimator(0.0)
    cp2_on = on.estimate(_llama(2), h100, 64, nodes=8)
    cp2_off = off.estimate(_llama(2), h100, 64, nodes=8)
    assert cp2_on.step_time_s > cp2_off.step_time_s
    cp1_on = on.estimate(_llama(1), h100, 64, nodes=8)
    cp1_off = off.estimate(_llama(1), h100, 64, nodes=8)
    assert cp1_on.step_time_s == pytest.approx(cp1_off.step_time_s)
    # the estimate says why: the note names the factor, and only where it applies
    assert any("context parallel 2: attention takes x1.50" in n for n in cp2_on.notes)
    assert not any("attention takes" in n for n in cp1_on.notes + cp2_off.notes)


def test_other_stacks_never_read_it() -> None:
    h100 = get_gpu("H100")
    big = _estimator(5.0).estimate(_llama(2, Stack.NGC_24), h100, 64, nodes=8)
    none = _estimator(0.0).estimate(_llama(2, Stack.NGC_24), h100, 64, nodes=8)
    assert big.step_time_s == pytest.approx(none.step_time_s)
