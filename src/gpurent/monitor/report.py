"""Reports over a recorded window: HTML (inline SVG timelines, no JavaScript), Markdown, JSON.

The SVG is drawn here (no matplotlib needed): one timeline per GPU of SM utilisation (or busy %
where no SM metric exists, labelled so), memory-copy utilisation, and host disk %util, with the
guide's thresholds as dashed lines.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from gpurent.monitor.cost import CostReport
from gpurent.monitor.rules import Diagnosis, Thresholds
from gpurent.monitor.sample import Sample
from gpurent.units import format_duration, format_usd


@dataclass(frozen=True, slots=True, kw_only=True)
class Report:
    diagnosis: Diagnosis
    cost: CostReport | None
    notes: tuple[str, ...] = ()


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _fmt(value: float | None, unit: str = "%") -> str:
    return "n/a" if value is None else f"{value:.0f}{unit}"


def to_markdown(report: Report) -> str:
    """The report as Markdown: diagnosis, findings and the cost of the waste."""
    d = report.diagnosis
    lines = [
        "# gpurent monitor report",
        "",
        f"Window: {_when(d.start_s)} to {_when(d.end_s)} "
        f"({format_duration(d.end_s - d.start_s)}, {d.samples} samples)",
        "",
        "| GPU | name | activity | source | busy | peak mem-copy | power | max temp | idle |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for g in d.gpus:
        lines.append(
            f"| {g.index} | {g.name} | {_fmt(g.mean_activity_pct)} | {g.activity_source} | "
            f"{_fmt(g.mean_busy_pct)} | {_fmt(g.peak_mem_copy_util_pct)} | "
            f"{_fmt(g.mean_power_w, ' W')} | {_fmt(g.max_temperature_c, ' C')} | "
            f"{g.idle_share:.0%} |"
        )
    lines += [
        "",
        f"Host: CPU {_fmt(d.mean_cpu_util_pct)}, busiest disk {_fmt(d.mean_disk_util_pct)}, "
        f"iowait {_fmt(d.mean_iowait_pct)} (means).",
        "",
    ]
    if report.cost is not None:
        c = report.cost
        lines += [
            "## Cost",
            "",
            f"{c.label} at {format_usd(c.price_usd_per_hour)}/h: spent {format_usd(c.spent_usd)}, "
            f"idle waste {format_usd(c.idle_wasted_usd)}, under-use waste "
            f"{format_usd(c.underused_wasted_usd)} ({c.wasted_share:.0%} of spend), "
            f"{format_usd(c.projected_monthly_usd)} per month if left running.",
            "",
        ]
    lines += ["## Findings", ""]
    if not d.findings:
        lines.append("No findings: the GPUs were used well in this window.")
    for f in d.findings:
        lines.append(f"- **{f.severity.value} {f.kind.value}**: {f.summary}")
        lines.extend(f"  - evidence: {e}" for e in f.evidence)
        lines.append(f"  - advice: {f.advice}")
    if report.notes:
        lines += ["", "## Could not read", "", *(f"- {n}" for n in report.notes)]
    return "\n".join(lines) + "\n"


def _svg_timeline(
    title: str,
    series: Sequence[tuple[str, str, list[tuple[float, float]]]],
    limits: Sequence[float],
) -> str:
    width, height, pad = 720, 160, 36
    points = [p for _, _, pts in series for p in pts]
    if not points:
        return f"<p>{html.escape(title)}: no data</p>"
    t0 = min(p[0] for p in points)
    t1 = max(p[0] for p in points)
    span = max(t1 - t0, 1e-9)

    def xy(t: float, v: float) -> str:
        x = pad + (t - t0) / span * (width - 2 * pad)
        y = height - pad / 2 - max(0.0, min(100.0, v)) / 100 * (height - pad)
        return f"{x:.1f},{y:.1f}"

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{html.escape(title)}">',
        f'<text x="{pad}" y="12" font-size="12">{html.escape(title)}</text>',
        f'<rect x="{pad}" y="{pad / 2}" width="{width - 2 * pad}" height="{height - pad}" '
        'fill="none" stroke="#ccc"/>',
    ]
    for limit in limits:
        parts.append(
            f'<polyline points="{xy(t0, limit)} {xy(t1, limit)}" stroke="#999" '
            'stroke-dasharray="4 3" fill="none"/>'
            f'<text x="2" y="{xy(t0, limit).split(",")[1]}" font-size="10">{limit:.0f}%</text>'
        )
    for i, (label, color, pts) in enumerate(series):
        if pts:
            joined = " ".join(xy(t, v) for t, v in pts)
            parts.append(f'<polyline points="{joined}" stroke="{color}" fill="none"/>')
            parts.append(
                f'<text x="{width - pad - 200}" y="{12 + 12 * i}" font-size="11" '
                f'fill="{color}">{html.escape(label)}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


def to_html(report: Report, samples: Sequence[Sample], thresholds: Thresholds) -> str:
    """The report as one HTML page with inline SVG charts of the samples."""
    d = report.diagnosis
    charts: list[str] = []
    for g in d.gpus:
        act: list[tuple[float, float]] = []
        mem: list[tuple[float, float]] = []
        for s in samples:
            for x in s.gpus:
                if x.index != g.index:
                    continue
                value = x.sm_util_pct if g.activity_source == "sm_util_pct" else x.gpu_busy_pct
                if value is not None:
                    act.append((s.timestamp_s, value))
                if x.mem_copy_util_pct is not None:
                    mem.append((s.timestamp_s, x.mem_copy_util_pct))
        label = "SM util %" if g.activity_source == "sm_util_pct" else "busy % (no SM metric)"
        charts.append(
            _svg_timeline(
                f"GPU {g.index} {g.name}",
                [(label, "#1f77b4", act), ("memory-copy %", "#ff7f0e", mem)],
                (thresholds.sm_util_low_pct, thresholds.mem_copy_peak_pct),
            )
        )
    disk = [
        (s.timestamp_s, s.host.disk_util_pct) for s in samples if s.host.disk_util_pct is not None
    ]
    cpu = [(s.timestamp_s, s.host.cpu_util_pct) for s in samples if s.host.cpu_util_pct is not None]
    charts.append(
        _svg_timeline(
            "host",
            [("disk %util", "#2ca02c", disk), ("CPU %", "#d62728", cpu)],
            (thresholds.disk_util_high_pct,),
        )
    )
    body = _markdown_to_html(to_markdown(report))
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>gpurent monitor report</title>"
        "<style>body{font-family:sans-serif;max-width:60em;margin:auto}table{border-collapse:"
        "collapse}td,th{border:1px solid #ccc;padding:2px 6px}</style></head><body>"
        + body
        + "<h2>Timelines</h2>"
        + "".join(f"<div>{c}</div>" for c in charts)
        + "</body></html>\n"
    )


def _markdown_to_html(text: str) -> str:
    """Just enough Markdown for our own report: headings, tables, bullets, bold, paragraphs."""
    out: list[str] = []
    in_table = in_list = in_nested = False
    for raw in text.splitlines():
        line = html.escape(raw)
        if raw.startswith("|"):
            if raw.startswith("|---"):
                continue
            cells = [c.strip() for c in line.strip("|").split("|")]
            tag = "th" if not in_table else "td"
            if not in_table:
                out.append("<table>")
                in_table = True
            out.append("<tr>" + "".join(f"<{tag}>{c}</{tag}>" for c in cells) + "</tr>")
            continue
        if in_table:
            out.append("</table>")
            in_table = False
        if raw.startswith("- ") or raw.startswith("  - "):
            if not in_list:
                out.append("<ul>")
                in_list = True
            nested = raw.startswith("  - ")
            if nested and not in_nested:
                out.append("<ul>")  # evidence and advice sit under their finding
                in_nested = True
            elif not nested and in_nested:
                out.append("</ul>")
                in_nested = False
            item = line.lstrip()[2:]
            parts = item.split("**")
            item = "".join(f"<b>{p}</b>" if i % 2 else p for i, p in enumerate(parts))
            out.append(f"<li>{item}</li>")
            continue
        if in_nested:
            out.append("</ul>")
            in_nested = False
        if in_list:
            out.append("</ul>")
            in_list = False
        if raw.startswith("## "):
            out.append(f"<h2>{line[3:]}</h2>")
        elif raw.startswith("# "):
            out.append(f"<h1>{line[2:]}</h1>")
        elif raw.strip():
            out.append(f"<p>{line}</p>")
    if in_table:
        out.append("</table>")
    if in_nested:
        out.append("</ul>")
    if in_list:
        out.append("</ul>")
    return "\n".join(out)
