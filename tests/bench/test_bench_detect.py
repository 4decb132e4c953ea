"""Hardware detection and the guarded estimator hook."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import gpurent.estimate
from gpurent.bench.detect import cpu_model, detect_hardware, read_pcie_link
from gpurent.bench.runner import estimator_expectations
from gpurent.catalog import find_gpu


def test_cpu_model_from_cpuinfo(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: AMD EPYC 9654 96-Core Processor\n")
    assert cpu_model(info) == "AMD EPYC 9654 96-Core Processor"
    assert cpu_model(tmp_path / "missing")  # falls back to platform, never empty


def test_detect_on_cpu() -> None:
    hw = detect_hardware(torch, "cpu")
    assert hw.device == "cpu" and hw.gpu_count == 0 and hw.gpu_name is None
    assert hw.cpu_logical_cores >= 1 and hw.torch_version == torch.__version__


def test_no_nvml_reading_without_a_gpu() -> None:
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    assert read_pcie_link(0) is None


def test_estimator_hook_absent_then_used(monkeypatch: pytest.MonkeyPatch, bb) -> None:
    if not hasattr(gpurent.estimate, "estimate"):
        assert estimator_expectations() is None

    class FakeEstimate:
        throughput = 2500.0
        throughput_unit = "images/s"
        basis = "roofline"

    seen = []

    def fake(workload, gpu, n):
        seen.append((workload.model, workload.batch_size_per_gpu, gpu.name, n))
        return FakeEstimate()

    monkeypatch.setattr(gpurent.estimate, "estimate", fake, raising=False)
    expect = estimator_expectations()
    assert expect is not None
    got = expect(bb.model_run(), find_gpu("H200"), 1)
    assert got is not None and got.value == 2500.0 and got.threshold == 0.7
    assert got.source == "gpurent estimator (roofline)"
    assert seen == [("resnet50", 256, "H200-SXM-141GB", 1)]
    assert expect(bb.model_run(config="cpu-small: x"), find_gpu("H200"), 1) is None
    wrong_unit = bb.model_run(model="gpt-decoder", throughput_unit="tokens/s")
    assert expect(wrong_unit, find_gpu("H200"), 1) is None  # units differ: no comparison
