"""`vendors.stated_evidence`: the writer of the example evidence and the tests' fixtures writes
the documents gpurent's own runs write, and refuses a figure the bench does not name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpurent.bench.result import load_result, save_result
from gpurent.errors import InputError
from gpurent.vendors.netcheck_result import (
    LatencyUs,
    NetcheckResult,
    RdmaResult,
    netcheck_document,
)
from gpurent.vendors.stated_evidence import h100_sxm_node, stated_bench_result, write_netcheck


def test_a_stated_netcheck_is_the_document_a_run_writes(tmp_path: Path) -> None:
    latency = LatencyUs(p50=20.0, p90=25.0, p99=40.0, samples=500)
    rdma = RdmaResult(
        latency_us=LatencyUs(p50=2.0, p90=None, p99=3.0, samples=10), bandwidth_gbit_s=380.0
    )
    run = NetcheckResult(
        peer="10.0.0.9:5201",
        latency_us=latency,
        throughput_gbit_s=93.0,
        samples_gbit_s=(91.0, 95.0, 89.0, 97.0),
        interval_s=1.0,
        streams=8,
        target_gbit_s=90.0,
        rdma=rdma,
        rdma_note="measured with perftest",
    )
    doc = netcheck_document(
        peer=run.peer,
        latency_us=latency,
        throughput_gbit_s=93.0,
        streams=8,
        target_gbit_s=90.0,
        compliance=0.75,
        rdma=rdma,
        note="stated",
    )
    path = write_netcheck(tmp_path / "net.json", doc)
    assert json.loads(path.read_text()) == {**run.to_dict(), "note": "stated"}


def test_a_stated_bench_result_reads_back_and_is_judged(tmp_path: Path) -> None:
    node = h100_sxm_node(cpu_model="c", cpu_logical_cores=4, versions="v")
    path = tmp_path / "b.json"
    stated = stated_bench_result(
        node, {"matmul.bf16": 700.0}, created_at="2026-12-01T00:00:00+00:00", duration_s=1.0
    )
    save_result(stated, path)
    result = load_result(path)
    assert [m.key for m in result.measurements] == ["matmul.bf16"]
    verdict = {v.check: v for v in result.verdict}
    assert set(verdict) == {"matmul.bf16", "pcie.link"}  # the figure and the node's PCIe link
    assert verdict["matmul.bf16"].measured == 700.0 and verdict["matmul.bf16"].expected


def test_a_figure_the_bench_does_not_name_is_refused() -> None:
    node = h100_sxm_node(cpu_model="c", cpu_logical_cores=4, versions="v")
    with pytest.raises(InputError, match=r"unknown figure 'matmul\.fp64'"):
        stated_bench_result(node, {"matmul.fp64": 60.0}, created_at="x", duration_s=1.0)
