"""From what the nodes sent back to the figures the ranking compares (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpurent.bench.result import BenchResult, result_from_dict
from gpurent.errors import DataError
from gpurent.fleet.rank import NodeFigures

# Units of the bench figures where higher is better: rates, and the scaling efficiency
# ("fraction" of linear); other figures are not compared.
RATE_UNITS = frozenset(
    {"TFLOP/s", "GB/s", "IOPS", "images/s", "samples/s", "sequences/s", "tokens/s", "fraction"}
)


def health_reasons(rows: Sequence[Mapping[str, str]]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(failed, warned) checks as `check: reason` lines."""
    fails = tuple(f"{r['check']}: {r['reason']}" for r in rows if r.get("status") == "fail")
    warns = tuple(f"{r['check']}: {r['reason']}" for r in rows if r.get("status") == "warn")
    return fails, warns


def bench_figures(result: BenchResult) -> tuple[dict[str, float], dict[str, str]]:
    """The rates of one bench result by key (measurements, and model throughput as
    `model.<name>`), and their units."""
    values: dict[str, float] = {}
    units: dict[str, str] = {}
    for m in result.measurements:
        if m.value is not None and m.value > 0 and m.unit in RATE_UNITS:
            values[m.key], units[m.key] = m.value, m.unit
    for run in result.model_runs:
        key = f"model.{run.model}"
        values[key], units[key] = run.throughput, run.throughput_unit
    return values, units


def node_figures(
    node: str, payload: Mapping[str, Any] | None, error: str | None
) -> tuple[NodeFigures, BenchResult | None]:
    """One node's figures from its `bench_here` answer (or the error that stood for it)."""
    if payload is None:
        return NodeFigures(node=node, figures={}, units={}, error=error or "no answer"), None
    fails, warns = health_reasons(payload.get("health", ()))
    if "result" not in payload:
        err = str(payload.get("error", "no result"))
        return (
            NodeFigures(
                node=node, figures={}, units={}, health_fail=fails, health_warn=warns, error=err
            ),
            None,
        )
    try:
        result = result_from_dict(payload["result"], f"bench result from node {node}")
    except DataError as exc:
        return NodeFigures(node=node, figures={}, units={}, error=exc.message), None
    values, units = bench_figures(result)
    return (
        NodeFigures(node=node, figures=values, units=units, health_fail=fails, health_warn=warns),
        result,
    )
