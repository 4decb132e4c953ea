"""Builders of bench result objects for the pure tests."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpurent.bench.result import (
    BenchResult,
    CalibrationRow,
    HardwareInfo,
    Measurement,
    ModelRun,
)

CPU_HW = HardwareInfo(
    device="cpu",
    cpu_model="Test CPU",
    cpu_logical_cores=2,
    gpu_count=0,
    gpu_name=None,
    gpu_catalog_name=None,
    gpu_memory_gib=None,
    pcie_gen_current=None,
    pcie_gen_max=None,
    pcie_width_current=None,
    pcie_width_max=None,
    driver_version=None,
    torch_version="2.13.0",
)

H200_HW = replace(
    CPU_HW,
    device="cuda",
    gpu_count=8,
    gpu_name="NVIDIA H200",
    gpu_catalog_name="H200-SXM-141GB",
    gpu_memory_gib=139.8,
    pcie_gen_current=5,
    pcie_gen_max=5,
    pcie_width_current=16,
    pcie_width_max=16,
    driver_version="560.35",
)


def meas(key: str, value: float | None, unit: str = "GB/s", detail: str = "test") -> Measurement:
    return Measurement(
        key=key, benchmark=key.split(".", maxsplit=1)[0], value=value, unit=unit, detail=detail
    )


def model_run(model: str = "resnet50", throughput: float = 100.0, **kw: object) -> ModelRun:
    base = ModelRun(
        model=model,
        config="full: test",
        device="cuda",
        world_size=1,
        precision="bf16",
        batch_size=256,
        seq_len=None,
        warmup_steps=10,
        timed_steps=100,
        step_time_median_s=0.1,
        step_time_p10_s=0.09,
        step_time_p90_s=0.12,
        samples_per_s=throughput,
        throughput=throughput,
        throughput_unit="images/s",
        flops_per_step=1e12,
        achieved_tflops=10.0,
        mfu=0.01,
        mfu_basis="test",
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def bench_result(
    measurements: tuple[Measurement, ...] = (),
    runs: tuple[ModelRun, ...] = (),
    hw: HardwareInfo = CPU_HW,
    calibration: tuple[CalibrationRow, ...] = (),
) -> BenchResult:
    from gpurent.bench.expect import build_expectations
    from gpurent.bench.verdict import judge
    from gpurent.catalog import find_gpu

    spec = find_gpu(hw.gpu_name) if hw.gpu_name else None
    exp = build_expectations(hw, spec, measurements, runs)
    return BenchResult(
        created_at="2026-11-30T00:00:00+00:00",
        quick=True,
        duration_s=1.5,
        hardware=hw,
        measurements=measurements,
        model_runs=runs,
        verdict=judge(hw, measurements, runs, exp),
        calibration_rows=calibration,
        notes=("a note",),
    )


@pytest.fixture()
def cpu_result() -> BenchResult:
    return bench_result(
        (
            meas("matmul.fp32", 0.2, "TFLOP/s"),
            meas("matmul.numpy-fp32", 0.25, "TFLOP/s"),
            meas("membw.copy", 20.0),
            meas("disk.seq-read", 0.2),
            meas("hostdev.host-memcpy", 5.0),
        ),
        (model_run(device="cpu", config="cpu-small: x"),),
    )


class Builders:
    """The builders above, handed to tests through the `bb` fixture."""

    cpu_hw = CPU_HW
    h200_hw = H200_HW
    meas = staticmethod(meas)
    model_run = staticmethod(model_run)
    bench_result = staticmethod(bench_result)


@pytest.fixture(scope="session")
def bb() -> type[Builders]:
    return Builders
