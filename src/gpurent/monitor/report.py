"""Reports over a recorded window: the result object and its Markdown (JSON is the object).

The HTML page (the Markdown as HTML, with timelines) is `gpurent.report.html.monitor_page`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from gpurent.monitor.cost import CostReport
from gpurent.monitor.rules import Diagnosis
from gpurent.units import format_duration, format_usd


@dataclass(frozen=True, slots=True, kw_only=True)
class Report:
    """What `gpurent monitor report` shows: the diagnosis, the cost and notes."""

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
