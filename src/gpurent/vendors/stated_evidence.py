"""Evidence files written from stated figures, not from a run: the example evidence beside
`examples/vendors.toml` (`examples/vendors/make_evidence.py`) and the vendors tests' fixtures.

A bench result goes through `gpurent bench`'s own expectations and verdict (write it with
`bench.result.save_result`), and a netcheck document is built by
`netcheck_result.netcheck_document`, so each file is what a real run with these figures would
write, in the format the vendors file reader checks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpurent.bench.expect import build_expectations
from gpurent.bench.result import BenchResult, HardwareInfo, Measurement
from gpurent.bench.verdict import judge
from gpurent.catalog.specs import find_gpu
from gpurent.errors import InputError
from gpurent.inputs import files

# The figures a stated bench result may give, as `gpurent bench` names them: (benchmark, unit).
BENCH_FIGURES = {
    "matmul.bf16": ("matmul", "TFLOP/s"),
    "membw.copy": ("membw", "GB/s"),
    "allreduce.busbw": ("allreduce", "GB/s"),
}


def h100_sxm_node(*, cpu_model: str, cpu_logical_cores: int, versions: str) -> HardwareInfo:
    """An 8x H100 SXM node as `gpurent bench` records it; `versions` stands for the driver and
    torch versions."""
    spec = find_gpu("H100 SXM")
    assert spec is not None  # in the bundled specs
    return HardwareInfo(
        device="cuda",
        cpu_model=cpu_model,
        cpu_logical_cores=cpu_logical_cores,
        gpu_count=8,
        gpu_name="NVIDIA H100 80GB HBM3",
        gpu_catalog_name=spec.name,
        gpu_memory_gib=79.6,
        pcie_gen_current=5,
        pcie_gen_max=5,
        pcie_width_current=16,
        pcie_width_max=16,
        driver_version=versions,
        torch_version=versions,
    )


def stated_bench_result(
    hardware: HardwareInfo,
    figures: Mapping[str, float],
    *,
    created_at: str,
    duration_s: float,
    note: str = "",
) -> BenchResult:
    """A quick bench result of `figures` (keys of `BENCH_FIGURES`, in that order of giving) on
    `hardware`, judged by the bench's expectations and verdict; `note` goes in each figure's
    detail and, when given, in the result's notes."""
    spec = find_gpu(hardware.gpu_catalog_name or hardware.gpu_name or "")
    if spec is None:
        raise InputError(f"stated bench result: no GPU spec for {hardware.gpu_name!r}")
    unknown = sorted(set(figures) - set(BENCH_FIGURES))
    if unknown:
        raise InputError(f"stated bench result: unknown figure {unknown[0]!r}")
    measurements = tuple(
        Measurement(key=key, benchmark=bench, value=value, unit=unit, detail=note)
        for key, value in figures.items()
        for bench, unit in (BENCH_FIGURES[key],)
    )
    expectations = build_expectations(hardware, spec, measurements, ())
    return BenchResult(
        created_at=created_at,
        quick=True,
        duration_s=duration_s,
        hardware=hardware,
        measurements=measurements,
        model_runs=(),
        verdict=judge(hardware, measurements, (), expectations),
        calibration_rows=(),
        notes=(note,) if note else (),
    )


def write_netcheck(path: Path, document: dict[str, Any]) -> Path:
    """Write a netcheck result document (`netcheck_result.netcheck_document`) as `gpurent
    vendors netcheck --out` does (indented JSON and a newline); returns `path`."""
    files.write_text(path, json.dumps(document, indent=2) + "\n")
    return path
