"""Write the EXAMPLE evidence files beside this script (bench results, netcheck results).

These figures are made up to show the formats `gpurent vendors score` reads; they are NOT
measurements of any vendor. They are written by `gpurent.vendors.stated_evidence`, which puts
the bench results through gpurent's own code paths (the datasheet expectations of `gpurent
bench` and its verdict), so their verdict rows are what a real run with these figures would
record, and the netcheck result through the document `gpurent vendors netcheck` writes.

    python examples/vendors/make_evidence.py [OUT_DIR]   # OUT_DIR: this folder by default
"""

from __future__ import annotations

import sys
from pathlib import Path

from gpurent.bench.result import save_result
from gpurent.vendors.netcheck_result import LatencyUs, RdmaResult, netcheck_document
from gpurent.vendors.stated_evidence import h100_sxm_node, stated_bench_result, write_netcheck

HERE = Path(__file__).parent
NOTE = "EXAMPLE EVIDENCE written by examples/vendors/make_evidence.py: not a measurement"


def bench(out: Path, matmul_bf16: float, membw_copy: float, allreduce_busbw: float) -> None:
    """An example 8x H100 SXM bench result with these TFLOP/s and GB/s."""
    result = stated_bench_result(
        h100_sxm_node(cpu_model="example CPU", cpu_logical_cores=192, versions="example"),
        {"matmul.bf16": matmul_bf16, "membw.copy": membw_copy, "allreduce.busbw": allreduce_busbw},
        created_at="2026-11-30T12:00:00+00:00",
        duration_s=60.0,
        note=NOTE,
    )
    save_result(result, out)


def main(out: Path) -> None:
    bench(out / "a-bench-h100.json", 720.0, 2900.0, 360.0)
    bench(out / "b-bench-h100.json", 760.0, 3000.0, 390.0)
    bench(out / "c-bench-h100.json", 610.0, 2700.0, 300.0)
    p50, p99, compliance, rdma_p50 = 18.0, 41.0, 0.97, 1.9
    doc = netcheck_document(
        peer="10.0.0.2:5201 (example)",
        latency_us=LatencyUs(p50=p50, p90=p50 * 1.3, p99=p99, samples=1000),
        throughput_gbit_s=95.0 * compliance,
        streams=8,
        target_gbit_s=90.0,
        compliance=compliance,
        rdma=RdmaResult(
            latency_us=LatencyUs(p50=rdma_p50, p90=None, p99=rdma_p50 * 1.8, samples=1000),
            bandwidth_gbit_s=390.0,
        ),
        note=NOTE,
    )
    write_netcheck(out / "a-netcheck.json", doc)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
