"""Tables and JSON of the fleet results (pure: `gpurent.fleet` result objects in, rich tables
and dicts out). Node host names come from the nodes, so they pass through `textsafe` before a
terminal."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from rich.table import Table

from gpurent.fleet.service import FleetAllreduce, FleetBench, FleetHealth
from gpurent.textsafe import cells, clean

STATUS_STYLE = {"ok": "green", "warn": "yellow", "fail": "bold red"}
# the figures shown as table columns (every figure is in --json): header, candidate keys
SHOWN = (
    ("matmul TFLOP/s", ("matmul.bf16", "matmul.fp32")),
    ("membw GB/s", ("membw.copy",)),
    ("link busbw GB/s", ("allreduce.pair_busbw",)),
)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def bench_table(result: FleetBench) -> Table:
    """One row per node, best first: rank, node, host, score, shown figures, verdict."""
    figures = {r.node: dict(r.figures) for r in result.reports}
    shown: list[tuple[str, str]] = []
    for header, keys in SHOWN:
        key = next((k for k in keys if any(k in f for f in figures.values())), None)
        if key is not None:
            shown.append((f"{key.split('.', 1)[1]} {header}" if len(keys) > 1 else header, key))
    table = Table(title=f"fleet bench: {len(result.nodes)} nodes at {clean(result.address)}")
    numeric = ("rank", "score", *(h for h, _ in shown))
    for col in ("rank", "node", "host", "score", *(h for h, _ in shown), "verdict"):
        table.add_column(col, justify="right" if col in numeric else "left")
    for row in result.ranking.nodes:
        verdict = "REPLACE" if row.replace else "warn" if row.warnings else "ok"
        f = figures.get(row.node, {})
        table.add_row(
            *cells(
                str(row.rank),
                row.node,
                result.hostnames.get(row.node, ""),
                _fmt(row.score),
                *(_fmt(f.get(k)) for _, k in shown),
                verdict,
            ),
            style="bold red" if row.replace else "yellow" if row.warnings else None,
        )
    return table


def bench_lines(result: FleetBench) -> list[str]:
    """The rule and notes under the table, and one line per node to replace."""
    lines = [f"rule: {result.ranking.rule}"]
    lines += [f"note: {clean(n)}" for n in result.notes]
    for row in result.ranking.nodes:
        if row.replace:
            lines.append(f"replace node {row.node}: {clean('; '.join(row.reasons))}")
        if row.warnings:
            lines.append(f"warn node {row.node}: {clean('; '.join(row.warnings))}")
    return lines


def bench_json(result: FleetBench) -> dict[str, Any]:
    """The fleet bench as a JSON-ready dict: medians, nodes by rank, pairs, outliers, notes."""
    ranks = {r.node: r for r in result.ranking.nodes}
    return {
        "address": result.address,
        "rule": result.ranking.rule,
        "medians": dict(result.ranking.medians),
        "nodes": [
            {
                **asdict(n),
                "node": n.short,
                "hostname": result.hostnames.get(n.short, ""),
                "rank": ranks[n.short].rank,
                "score": ranks[n.short].score,
                "replace": ranks[n.short].replace,
                "reasons": list(ranks[n.short].reasons),
                "warnings": list(ranks[n.short].warnings),
                "figures": dict(next(r for r in result.reports if r.node == n.short).figures),
                "units": dict(next(r for r in result.reports if r.node == n.short).units),
                "error": next(r for r in result.reports if r.node == n.short).error,
                "health": [dict(c) for c in result.health.get(n.short, ())],
            }
            for n in sorted(result.nodes, key=lambda n: ranks[n.short].rank)
        ],
        "pairs": [asdict(p) for p in result.pairs],
        "outliers": [asdict(o) for o in result.ranking.outliers],
        "to_replace": [r.node for r in result.ranking.to_replace],
        "notes": list(result.notes),
    }


def health_table(result: FleetHealth) -> Table:
    """The fleet health table: one row per node and check."""
    table = Table(title=f"fleet health: {len(result.nodes)} nodes at {clean(result.address)}")
    for col in ("node", "host", "status", "check", "reason"):
        table.add_column(col)
    for n in result.nodes:
        rows = [(c["check"], c["status"], c["reason"]) for c in n.checks]
        if n.error is not None:
            rows.append(("run", "fail", n.error))
        for i, (check, status, reason) in enumerate(rows):
            first = i == 0
            table.add_row(
                *cells(
                    n.node.short if first else "",
                    n.hostname if first else "",
                    status,
                    check,
                    reason,
                ),
                style=STATUS_STYLE.get(status),
            )
    return table


def health_json(result: FleetHealth) -> dict[str, Any]:
    """The fleet health as a JSON-ready dict: each node's status and checks."""
    return {
        "address": result.address,
        "nodes": [
            {
                **asdict(n.node),
                "node": n.node.short,
                "hostname": n.hostname,
                "status": n.status,
                "checks": [dict(c) for c in n.checks],
                "error": n.error,
            }
            for n in result.nodes
        ],
        "failed": [n.node.short for n in result.failed],
    }


def allreduce_table(result: FleetAllreduce) -> Table:
    """The all-reduce table: time, algorithm and bus bandwidth per message size."""
    backend = "NCCL, one GPU per node" if result.device == "cuda" else "gloo on the CPU"
    table = Table(
        title=f"all-reduce across {len(result.nodes)} nodes ({backend}, fp32, "
        f"median of {result.repeats}, slowest rank)"
    )
    for col in ("size MiB", "time ms", "algbw GB/s", "busbw GB/s"):
        table.add_column(col, justify="right")
    for row in result.sizes:
        table.add_row(
            f"{row.size_mib:g}",
            f"{row.time_s * 1e3:.3g}",
            f"{row.algbw_gbps:.4g}",
            f"{row.busbw_gbps:.4g}",
        )
    return table


def allreduce_json(result: FleetAllreduce) -> dict[str, Any]:
    """The all-reduce sweep as a JSON-ready dict."""
    return {
        "address": result.address,
        "device": result.device,
        "backend": "nccl" if result.device == "cuda" else "gloo",
        "world_size": len(result.nodes),
        "nodes": [n.short for n in result.nodes],
        "repeats": result.repeats,
        "sizes": [asdict(s) for s in result.sizes],
    }
