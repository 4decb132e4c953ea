"""A plan in the terminal (rich): ranked table, Pareto front, explanation panel, assumptions."""

from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from gpurent.plan.result import Plan
from gpurent.report.plan_format import (
    PARETO_HEADERS,
    TABLE_HEADERS,
    candidate_row,
    pareto_row,
    price_age_line,
    stats_line,
    title,
)

_RIGHT = {"#", "time", "cost", "$/unit"}


def render_terminal(plan: Plan, console: Console) -> None:
    """Print the plan: what to rent first, then the evidence, then the assumptions."""
    console.print(Text(title(plan), style="bold"))
    console.print(Text("  " + " | ".join(plan.constraints), style="dim"))
    if not plan.feasible:
        console.print(
            Panel(
                "\n".join(f"- {r}" for r in plan.infeasible_reasons),
                title="No plan meets the request",
                border_style="red",
            )
        )
    if plan.top:
        table = Table(
            title="Ranked candidates" if plan.feasible else "Closest alternatives",
            title_justify="left",
            header_style="bold",
        )
        for h in TABLE_HEADERS:
            table.add_column(
                h,
                justify="right" if h in _RIGHT else "left",
                overflow="fold",
                max_width=44 if h == "notes" else None,
            )
        for i, c in enumerate(plan.top):
            table.add_row(
                *candidate_row(c), style="bold green" if i == 0 and plan.feasible else None
            )
        console.print(table)
    if plan.pareto:
        front = Table(
            title="Pareto front: no other candidate is both faster and cheaper",
            title_justify="left",
            header_style="bold",
        )
        for h in PARETO_HEADERS:
            front.add_column(h, justify="right" if h in _RIGHT else "left")
        for c in plan.pareto:
            front.add_row(*pareto_row(c))
        console.print(front)
    e = plan.explanation
    if e is not None:
        parts: list[Text] = [Text(e.headline, style="bold green")]
        sections = (
            ("Why", e.why),
            ("Memory per GPU", e.memory),
            ("What limits it", e.limits),
            ("Risks", e.risks),
            ("Alternatives", tuple(t.summary for t in e.alternatives)),
            ("Scenario matrix", (e.matrix.summary,) if e.matrix else ()),
        )
        for name, lines in sections:
            if lines:
                parts.append(Text(f"\n{name}", style="bold"))
                parts += [Text(f"  - {line}") for line in lines]
        console.print(Panel(Group(*parts), title="Recommendation", border_style="green"))
    console.print(Text(price_age_line(plan), style="yellow"))
    console.print(Text(stats_line(plan), style="dim"))
    console.print(Text("Assumptions:", style="bold"))
    for line in plan.assumptions:
        console.print(Text(f"  - {line}", style="dim"))
