"""Evidence files for the vendors tests, written through gpurent's own bench code paths."""

from __future__ import annotations

import json
from pathlib import Path

from gpurent.bench.expect import build_expectations
from gpurent.bench.result import BenchResult, HardwareInfo, Measurement, save_result
from gpurent.bench.verdict import judge
from gpurent.catalog.specs import find_gpu


def write_bench(path: Path, *, matmul: float, membw: float) -> Path:
    """An 8x H100-SXM bench result with these bf16 matmul TFLOP/s and copy GB/s."""
    spec = find_gpu("H100 SXM")
    assert spec is not None
    hw = HardwareInfo(
        device="cuda",
        cpu_model="test",
        cpu_logical_cores=8,
        gpu_count=8,
        gpu_name="NVIDIA H100 80GB HBM3",
        gpu_catalog_name=spec.name,
        gpu_memory_gib=79.6,
        pcie_gen_current=5,
        pcie_gen_max=5,
        pcie_width_current=16,
        pcie_width_max=16,
        driver_version="test",
        torch_version="test",
    )
    ms = (
        Measurement(key="matmul.bf16", benchmark="matmul", value=matmul, unit="TFLOP/s", detail=""),
        Measurement(key="membw.copy", benchmark="membw", value=membw, unit="GB/s", detail=""),
    )
    result = BenchResult(
        created_at="2026-12-01T00:00:00+00:00",
        quick=True,
        duration_s=1.0,
        hardware=hw,
        measurements=ms,
        model_runs=(),
        verdict=judge(hw, ms, (), build_expectations(hw, spec, ms, ())),
        calibration_rows=(),
    )
    save_result(result, path)
    return path


def write_netcheck(path: Path, *, p50: float, compliance: float | None) -> Path:
    doc = {
        "kind": "gpurent.vendors.netcheck",
        "schema_version": 1,
        "peer": "127.0.0.1:5201",
        "latency_us": {"p50": p50, "p90": p50 * 1.2, "p99": p50 * 2, "samples": 100},
        "throughput_gbit_s": 9.5,
        "streams": 4,
        "target_gbit_s": 10.0 if compliance is not None else None,
        "compliance": compliance,
        "rdma": None,
    }
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path
