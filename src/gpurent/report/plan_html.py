"""A plan as one self-contained HTML file with an inline SVG cost-vs-time chart."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from gpurent.plan.result import Candidate, Plan
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
from gpurent.report.svg import Point, scatter_svg
from gpurent.units import format_duration, format_usd

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3} tr.best td{background:#eaf7ea;font-weight:600}
.bad{border-left:4px solid #d62728;padding:0.5em 1em;background:#fff3f3}
.rec{border-left:4px solid #2ca02c;padding:0.5em 1em;background:#f6fbf6}
.dim{color:#666;font-size:13px}
"""


def _table(headers: Iterable[str], rows: Iterable[tuple[str, ...]], best: bool = False) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = []
    for i, row in enumerate(rows):
        cls = ' class="best"' if best and i == 0 else ""
        cells = "".join(f"<td>{escape(c).replace(chr(10), '<br>')}</td>" for c in row)
        body.append(f"<tr{cls}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _list(lines: Iterable[str]) -> str:
    return "<ul>" + "".join(f"<li>{escape(line)}</li>" for line in lines) + "</ul>"


def chart(plan: Plan) -> str:
    """Cost vs time of every shown candidate; the Pareto front joined; the pick in red."""
    seen: dict[tuple[str, str, str, int, str], Candidate] = {}
    pareto_keys = set()
    for c in plan.pareto:
        key = (c.provider, c.instance_type, c.region, c.nodes, c.pricing.value)
        pareto_keys.add(key)
        seen[key] = c
    for c in plan.top:
        seen.setdefault((c.provider, c.instance_type, c.region, c.nodes, c.pricing.value), c)
    best = plan.best
    points = [
        Point(
            x=c.time_s / 3600.0,
            y=c.cost_usd,
            label=f"{c.gpus_label} {c.label}: {format_duration(c.time_s)}, "
            f"{format_usd(c.cost_usd)}",
            highlight=key in pareto_keys,
            best=best is not None and c.label == best.label and c.nodes == best.nodes,
        )
        for key, c in seen.items()
    ]
    return scatter_svg(points, x_label="time to finish (hours)", y_label="cost to finish (USD)")


def render_html(plan: Plan) -> str:
    """The whole plan as a standalone HTML page (no external assets)."""
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{escape(title(plan))}</title><style>{_CSS}</style></head><body>",
        f"<h1>{escape(title(plan))}</h1>",
        f"<p class='dim'>{escape(' | '.join(plan.constraints))}</p>",
    ]
    if not plan.feasible:
        parts.append(
            f"<div class='bad'><h2>No plan meets the request</h2>"
            f"{_list(plan.infeasible_reasons)}</div>"
        )
    e = plan.explanation
    if e is not None:
        parts.append(f"<div class='rec'><h2>Recommendation</h2><p><b>{escape(e.headline)}</b></p>")
        for name, lines in explanation_sections(e):
            if lines:
                parts.append(f"<h3>{escape(name)}</h3>{_list(lines)}")
        parts.append("</div>")
    if plan.top or plan.pareto:
        parts.append("<h2>Cost vs time</h2>")
        parts.append(
            "<p class='dim'>Blue: Pareto front (nothing else is both faster and "
            "cheaper); red: the recommendation; grey: other ranked candidates.</p>"
        )
        parts.append(chart(plan))
    if plan.top:
        parts.append(f"<h2>{top_heading(plan)}</h2>")
        parts.append(_table(TABLE_HEADERS, (candidate_row(c) for c in plan.top), plan.feasible))
        parts.append(f"<h2>{escape(BREAKDOWN_TITLE)}</h2>")
        for heading, lines in breakdown_sections(plan):
            parts.append(f"<h3>{escape(heading)}</h3>{_list(lines)}")
    if plan.pareto:
        parts.append("<h2>Pareto front</h2>")
        parts.append(_table(PARETO_HEADERS, (pareto_row(c) for c in plan.pareto)))
    parts.append("<h2>Assumptions</h2>")
    parts.append(_list((price_age_line(plan), stats_line(plan), *plan.assumptions)))
    parts.append("</body></html>")
    return "\n".join(parts)
