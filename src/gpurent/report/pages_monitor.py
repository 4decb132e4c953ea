"""The dashboard's monitor page: a machine's GPUs over time (utilisation and power, first drawn
from the page's JSON, then followed live from /api/monitor/series), its findings, the money per
machine (spent, burn rate, idle and under-use money, projected cost to finish; followed live
from /api/spend) and the budgets with their alerts, and the form that adds one. The inputs are
the JSON documents the endpoints answer (as plain dicts) and the monitor's diagnosis."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from gpurent.report.pages import Figure, PageInfo, render_dashboard

LIVE_EVERY_S = 2
SPEND_EVERY_S = 5
"""Seconds between the charts' and the money table's fetches (/api/spend reads every stored
sample: ~0.7 s of CPU for an hour of 8 GPUs, docs/serve.md)."""
SPEND_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("machine", "machine", "text"),
    ("job", "job", "text"),
    ("project", "project", "text"),
    ("price $/h", "price_usd_per_hour", "usd"),
    ("samples", "samples", "int"),
    ("spent", "spent_usd", "usd"),
    ("burn $/h", "burn_usd_per_hour", "usd"),
    ("idle money", "idle_wasted_usd", "usd"),
    ("under-use money", "underused_wasted_usd", "usd"),
    ("projected to finish", "projected_cost_usd", "usd"),
)
"""(header, key in /api/spend's machine entries, format): the spend table; gpurent.js formats
the live updates the same way (`usd`: "$1,234.56", `int`, `text`; null: "-")."""
CHARTS: tuple[tuple[str, str, str, str], ...] = (
    ("activity", "activity_pct", "GPU utilisation (%)", "gpu-activity"),
    ("power", "power_w", "power (W)", "gpu-power"),
)
"""(chart id suffix, field of the series reply, y title, gpurent.js transform)."""
BUDGET_DEFAULTS = {
    "scope": "job",
    "name": "",
    "limit_usd": "",
    "thresholds": "0.5, 0.8, 1",
    "webhook_url": "",
}


def cell_text(value: Any, kind: str) -> str:
    """A spend cell as the page and gpurent.js show it."""
    if value is None:
        return "-"
    if kind == "usd":
        return f"${float(value):,.2f}"
    if kind == "int":
        return str(int(value))
    return str(value)


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def series_figure(series: Mapping[str, Any], field: str, y_title: str) -> Figure:
    """One trace per GPU of the series reply's `field` against UTC time, as gpurent.js's
    transform of the same name draws it."""
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": f"GPU {g['gpu']}" + (f" {g['name']}" if g["name"] else ""),
            "x": [_iso(t) for t in g["timestamp_s"]],
            "y": list(g[field]),
        }
        for g in series["gpus"]
    ]
    layout = {
        "xaxis": {"title": {"text": "time (UTC)"}, "type": "date"},
        "yaxis": {"title": {"text": y_title}, "rangemode": "tozero"},
        "margin": {"t": 50, "r": 20},
        "legend": {"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"},
        "height": 320,
    }
    return {"data": data, "layout": layout}


@dataclass(frozen=True, slots=True, kw_only=True)
class MonitorView:
    """The monitor page's content: the machines' names, the one shown, its series reply and
    findings, the /api/spend and /api/budgets documents, and the budget form's values."""

    machines: Sequence[str]
    shown: str
    series: Mapping[str, Any] | None
    findings: Sequence[Any]
    diagnosis_window_s: float
    spend: Mapping[str, Any]
    budgets: Sequence[Mapping[str, Any]]
    budget_form: Mapping[str, str]


def _finding_rows(findings: Sequence[Any]) -> list[tuple[str, str, str, str]]:
    return [(str(f.severity.value), str(f.kind.value), f.summary, f.advice) for f in findings]


def _budget_rows(budgets: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "scope": x["scope"],
            "name": x["name"],
            "limit": cell_text(x["limit_usd"], "usd"),
            "spent": cell_text(x["spend_usd"], "usd"),
            "share": f"{x['share']:.0%}",
            "state": x["state"],
            "thresholds": ", ".join(f"{t:g}" for t in x["thresholds"]),
            "webhook": "yes" if x["webhook"] else "no",
            "alerts": [
                {
                    "text": f"{a['threshold']:.0%} of {cell_text(a['limit_usd'], 'usd')} at "
                    f"{cell_text(a['spend_usd'], 'usd')}, {_iso(a['fired_s'])[:19]}Z",
                    "webhook": a["webhook_state"] or "queued",
                }
                for a in x["alerts"]
            ],
        }
        for x in budgets
    ]


def monitor_page(info: PageInfo, view: MonitorView, error: str | None = None) -> str:
    """The monitor page (or, without a machine, how to start one)."""
    charts = []
    if view.series is not None:
        url = f"/api/monitor/series?machine={quote(view.shown, safe='')}"
        charts = [
            {
                "id": f"monitor-{key}",
                "figure": series_figure(view.series, field, y_title),
                "url": url,
                "transform": transform,
            }
            for key, field, y_title, transform in CHARTS
        ]
    spend_rows = [
        (m["machine"], [(key, kind, cell_text(m[key], kind)) for _, key, kind in SPEND_COLUMNS])
        for m in view.spend["machines"]
    ]
    return render_dashboard(
        "monitor.html.j2",
        info,
        active="monitor",
        title="Monitor" + (f": {view.shown}" if view.shown else ""),
        provenance="samples pushed by `gpurent monitor --push` to this server's store",
        error=error,
        view=view,
        machine_choices=[(m, m) for m in view.machines],
        charts=charts,
        every_s=LIVE_EVERY_S,
        spend_every_s=SPEND_EVERY_S,
        finding_rows=_finding_rows(view.findings),
        spend_headers=[h for h, _, _ in SPEND_COLUMNS],
        spend_rows=spend_rows,
        budget_rows=_budget_rows(view.budgets),
        form=view.budget_form,
    )
