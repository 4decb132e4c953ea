"""Rendering of `gpurent bench serve` results: a terminal table per run, and Markdown.

Pure functions of `ServeResult`; the CLI prints what they return.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text

from gpurent.bench.serve_result import LevelResult, ServeResult, ServeVerdictRow, Spread
from gpurent.report.tables import Column, fit_table
from gpurent.textsafe import cells, clean

HEADERS = (
    Column("level"),
    Column("ok/sent", justify="right"),
    Column("errors", priority=1),
    Column("TTFT p50/p90/p99 ms", justify="right"),
    Column("ITL p50/p90/p99 ms", justify="right", priority=3),
    Column("TPOT p50 ms", justify="right", priority=4),
    Column("e2e p50/p99 ms", justify="right", priority=2),
    Column("req/s", justify="right"),
    Column("out tok/s", justify="right"),
)


def num(value: float | None) -> str:
    """3 significant digits below 100, whole numbers above; '-' when missing."""
    if value is None:
        return "-"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def _three(s: Spread) -> str:
    return "-" if s.n == 0 else f"{num(s.p50)}/{num(s.p90)}/{num(s.p99)}"


def errors_text(lv: LevelResult) -> str:
    """A level's errors by kind and its cancelled requests, or "-" when none."""
    parts = [f"{k} {n}" for k, n in lv.errors.items()]
    if lv.requests_cancelled:
        parts.append(f"cancelled {lv.requests_cancelled}")
    return ", ".join(parts) or "-"


def _level_label(result: ServeResult, lv: LevelResult) -> str:
    unit = "c=" if result.mode == "concurrency" else "req/s="
    mark = " *" if result.saturation.level == lv.level else ""
    return f"{unit}{lv.level:g}{mark}"


def level_rows(result: ServeResult) -> list[list[str]]:
    """One table row per load level: requests, errors, latency percentiles and throughput."""
    return [
        [
            _level_label(result, lv),
            f"{lv.requests_ok}/{lv.requests_sent}",
            errors_text(lv),
            _three(lv.ttft_ms),
            _three(lv.itl_ms),
            num(lv.tpot_ms.p50),
            f"{num(lv.e2e_ms.p50)}/{num(lv.e2e_ms.p99)}",
            num(lv.requests_per_s),
            num(lv.output_tok_s),
        ]
        for lv in result.levels
    ]


def summary_lines(result: ServeResult) -> list[str]:
    """The summary lines above the table: endpoint, model, token lengths, saturation, client CPU."""
    level = result.saturation.level
    sat = "none" if level is None else f"at {level:g}"
    lines = [
        f"{clean(result.url)} ({result.endpoint}), model {clean(result.model)}; prompt "
        f"{result.prompt_tokens} and output {result.output_tokens} tokens per request",
        f"saturation: {sat} ({result.saturation.reason})",
        f"client: {result.client_cpu_s:.1f} s CPU over {result.wall_s:.1f} s "
        f"({100 * result.client_cpu_s / max(result.wall_s, 1e-9):.0f}% of one core)",
    ]
    if result.interrupted:
        lines.append("interrupted: what finished before Ctrl-C is shown")
    lines.extend(clean(n) for n in result.notes)
    return lines


def verdict_rows(rows: Sequence[ServeVerdictRow]) -> list[list[str]]:
    """One row per verdict check: status, measured and expected values, ratio and source."""
    return [
        [
            r.check,
            r.status,
            f"{num(r.measured)} {r.unit}",
            f"{num(r.expected)} {r.unit}",
            f"{r.ratio:.2f}",
            r.source,
        ]
        for r in rows
    ]


def tables(result: ServeResult, width: int = 120) -> list[Table | Text]:
    """What the terminal shows: the per-level table, the summary lines, the verdict."""
    table, _ = fit_table(
        HEADERS,
        [cells(*row) for row in level_rows(result)],
        width,
        title="bench serve (* = saturation point)",
    )
    out: list[Table | Text] = [table, Text("\n".join(summary_lines(result)))]
    if result.verdict:
        vt = Table("check", "verdict", "measured", "expected", "ratio", "source", title="verdict")
        for row in verdict_rows(result.verdict):
            styled = cells(*row)
            styled[1].stylize("green" if row[1] == "pass" else "bold red")
            vt.add_row(*styled)
        out.append(vt)
    return out


def _md_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    def esc(cell: str) -> str:
        return clean(cell).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def markdown(result: ServeResult) -> str:
    """The serving bench result as a Markdown document."""
    parts = [
        f"# gpurent bench serve ({result.created_at})\n",
        "\n".join(f"- {line}" for line in summary_lines(result)) + "\n",
        _md_table([c.header for c in HEADERS], level_rows(result)),
    ]
    if result.verdict:
        parts.append(
            "## Verdict\n\n"
            + _md_table(
                ("check", "verdict", "measured", "expected", "ratio", "source"),
                verdict_rows(result.verdict),
            )
        )
    return "\n".join(parts)
