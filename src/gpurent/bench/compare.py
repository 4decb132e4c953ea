"""Two bench results side by side: every figure both (or either) measured, and B / A.

Pure: two BenchResults in, `CompareRow`s out. Model runs are compared by throughput (their
configs may differ: a CPU run's models are scaled down, so the config column says so).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpurent.bench.result import BenchResult, Status


@dataclass(frozen=True, slots=True, kw_only=True)
class CompareRow:
    """One check of two bench results side by side: A's and B's values and statuses, B/A."""

    check: str
    unit: str
    a_value: float | None
    b_value: float | None
    ratio_b_over_a: float | None  # None when either side is missing or A is zero
    a_status: str
    b_status: str
    note: str  # e.g. differing model configs


def _figures(result: BenchResult) -> dict[str, tuple[float | None, str, str]]:
    """check -> (value, unit, config note)."""
    out: dict[str, tuple[float | None, str, str]] = {}
    for m in result.measurements:
        if m.key != "matmul.numpy-fp32" or m.value is not None:
            out[m.key] = (m.value, m.unit, "")
    for run in result.model_runs:
        out[f"model.{run.model}"] = (run.throughput, run.throughput_unit, run.config)
    return out


def compare(a: BenchResult, b: BenchResult) -> tuple[CompareRow, ...]:
    """Rows in A's order, then checks only B has."""
    fa, fb = _figures(a), _figures(b)
    sa = {r.check: r.status for r in a.verdict}
    sb = {r.check: r.status for r in b.verdict}
    rows = []
    for key in [*fa, *(k for k in fb if k not in fa)]:
        av, aunit, aconf = fa.get(key, (None, "", ""))
        bv, bunit, bconf = fb.get(key, (None, "", ""))
        unit = aunit or bunit
        note = ""
        if aunit and bunit and aunit != bunit:
            note = f"units differ: {aunit} vs {bunit}"
        elif aconf and bconf and aconf != bconf:
            note = f"configs differ: A {aconf}; B {bconf}"
        ratio = bv / av if av and bv is not None and not note.startswith("units") else None
        rows.append(
            CompareRow(
                check=key,
                unit=unit,
                a_value=av,
                b_value=bv,
                ratio_b_over_a=ratio,
                a_status=str(sa.get(key, Status.NA if key not in fa else Status.INFO)),
                b_status=str(sb.get(key, Status.NA if key not in fb else Status.INFO)),
                note=note,
            )
        )
    return tuple(rows)
