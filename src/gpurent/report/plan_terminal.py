"""A plan in the terminal (rich): ranked table, Pareto front, explanation panel, assumptions."""

from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from gpurent.plan.result import Candidate, Plan
from gpurent.report.plan_format import (
    BREAKDOWN_TITLE,
    PARETO_HEADERS,
    TABLE_HEADERS,
    breakdown_sections,
    candidate_row,
    cost_cell,
    explanation_sections,
    gpus_cell,
    pareto_row,
    price_age_line,
    pricing_cell,
    region_cell,
    stats_line,
    time_cell,
    title,
    top_heading,
    unit_cost_cell,
)
from gpurent.report.tables import Column, fit_table
from gpurent.textsafe import cells, clean

_RIGHT = {"#", "time", "cost", "$/unit"}
WIDE_COLUMNS = 140  # below this, a narrower table (layout, bottleneck, notes are in the panel)
NARROW_HEADERS = ("#", "offer", "GPUs", "pricing", "time", "cost", "$/unit")
_PRIORITY = {"layout": 2, "bottleneck": 3, "notes": 1, "region": 1, "$/unit": 1, "GPUs": 0}
WIDE_TABLE = tuple(
    Column(h, priority=_PRIORITY.get(h, 0), justify="right" if h in _RIGHT else "left")
    for h in TABLE_HEADERS
)
NARROW_TABLE = tuple(
    Column(h, priority=1 if h == "$/unit" else 0, justify="right" if h in _RIGHT else "left")
    for h in NARROW_HEADERS
)


def narrow_row(c: Candidate) -> tuple[str, ...]:
    """The candidate's row of the plan table for a narrow terminal (cells over two lines)."""
    nodes = f" x{c.nodes}" if c.nodes > 1 else ""
    return (
        str(c.rank) if c.rank else "-",
        f"{c.provider} {c.instance_type}{nodes}\n{region_cell(c)}",
        gpus_cell(c),
        pricing_cell(c).replace(" ", "\n", 1),
        time_cell(c),
        cost_cell(c),
        unit_cost_cell(c),
    )


def render_terminal(plan: Plan, console: Console) -> None:
    """Print the plan: what to rent first, then the evidence, then the assumptions."""
    console.print(Text(clean(title(plan)), style="bold"))
    console.print(Text(clean("  " + " | ".join(plan.constraints)), style="dim"))
    if not plan.feasible:
        console.print(
            Panel(
                Text(clean("\n".join(f"- {r}" for r in plan.infeasible_reasons))),
                title="No plan meets the request",
                border_style="red",
            )
        )
    if plan.top:
        rows = [cells(*narrow_row(c)) for c in plan.top]
        wide = console.width >= WIDE_COLUMNS
        if wide:
            rows = [cells(*candidate_row(c)) for c in plan.top]
        table, _ = fit_table(
            WIDE_TABLE if wide else NARROW_TABLE,
            rows,
            console.width,
            title=top_heading(plan),
            title_justify="left",
            header_style="bold",
        )
        if plan.feasible and table.rows:
            table.rows[0].style = "bold green"
        console.print(table)
    if plan.top:
        texts: list[Text] = []
        for heading, items in breakdown_sections(plan):
            texts.append(Text(clean(heading), style="bold"))
            texts += [Text(clean(f"  - {line}")) for line in items]
        console.print(Panel(Group(*texts), title=BREAKDOWN_TITLE, title_align="left"))
    if plan.pareto:
        front = Table(
            title="Pareto front: no other candidate is both faster and cheaper",
            title_justify="left",
            header_style="bold",
        )
        for h in PARETO_HEADERS:
            front.add_column(h, justify="right" if h in _RIGHT else "left")
        for c in plan.pareto:
            front.add_row(*cells(*pareto_row(c)))
        console.print(front)
    e = plan.explanation
    if e is not None:
        parts: list[Text] = [Text(clean(e.headline), style="bold green")]
        for name, lines in explanation_sections(e):
            if lines:
                parts.append(Text(f"\n{name}", style="bold"))
                parts += [Text(clean(f"  - {line}")) for line in lines]
        console.print(Panel(Group(*parts), title="Recommendation", border_style="green"))
    console.print(Text(clean(price_age_line(plan)), style="yellow"))
    console.print(Text(clean(stats_line(plan)), style="dim"))
    console.print(Text("Assumptions:", style="bold"))
    for line in plan.assumptions:
        console.print(Text(clean(f"  - {line}"), style="dim"))
