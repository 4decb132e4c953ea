"""Reports over a recorded window: the result object and its Markdown (JSON is the object).

The HTML page (the Markdown as HTML, with timelines) is `gpurent.report.html.monitor_page`.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from gpurent.monitor.cost import CostReport
from gpurent.monitor.rules import Diagnosis
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
