"""`gpurent monitor`'s live terminal view (rich): one row per GPU, the host line, cost, and the
current findings, from a monitor sample and diagnosis."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from gpurent.monitor.cost import CostReport
from gpurent.monitor.rules import Diagnosis, Severity
from gpurent.monitor.sample import Sample
from gpurent.textsafe import cells, clean
from gpurent.units import format_usd


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}%"


def render(sample: Sample, diagnosis: Diagnosis, cost: CostReport | None) -> RenderableType:
    """The live monitor view: one row per GPU, then the cost so far and the findings."""
    table = Table(title="gpurent monitor", expand=False)
    for column in ("GPU", "name", "SM util", "busy", "mem-copy", "memory", "power", "temp", "PCIe"):
        table.add_column(column, justify="right" if column not in ("name",) else "left")
    for g in sample.gpus:
        if g.lost:
            table.add_row(str(g.index), *cells(g.name), Text("LOST", style="bold red"), *["-"] * 6)
            continue
        memory = (
            "-"
            if g.memory_used_mib is None or g.memory_total_mib is None
            else f"{g.memory_used_mib / 1024:.1f}/{g.memory_total_mib / 1024:.0f} GiB"
        )
        pcie = (
            "-"
            if g.pcie_gen is None
            else f"gen{g.pcie_gen}/{g.pcie_gen_max} x{g.pcie_width}/{g.pcie_width_max}"
        )
        table.add_row(
            str(g.index),
            *cells(g.name),
            _pct(g.sm_util_pct) if g.sm_util_pct is not None else Text("n/a (no GPM)", style="dim"),
            _pct(g.gpu_busy_pct),
            _pct(g.mem_copy_util_pct),
            memory,
            "-" if g.power_w is None else f"{g.power_w:.0f} W",
            "-" if g.temperature_c is None else f"{g.temperature_c:.0f} C",
            pcie,
        )
    h = sample.host
    host = Text(
        f"host: CPU {_pct(h.cpu_util_pct)}  iowait {_pct(h.iowait_pct)}  "
        f"busiest disk {_pct(h.disk_util_pct)}  "
        f"disk {h.disk_read_mb_per_s or 0:.0f}/{h.disk_write_mb_per_s or 0:.0f} MB/s r/w  "
        f"net {h.net_rx_mb_per_s or 0:.1f}/{h.net_tx_mb_per_s or 0:.1f} MB/s in/out"
    )
    parts: list[RenderableType] = [table, host]
    if not sample.gpus:
        parts.append(Text("no GPUs readable: host metrics only", style="yellow"))
    if cost is not None:
        parts.append(
            Text(
                f"cost: {format_usd(cost.spent_usd)} spent, "
                f"{format_usd(cost.idle_wasted_usd + cost.underused_wasted_usd)} wasted "
                f"({cost.wasted_share:.0%}), {format_usd(cost.projected_monthly_usd)}/month "
                f"({clean(cost.label)})"
            )
        )
    styles = {Severity.CRITICAL: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
    for f in diagnosis.findings:
        parts.append(Text(clean(f"{f.severity.value}: {f.summary}"), style=styles[f.severity]))
    return Group(*parts)
