"""Evidence files for the vendors tests, written by `gpurent.vendors.stated_evidence` (the
same writer as the example evidence: gpurent's own bench and netcheck formats)."""

from __future__ import annotations

from pathlib import Path

from gpurent.bench.result import save_result
from gpurent.vendors import stated_evidence
from gpurent.vendors.netcheck_result import LatencyUs, netcheck_document


def write_bench(path: Path, *, matmul: float, membw: float) -> Path:
    """An 8x H100-SXM bench result with these bf16 matmul TFLOP/s and copy GB/s."""
    result = stated_evidence.stated_bench_result(
        stated_evidence.h100_sxm_node(cpu_model="test", cpu_logical_cores=8, versions="test"),
        {"matmul.bf16": matmul, "membw.copy": membw},
        created_at="2026-12-01T00:00:00+00:00",
        duration_s=1.0,
    )
    save_result(result, path)
    return path


def write_netcheck(path: Path, *, p50: float, compliance: float | None) -> Path:
    """A netcheck result on 127.0.0.1 with this p50 latency in µs and throughput compliance
    (None: no target rate)."""
    doc = netcheck_document(
        peer="127.0.0.1:5201",
        latency_us=LatencyUs(p50=p50, p90=p50 * 1.2, p99=p50 * 2, samples=100),
        throughput_gbit_s=9.5,
        streams=4,
        target_gbit_s=10.0 if compliance is not None else None,
        compliance=compliance,
        rdma=None,
    )
    return stated_evidence.write_netcheck(path, doc)
