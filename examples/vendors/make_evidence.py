"""Write the EXAMPLE evidence files beside this script (bench results, netcheck results).

These figures are made up to show the formats `gpurent vendors score` reads; they are NOT
measurements of any vendor. The bench results go through gpurent's own code paths (the
datasheet expectations of `gpurent bench` and its verdict), so their verdict rows are what a
real run with these figures would record.

    python examples/vendors/make_evidence.py [OUT_DIR]   # OUT_DIR: this folder by default
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from gpurent.bench.expect import build_expectations
from gpurent.bench.result import BenchResult, HardwareInfo, Measurement, save_result
from gpurent.bench.verdict import judge
from gpurent.catalog.specs import find_gpu

HERE = Path(__file__).parent
NOTE = "EXAMPLE EVIDENCE written by examples/vendors/make_evidence.py: not a measurement"


def bench_result(matmul_bf16: float, membw_copy: float, allreduce_busbw: float) -> BenchResult:
    spec = find_gpu("H100 SXM")
    assert spec is not None
    hw = HardwareInfo(
        device="cuda",
        cpu_model="example CPU",
        cpu_logical_cores=192,
        gpu_count=8,
        gpu_name="NVIDIA H100 80GB HBM3",
        gpu_catalog_name=spec.name,
        gpu_memory_gib=79.6,
        pcie_gen_current=5,
        pcie_gen_max=5,
        pcie_width_current=16,
        pcie_width_max=16,
        driver_version="example",
        torch_version="example",
    )
    measurements = (
        Measurement(
            key="matmul.bf16", benchmark="matmul", value=matmul_bf16, unit="TFLOP/s", detail=NOTE
        ),
        Measurement(
            key="membw.copy", benchmark="membw", value=membw_copy, unit="GB/s", detail=NOTE
        ),
        Measurement(
            key="allreduce.busbw",
            benchmark="allreduce",
            value=allreduce_busbw,
            unit="GB/s",
            detail=NOTE,
        ),
    )
    expectations = build_expectations(hw, spec, measurements, ())
    return BenchResult(
        created_at="2026-11-30T12:00:00+00:00",
        quick=True,
        duration_s=60.0,
        hardware=hw,
        measurements=measurements,
        model_runs=(),
        verdict=judge(hw, measurements, (), expectations),
        calibration_rows=(),
        notes=(NOTE,),
    )


def netcheck(
    p50: float, p99: float, compliance: float, rdma_p50: float | None
) -> dict[str, object]:
    rdma = None
    if rdma_p50 is not None:
        rdma = {"tool": "ib_write_lat", "latency_us": {"p50": rdma_p50, "p99": rdma_p50 * 1.8}}
    return {
        "kind": "gpurent.vendors.netcheck",
        "schema_version": 1,
        "peer": "10.0.0.2:5201 (example)",
        "latency_us": {"p50": p50, "p90": p50 * 1.3, "p99": p99, "samples": 1000},
        "throughput_gbit_s": 95.0 * compliance,
        "streams": 8,
        "target_gbit_s": 90.0,
        "compliance": compliance,
        "rdma": rdma,
        "note": NOTE,
    }


def main(out: Path) -> None:
    save_result(bench_result(720.0, 2900.0, 360.0), out / "a-bench-h100.json")
    save_result(bench_result(760.0, 3000.0, 390.0), out / "b-bench-h100.json")
    save_result(bench_result(610.0, 2700.0, 300.0), out / "c-bench-h100.json")
    (out / "a-netcheck.json").write_text(
        json.dumps(netcheck(18.0, 41.0, 0.97, rdma_p50=1.9), indent=2) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
