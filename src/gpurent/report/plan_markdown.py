"""A plan as Markdown: title, verdict, ranked table, Pareto front, explanation, assumptions."""

from __future__ import annotations

from collections.abc import Iterable

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
        heading = "Ranked candidates" if plan.feasible else "Closest alternatives"
        out += [f"## {heading}", ""]
        out += [*_table(TABLE_HEADERS, (candidate_row(c) for c in plan.top)), ""]
    if plan.pareto:
        out += ["## Pareto front (time vs cost)", ""]
        out += [*_table(PARETO_HEADERS, (pareto_row(c) for c in plan.pareto)), ""]
    e = plan.explanation
    if e is not None:
        out += ["## Recommendation", "", f"**{e.headline}**", ""]
        sections = (
            ("Why", e.why),
            ("Memory per GPU", e.memory),
            ("What limits it", e.limits),
            ("Risks", e.risks),
            ("Alternatives", tuple(t.summary for t in e.alternatives)),
        )
        for name, lines in sections:
            if lines:
                out += [f"### {name}", ""] + [f"- {line}" for line in lines] + [""]
        if e.matrix is not None:
            out += ["### Scenario matrix", "", f"- {e.matrix.summary}", ""]
    out += ["## Assumptions", "", f"- {price_age_line(plan)}", f"- {stats_line(plan)}"]
    out += [f"- {line}" for line in plan.assumptions] + [""]
    return "\n".join(out)
