"""The fleet bench table and lines: best node first, the node to replace named with its reasons."""

from __future__ import annotations

from rich.console import Console

from gpurent.fleet.rank import NodeFigures, rank_fleet
from gpurent.fleet.ray_edge import Node
from gpurent.fleet.service import FleetBench
from gpurent.report.fleet import bench_json, bench_lines, bench_table


def test_table_and_lines_name_the_node_to_replace() -> None:
    figs = {"aaa": 1.0, "bbb": 1.05, "ccc": 0.2}
    reports = tuple(
        NodeFigures(
            node=n,
            figures={"matmul.fp32": v, "membw.copy": 10.0},
            units={"matmul.fp32": "TFLOP/s", "membw.copy": "GB/s"},
            health_warn=("gpu: GPU 0 at 88 C (> 84 C)",) if n == "aaa" else (),
        )
        for n, v in figs.items()
    )
    result = FleetBench(
        address="10.0.0.1:6379",
        nodes=tuple(Node(node_id=n, address="10.0.0.1", cpus=8, gpus=0, labels=()) for n in figs),
        hostnames={"aaa": "host-a", "bbb": "host-b", "ccc": "host-\x1b[2Jc"},
        reports=reports,
        health={},
        pairs=(),
        ranking=rank_fleet(reports),
    )
    console = Console(width=120, record=True)
    console.print(bench_table(result))
    text = console.export_text()
    rows = [line for line in text.splitlines() if "host-" in line]
    assert [r.split()[1] for r in rows] == ["1", "2", "3"]
    assert "bbb" in rows[0] and "ccc" in rows[2] and "REPLACE" in rows[2] and "warn" in rows[1]
    assert "\x1b" not in text  # a host name from a node cannot drive the terminal
    lines = bench_lines(result)
    assert lines[0].startswith("rule: slow: below 80% of the fleet median")
    assert "replace node ccc: matmul.fp32 0.2 TFLOP/s is 20% of the fleet median 1" in lines
    assert "warn node aaa: gpu: GPU 0 at 88 C (> 84 C)" in lines
    data = bench_json(result)
    assert data["to_replace"] == ["ccc"]
    assert [n["node"] for n in data["nodes"]] == ["bbb", "aaa", "ccc"]
