"""A plan as Markdown: title, verdict, ranked table, Pareto front, explanation, assumptions."""

from __future__ import annotations

from collections.abc import Iterable

from gpurent.plan.result import Plan
from gpurent.report.plan_format import (
    BREAKDOWN_TITLE,
    PARETO_HEADERS,
    TABLE_HEADERS,
    breakdown_sections,
    candidate_row,
    explanation_sections,
    pareto_row,
    price_age_line,
    stats_line,
    title,
    top_heading,
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(headers: Iterable[str], rows: Iterable[Iterable[str]]) -> list[str]:
    head = list(headers)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def render_markdown(plan: Plan) -> str:
    """The whole plan as one Markdown document."""
    out = [f"# {title(plan)}", ""]
    out += [f"- {line}" for line in plan.constraints] + [""]
    if not plan.feasible:
        out += ["## No plan meets the request", ""]
        out += [f"- {r}" for r in plan.infeasible_reasons] + [""]
    if plan.top:
        out += [f"## {top_heading(plan)}", ""]
        out += [*_table(TABLE_HEADERS, (candidate_row(c) for c in plan.top)), ""]
        out += [f"## {BREAKDOWN_TITLE}", ""]
        for heading, lines in breakdown_sections(plan):
            out += [f"**{heading}**", ""] + [f"- {line}" for line in lines] + [""]
    if plan.pareto:
        out += ["## Pareto front (time vs cost)", ""]
        out += [*_table(PARETO_HEADERS, (pareto_row(c) for c in plan.pareto)), ""]
    e = plan.explanation
    if e is not None:
        out += ["## Recommendation", "", f"**{e.headline}**", ""]
        for name, lines in explanation_sections(e):
            if lines:
                out += [f"### {name}", ""] + [f"- {line}" for line in lines] + [""]
    out += ["## Assumptions", "", f"- {price_age_line(plan)}", f"- {stats_line(plan)}"]
    out += [f"- {line}" for line in plan.assumptions] + [""]
    return "\n".join(out)
