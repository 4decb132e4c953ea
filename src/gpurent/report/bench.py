"""Rendering of bench results and comparisons: rich tables for the terminal, Markdown text.

Pure functions of `gpurent.bench` result objects; the CLI prints what they return.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text

from gpurent.bench.compare import CompareRow
from gpurent.bench.result import BenchResult, Status, VerdictRow
from gpurent.bench.verdict import worst

STATUS_STYLE = {
    Status.OK: "green",
    Status.WARN: "yellow",
    Status.FAIL: "bold red",
    Status.INFO: "cyan",
    Status.NA: "dim",
}


def fmt(value: float | None) -> str:
    """4 significant digits; '-' for missing."""
    if value is None:
        return "-"
    if abs(value) >= 1e4:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def hardware_lines(result: BenchResult) -> list[str]:
    """The lines that describe the benchmarked machine: CPU, torch, GPU, driver."""
    hw = result.hardware
    lines = [f"CPU: {hw.cpu_model}, {hw.cpu_logical_cores} logical cores; torch {hw.torch_version}"]
    if hw.device == "cuda":
        known = hw.gpu_catalog_name or "not in the catalog"
        lines.append(
            f"GPU: {hw.gpu_count} x {hw.gpu_name} (catalog: {known}), "
            f"{fmt(hw.gpu_memory_gib)} GiB, driver {hw.driver_version or '?'}"
        )
        if hw.pcie_gen_current is not None:
            lines.append(
                f"PCIe: gen{hw.pcie_gen_current} x{hw.pcie_width_current} "
                f"(max gen{hw.pcie_gen_max} x{hw.pcie_width_max})"
            )
    else:
        lines.append("GPU: none (device cpu): GPU benchmarks run their CPU variants")
    mode = "quick" if result.quick else "full"
    lines.append(
        f"Run: {mode}, {result.duration_s:.1f} s, {result.created_at}; "
        f"overall: {worst(result.verdict).value}"
    )
    return lines


def verdict_table(rows: Sequence[VerdictRow]) -> Table:
    """The verdict table: each check's status, measured and expected values and advice."""
    table = Table(title="Verdict", title_justify="left")
    for col in ("check", "status", "measured", "expected", "fraction (min)", "source / advice"):
        table.add_column(col, overflow="fold")
    for r in rows:
        frac = f"{_pct(r.fraction)} ({_pct(r.threshold)})" if r.fraction is not None else "-"
        why = r.source if not r.cause else f"{r.source}\n{r.cause}\n-> {r.advice}"
        table.add_row(
            r.check,
            Text(r.status.value, style=STATUS_STYLE[r.status]),
            f"{fmt(r.measured)} {r.unit}",
            fmt(r.expected),
            frac,
            why,
        )
    return table


def tables(result: BenchResult) -> list[Table | str]:
    """Everything the terminal shows, in order."""
    meas = Table(title="Micro-benchmarks", title_justify="left")
    for col in ("benchmark", "figure", "value", "how"):
        meas.add_column(col, overflow="fold")
    for m in result.measurements:
        meas.add_row(m.benchmark, m.key, f"{fmt(m.value)} {m.unit}", m.detail)
    models = Table(title="Model training steps (synthetic data)", title_justify="left")
    for col in ("model", "config", "step median", "p10-p90", "throughput", "MFU"):
        models.add_column(col, overflow="fold")
    for run in result.model_runs:
        models.add_row(
            run.model,
            f"{run.config}; {run.precision}, batch {run.batch_size}",
            f"{run.step_time_median_s * 1e3:.1f} ms",
            f"{run.step_time_p10_s * 1e3:.1f}-{run.step_time_p90_s * 1e3:.1f} ms",
            f"{fmt(run.throughput)} {run.throughput_unit}",
            _pct(run.mfu),
        )
    out: list[Table | str] = ["\n".join(hardware_lines(result)), meas]
    if result.model_runs:
        out.append(models)
    out.append(verdict_table(result.verdict))
    out.extend(f"note: {n}" for n in result.notes)
    return out


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(result: BenchResult) -> str:
    """The whole result as a Markdown document."""
    lines = ["# gpurent bench", "", *(f"- {line}" for line in hardware_lines(result)), ""]
    lines += [
        "## Micro-benchmarks",
        "",
        "| benchmark | figure | value | how |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {m.benchmark} | {m.key} | {fmt(m.value)} {m.unit} | {_md_escape(m.detail)} |"
        for m in result.measurements
    ]
    if result.model_runs:
        lines += [
            "",
            "## Model training steps",
            "",
            "| model | config | step median | p10-p90 | throughput | MFU |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {r.model} | {_md_escape(r.config)}; {r.precision}, batch {r.batch_size} | "
            f"{r.step_time_median_s * 1e3:.1f} ms | {r.step_time_p10_s * 1e3:.1f}-"
            f"{r.step_time_p90_s * 1e3:.1f} ms | {fmt(r.throughput)} {r.throughput_unit} | "
            f"{_pct(r.mfu)} |"
            for r in result.model_runs
        ]
    lines += [
        "",
        "## Verdict",
        "",
        "| check | status | measured | expected | fraction (min) | source | cause -> advice |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in result.verdict:
        frac = f"{_pct(r.fraction)} ({_pct(r.threshold)})" if r.fraction is not None else "-"
        why = f"{r.cause} -> {r.advice}" if r.cause else ""
        lines.append(
            f"| {r.check} | {r.status.value} | {fmt(r.measured)} {r.unit} | "
            f"{fmt(r.expected)} | {frac} | {_md_escape(r.source)} | {_md_escape(why)} |"
        )
    if result.notes:
        lines += ["", *(f"- note: {n}" for n in result.notes)]
    return "\n".join(lines) + "\n"


def compare_table(rows: Sequence[CompareRow], a_name: str, b_name: str) -> Table:
    """The table comparing two bench results check by check, with B / A."""
    table = Table(title=f"A = {a_name}   B = {b_name}", title_justify="left")
    for col in ("check", "A", "B", "B / A", "status A/B", "note"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(
            r.check,
            f"{fmt(r.a_value)} {r.unit}",
            f"{fmt(r.b_value)} {r.unit}",
            "-" if r.ratio_b_over_a is None else f"{r.ratio_b_over_a:.2f}x",
            f"{r.a_status}/{r.b_status}",
            r.note,
        )
    return table


def compare_markdown(rows: Sequence[CompareRow], a_name: str, b_name: str) -> str:
    """The comparison of two bench results as a Markdown document."""
    lines = [
        "# gpurent bench compare",
        "",
        f"A = `{a_name}`, B = `{b_name}`",
        "",
        "| check | A | B | B / A | status A/B | note |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        ratio = "-" if r.ratio_b_over_a is None else f"{r.ratio_b_over_a:.2f}x"
        lines.append(
            f"| {r.check} | {fmt(r.a_value)} {r.unit} | {fmt(r.b_value)} {r.unit} | "
            f"{ratio} | {r.a_status}/{r.b_status} | {_md_escape(r.note)} |"
        )
    return "\n".join(lines) + "\n"
