"""Every HTML page gpurent writes, from the Jinja2 templates in `report/templates/`.

One environment with autoescape on: a name from a catalog, a node or a price file is text, never
markup. Charts (inline SVG built by the chart helper, which escapes what it draws) and the
Markdown a report is written in (turned into HTML by markdown-it-py, raw HTML off) enter the
templates as `Markup`. The web dashboard renders its pages through the same environment.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markdown_it import MarkdownIt
from markupsafe import Markup

from gpurent import __version__
from gpurent.monitor.report import Report, to_markdown
from gpurent.monitor.rules import Thresholds
from gpurent.monitor.sample import Sample
from gpurent.plan.result import Candidate, Plan
from gpurent.report import charts
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
from gpurent.spot.analytics.history import Profile
from gpurent.spot.history_report import HistoryReport
from gpurent.units import format_duration, format_usd


@cache
def environment() -> Environment:
    """The templates' environment: autoescape on, undefined names an error."""
    return Environment(
        loader=PackageLoader("gpurent.report", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render_page(template: str, *, title: str, kind: str, provenance: str, **context: Any) -> str:
    """`template` (a page that extends base.html.j2) with the layout's fields filled in."""
    page = environment().get_template(template)
    return page.render(
        title=title, kind=kind, provenance=provenance, version=__version__, **context
    )


@cache
def _markdown() -> MarkdownIt:
    # CommonMark with tables; raw HTML in the text stays text
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def markdown_html(text: str) -> Markup:
    """Markdown (our own reports') as HTML; any HTML in the text is escaped, not passed."""
    return Markup(_markdown().render(text))


def plan_chart(plan: Plan) -> str:
    """Cost vs time of every shown candidate with its 80% intervals; the Pareto front joined;
    the pick in red."""
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
        charts.Point(
            x=c.time_s / 3600.0,
            y=c.cost_usd,
            x_low=c.time_low_s / 3600.0,
            x_high=c.time_high_s / 3600.0,
            y_low=c.cost_low_usd,
            y_high=c.cost_high_usd,
            label=f"{c.gpus_label} {c.label}: {format_duration(c.time_s)}, "
            f"{format_usd(c.cost_usd)}",
            highlight=key in pareto_keys,
            best=best is not None and c.label == best.label and c.nodes == best.nodes,
        )
        for key, c in seen.items()
    ]
    return charts.scatter(points, x_label="time to finish (hours)", y_label="cost to finish (USD)")


def plan_page(plan: Plan) -> str:
    """The whole plan as one self-contained page (no external assets)."""
    chart = plan_chart(plan) if plan.top or plan.pareto else ""
    e = plan.explanation
    return render_page(
        "plan.html.j2",
        title=title(plan),
        kind="plan",
        provenance=price_age_line(plan),
        plan=plan,
        explanation=e,
        explanation_sections=explanation_sections(e) if e is not None else (),
        chart=Markup(chart),
        top_heading=top_heading(plan),
        table_headers=TABLE_HEADERS,
        top_rows=[candidate_row(c) for c in plan.top],
        breakdown_title=BREAKDOWN_TITLE,
        breakdown=breakdown_sections(plan) if plan.top else (),
        pareto_headers=PARETO_HEADERS,
        pareto_rows=[pareto_row(c) for c in plan.pareto],
        assumptions=(price_age_line(plan), stats_line(plan), *plan.assumptions),
    )


def _gpu_series(
    samples: Sequence[Sample], index: int, sm_source: bool
) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    act: list[tuple[float, float]] = []
    mem: list[tuple[float, float]] = []
    for s in samples:
        for x in s.gpus:
            if x.index != index:
                continue
            value = x.sm_util_pct if sm_source else x.gpu_busy_pct
            if value is not None:
                act.append((s.timestamp_s, value))
            if x.mem_copy_util_pct is not None:
                mem.append((s.timestamp_s, x.mem_copy_util_pct))
    return act, mem


def _timeline(
    title: str, series: Sequence[charts.Series], guides: Sequence[float], t0: float
) -> Markup:
    shifted = [
        charts.Series(label=x.label, color=x.color, points=tuple((t - t0, v) for t, v in x.points))
        for x in series
    ]
    return Markup(
        charts.line_chart(
            shifted,
            title=title,
            x_label="seconds into the window",
            y_label="%",
            y_range=(0.0, 100.0),
            guides=guides,
            height=180,
        )
    )


def monitor_page(report: Report, samples: Sequence[Sample], thresholds: Thresholds) -> str:
    """A recorded window: the Markdown report as HTML, then one timeline per GPU and the host."""
    d = report.diagnosis
    t0 = d.start_s
    timelines: list[Markup] = []
    for g in d.gpus:
        sm_source = g.activity_source == "sm_util_pct"
        act, mem = _gpu_series(samples, g.index, sm_source)
        label = "SM util %" if sm_source else "busy % (no SM metric)"
        timelines.append(
            _timeline(
                f"GPU {g.index} {g.name}",
                [
                    charts.Series(label=label, color=charts.BLUE, points=tuple(act)),
                    charts.Series(label="memory-copy %", color=charts.ORANGE, points=tuple(mem)),
                ],
                (thresholds.sm_util_low_pct, thresholds.mem_copy_peak_pct),
                t0,
            )
        )
    disk, cpu = _host_series(samples)
    timelines.append(
        _timeline(
            "host",
            [
                charts.Series(label="disk %util", color=charts.GREEN, points=tuple(disk)),
                charts.Series(label="CPU %", color=charts.RED, points=tuple(cpu)),
            ],
            (thresholds.disk_util_high_pct,),
            t0,
        )
    )
    return render_page(
        "monitor.html.j2",
        title="gpurent monitor report",
        kind="monitor report",
        provenance=f"{d.samples} samples from the recorded store",
        max_width="60em",
        body=markdown_html(to_markdown(report)),
        charts=timelines,
    )


def _host_series(
    samples: Sequence[Sample],
) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """The host's busiest-disk %util and CPU % over the window, where read."""
    disk = [
        (s.timestamp_s, s.host.disk_util_pct) for s in samples if s.host.disk_util_pct is not None
    ]
    cpu = [(s.timestamp_s, s.host.cpu_util_pct) for s in samples if s.host.cpu_util_pct is not None]
    return disk, cpu


def _profile_charts(profile: Profile, caption: str, value_label: str) -> tuple[str, Markup]:
    """The hour-of-week profile as a line (gaps where a bin saw no data) and a heat map."""
    line = charts.line_chart(
        [
            charts.Series(
                label=value_label, points=tuple((float(b), m) for b, m in enumerate(profile.means))
            )
        ],
        title=caption,
        x_label=f"hour of week (UTC{profile.utc_offset_hours:+d})",
        y_label=value_label,
        x_ticks=charts.hour_of_week_ticks(),
        x_separators=charts.midnights(),
        x_range=(0.0, 168.0),
        width=840,
        height=220,
    )
    heat = charts.hour_of_week_heatmap(profile.means, title=caption, value_label=value_label)
    return caption, Markup(line + "\n" + heat)


def spot_history_page(report: HistoryReport) -> str:
    """The answer, the hour-of-week profiles (line and heat map), the forecast back-test."""
    figures = [
        _profile_charts(
            report.price_profile,
            "Price by hour of week (relative to each series' mean)",
            "relative price",
        )
    ]
    if report.availability_profile is not None:
        figures.append(
            _profile_charts(
                report.availability_profile,
                "Availability by hour of week (share of time with capacity)",
                "availability",
            )
        )
    return render_page(
        "spot_history.html.j2",
        title="gpurent spot history",
        kind="spot history",
        provenance=f"{report.series} price series, {report.start:%Y-%m-%d %H:%M} to "
        f"{report.end:%Y-%m-%d %H:%M} UTC",
        max_width="900px",
        report=report,
        figures=figures,
    )
