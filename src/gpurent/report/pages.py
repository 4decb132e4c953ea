"""The web dashboard's pages (`gpurent serve`), rendered from result objects through the shared
Jinja2 environment (`report.html`, autoescape on) and the templates in `templates/pages/`.

Charts are plotly figures, `{"data": [...], "layout": {...}}` dicts that a page embeds as JSON
(`<script type="application/json">`, escaped by Jinja's `tojson`) and the app's own
`/static/gpurent.js` draws; the figure builders here are pure functions of the results, so the
tests can read the same values back from the browser.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpurent.plan.result import Candidate, Plan
from gpurent.report.html import render_page
from gpurent.report.plan_format import (
    TABLE_HEADERS,
    breakdown_sections,
    candidate_row,
    explanation_sections,
    price_age_line,
    stats_line,
    title,
    top_heading,
)
from gpurent.units import format_duration, format_usd

NAV: tuple[tuple[str, str, str], ...] = (
    ("plan", "Plan", "/plan"),
    ("offers", "Offers", "/offers"),
    ("spot", "Spot", "/spot"),
    ("monitor", "Monitor", "/monitor"),
    ("bench", "Bench", "/bench"),
    ("vendors", "Vendors", "/vendors"),
)
"""The navigation: (key, label, path); a page names its key as `active`."""

Figure = dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class PageInfo:
    """What every dashboard page's layout needs besides its content: the plotly version (the
    script URL's cache key) and the CSRF token its forms carry."""

    plotly_version: str
    csrf_token: str


def render_dashboard(
    template: str,
    info: PageInfo,
    *,
    active: str,
    title: str,
    provenance: str = "",
    error: str | None = None,
    **context: Any,
) -> str:
    """A page of `templates/pages/` (extending pages/layout.html.j2) with the layout filled in."""
    return render_page(
        f"pages/{template}",
        title=title,
        kind="dashboard",
        provenance=provenance,
        nav=NAV,
        active=active,
        plotly_version=info.plotly_version,
        csrf_token=info.csrf_token,
        error=error,
        **context,
    )


def _candidate_key(c: Candidate) -> tuple[str, str, str, int, str]:
    return (c.provider, c.instance_type, c.region, c.nodes, c.pricing.value)


def _trace(name: str, cands: Sequence[Candidate], color: str, mode: str) -> Figure:
    """One scatter trace: hours and USD with the 80% intervals as asymmetric error bars."""
    hours = [c.time_s / 3600.0 for c in cands]
    costs = [c.cost_usd for c in cands]
    return {
        "type": "scatter",
        "mode": mode,
        "name": name,
        "x": hours,
        "y": costs,
        "error_x": {
            "type": "data",
            "symmetric": False,
            "array": [c.time_high_s / 3600.0 - h for c, h in zip(cands, hours, strict=True)],
            "arrayminus": [h - c.time_low_s / 3600.0 for c, h in zip(cands, hours, strict=True)],
            "thickness": 1,
            "color": color,
        },
        "error_y": {
            "type": "data",
            "symmetric": False,
            "array": [c.cost_high_usd - y for c, y in zip(cands, costs, strict=True)],
            "arrayminus": [y - c.cost_low_usd for c, y in zip(cands, costs, strict=True)],
            "thickness": 1,
            "color": color,
        },
        "marker": {"color": color, "size": 9},
        "text": [
            f"{c.gpus_label} {c.label}: {format_duration(c.time_s)}, {format_usd(c.cost_usd)}"
            for c in cands
        ],
        "hoverinfo": "text",
    }


def plan_figure(plan: Plan) -> Figure:
    """Cost vs time: the Pareto front (joined, by time), the other ranked candidates, and the
    recommendation, each point with its estimate's 80% intervals as error bars."""
    front = sorted(plan.pareto, key=lambda c: c.time_s)
    on_front = {_candidate_key(c) for c in front}
    best = plan.best
    others = [
        c for c in plan.top if _candidate_key(c) not in on_front and (best is None or c is not best)
    ]
    data = [
        _trace("Pareto front", front, "#1f77b4", "lines+markers"),
        _trace("other ranked", others, "#999999", "markers"),
    ]
    if best is not None:
        data.append(_trace("recommendation", [best], "#d62728", "markers"))
    layout = {
        "xaxis": {"title": {"text": "time to finish (hours)"}, "type": "log"},
        "yaxis": {"title": {"text": "cost to finish (USD)"}, "type": "log"},
        "margin": {"t": 20, "r": 20},
        "legend": {"orientation": "h"},
        "height": 440,
    }
    return {"data": data, "layout": layout}


def planner_page(
    info: PageInfo,
    *,
    form: Mapping[str, str],
    choices: Mapping[str, Sequence[tuple[str, str]]],
    plan: Plan | None = None,
    error: str | None = None,
) -> str:
    """The planner: the form (`form` holds the values to show, `choices` the select options),
    and, after a plan, its ranked table, the Pareto chart and the explanation."""
    context: dict[str, Any] = {"form": form, "choices": choices, "plan": plan}
    heading = "Plan: what to rent"
    provenance = ""
    if plan is not None:
        e = plan.explanation
        heading = title(plan)
        provenance = price_age_line(plan)
        context.update(
            figure=plan_figure(plan) if plan.top or plan.pareto else None,
            explanation=e,
            explanation_sections=explanation_sections(e) if e is not None else (),
            top_heading=top_heading(plan),
            table_headers=TABLE_HEADERS,
            top_rows=[candidate_row(c) for c in plan.top],
            breakdown=breakdown_sections(plan) if plan.top else (),
            assumptions=(price_age_line(plan), stats_line(plan), *plan.assumptions),
        )
    return render_dashboard(
        "plan.html.j2",
        info,
        active="plan",
        title=heading,
        provenance=provenance,
        error=error,
        **context,
    )


def message_page(info: PageInfo, *, active: str, title: str, error: str) -> str:
    """A page that only says what went wrong (a refused form, a missing extra)."""
    return render_dashboard("message.html.j2", info, active=active, title=title, error=error)
