"""`gpurent vendors audit` rendered: Markdown, the JSON document and terminal rows. The bill's
text is cleaned of control characters before it is shown."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpurent.textsafe import clean
from gpurent.vendors.audit import AuditReport, Finding


def line_ranges(lines: Sequence[int]) -> str:
    """`2-5, 9` for lines 2, 3, 4, 5 and 9."""
    ordered = sorted(set(lines))
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ", ".join(parts)


def _money(usd: float | None) -> str:
    return "-" if usd is None else f"${usd:,.2f}"


def terminal_rows(report: AuditReport) -> list[tuple[str, ...]]:
    """One terminal table row per audit finding."""
    return [
        (
            f.kind.value,
            clean(f.resource) or "-",
            f"{f.hours:,.2f}",
            _money(f.billed_usd),
            _money(f.excess_usd),
            line_ranges(f.lines),
            clean(f.detail),
        )
        for f in report.findings
    ]


def summary(report: AuditReport) -> str:
    """One line: the bill, rows read, amount billed, findings and USD at stake."""
    n = len(report.findings)
    return (
        f"{clean(report.source)} ({report.format}, {report.rows_read} rows): billed "
        f"{_money(report.billed_usd)}; {n} finding{'s' if n != 1 else ''}, "
        f"{_money(report.excess_usd)} at stake"
    )


def _cell(text: str) -> str:
    return clean(text).replace("|", "\\|")


def to_markdown(report: AuditReport) -> str:
    """The bill audit as a Markdown document."""
    out = [
        "# Bill audit",
        "",
        summary(report),
        "",
        "| finding | resource | hours | billed | excess | bill lines | detail |",
        "|---|---|---:|---:|---:|---|---|",
    ]
    out += [
        f"| {f.kind.value} | {_cell(f.resource) or '-'} | {f.hours:,.2f} | "
        f"{_money(f.billed_usd)} | {_money(f.excess_usd)} | {line_ranges(f.lines)} | "
        f"{_cell(f.detail)} |"
        for f in report.findings
    ]
    if not report.findings:
        out.append("| none | | | | | | the bill matches the catalog and the records |")
    if report.notes:
        out += ["", "Not checked:", ""] + [f"- {_cell(n)}" for n in report.notes]
    return "\n".join(out) + "\n"


def _finding(f: Finding) -> dict[str, Any]:
    return {
        "kind": f.kind.value,
        "resource": f.resource,
        "lines": list(f.lines),
        "hours": f.hours,
        "billed_usd": round(f.billed_usd, 6),
        "expected_usd": None if f.expected_usd is None else round(f.expected_usd, 6),
        "excess_usd": None if f.excess_usd is None else round(f.excess_usd, 6),
        "detail": f.detail,
    }


def to_json(report: AuditReport) -> dict[str, Any]:
    """The bill audit as a JSON-ready dict."""
    return {
        "bill": report.source,
        "format": report.format,
        "rows_read": report.rows_read,
        "billed_usd": round(report.billed_usd, 6),
        "excess_usd": round(report.excess_usd, 6),
        "findings": [_finding(f) for f in report.findings],
        "notes": list(report.notes),
    }
