"""The estimator as one object: its calibration, GPU table and memo are its own (issue 12)."""

from __future__ import annotations

import dataclasses

import pytest

from gpurent.catalog import Precision, all_gpus, get_gpu
from gpurent.errors import DataError
from gpurent.estimate import Calibration, Estimator, MeasuredRow, bundled_estimator, estimate
from gpurent.estimate.constants import load_constants
from gpurent.workload import preset

ROW = MeasuredRow(
    model="resnet50",
    gpu="H100-SXM5-80GB",
    num_gpus=1,
    precision=Precision.AMP,
    batch_size=256,
    throughput=500.0,
)


def test_two_estimators_with_different_calibrations_never_share_a_figure() -> None:
    wl, gpu = preset("resnet50-imagenet"), get_gpu("H100")
    plain = bundled_estimator()
    mine = bundled_estimator(Calibration((ROW,)))
    first = plain.estimate(wl, gpu, 1)
    assert mine.estimate(wl, gpu, 1).throughput == 500.0
    assert mine.estimate(wl, gpu, 1).basis == "measured"
    assert plain.estimate(wl, gpu, 1) == first and first.basis == "calibrated"
    assert plain.with_calibration(Calibration((ROW,))).estimate(wl, gpu, 8).basis == "measured"
    # the one-shot function agrees with the object, both ways
    assert estimate(wl, gpu, 8, measurements=Calibration((ROW,))) == mine.estimate(wl, gpu, 8)
    assert estimate(wl, gpu, 8) == plain.estimate(wl, gpu, 8)


def test_the_memo_is_the_objects_and_can_be_off() -> None:
    wl, gpu = preset("llama-lora"), get_gpu("H100")
    engine = bundled_estimator()
    assert engine.estimate(wl, gpu, 8) is engine.estimate(wl, gpu, 8)
    off = Estimator(constants=load_constants(), gpus=all_gpus(), max_cached=0)
    a, b = off.estimate(wl, gpu, 8), off.estimate(wl, gpu, 8)
    assert a == b and a is not b


def test_gpu_specs_come_from_the_estimators_own_table() -> None:
    h100 = get_gpu("H100")
    faster = dataclasses.replace(h100, memory_bandwidth_gbps=2 * h100.memory_bandwidth_gbps)
    table = tuple(faster if g.name == h100.name else g for g in all_gpus())
    engine = Estimator(constants=load_constants(), gpus=table)
    assert engine.find_gpu("h100") is faster and engine.find_gpu("H100-SXM5-80GB") is faster
    assert bundled_estimator().find_gpu("h100") == h100
    assert engine.find_gpu("no such gpu") is None
    with pytest.raises(DataError, match="A100-SXM4-80GB"):
        Estimator(constants=load_constants(), gpus=(h100,))


def test_bench_expectations_come_from_the_estimator_they_are_given() -> None:
    """`gpurent bench` judges model throughput against the command's estimator, so a GPU and
    model you calibrated is expected at your own figure, as `estimate` and `plan` price it."""
    from gpurent.bench.result import ModelRun
    from gpurent.bench.runner import estimator_expectations

    run = ModelRun(
        model="resnet50",
        config="full: test",
        device="cuda",
        world_size=1,
        precision="amp",
        batch_size=256,
        seq_len=None,
        warmup_steps=10,
        timed_steps=100,
        step_time_median_s=0.5,
        step_time_p10_s=0.5,
        step_time_p90_s=0.5,
        samples_per_s=512.0,
        throughput=512.0,
        throughput_unit="images/s",
        flops_per_step=1e12,
        achieved_tflops=10.0,
        mfu=0.01,
        mfu_basis="test",
    )
    h100 = get_gpu("H100")
    mine = estimator_expectations(bundled_estimator(Calibration((ROW,))).estimate)
    plain = estimator_expectations(bundled_estimator().estimate)
    assert mine is not None and plain is not None
    got, model = mine(run, h100, 1), plain(run, h100, 1)
    assert got is not None and model is not None
    assert got.value == 500.0 and got.source == "gpurent estimator (measured)"
    assert model.value > 4 * got.value and model.source == "gpurent estimator (calibrated)"
