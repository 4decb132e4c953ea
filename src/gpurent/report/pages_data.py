"""The dashboard's offers, spot, bench and vendors pages, from the result objects the CLI's
commands render (offers and their price ages, a zone report, an availability profile and
simulation summaries, a bench result, a vendor evaluation). Figures are plotly dicts, as in
`report.pages`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gpurent.bench.result import BenchResult
from gpurent.catalog.freshness import age_days, is_stale
from gpurent.catalog.offer import Offer
from gpurent.report.bench import fmt, hardware_lines
from gpurent.report.pages import Figure, PageInfo, render_dashboard
from gpurent.report.vendors_format import header_lines, sections
from gpurent.report.vendors_format import title as vendors_title
from gpurent.spot.analytics.history import Profile
from gpurent.spot.analytics.zones import ZoneReport
from gpurent.spot.sim.simulator import SimSummary
from gpurent.vendors.evaluation import Evaluation
from gpurent.vendors.sensitivity import RegionGrid

OFFER_HEADERS = (
    "provider",
    "instance",
    "region",
    "GPUs",
    "GiB/GPU",
    "on-demand $/h",
    "spot $/h",
    "$/GPU-h",
    "price as of",
    "price age",
)
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def _usd(x: float | None) -> str:
    return "-" if x is None else f"{x:,.2f}"


def _age(o: Offer, now: datetime) -> str:
    days = age_days(o.as_of, now)
    if days is None:
        return "unknown"
    return f"{days} d" + (" (stale)" if is_stale(o.as_of, now) else "")


def offer_cells(o: Offer, now: datetime) -> tuple[str, ...]:
    """One offer as the table's cells; the price age is counted from its snapshot date."""
    per_gpu = o.price_usd_per_gpu_hour
    return (
        o.provider,
        o.instance_type,
        o.region,
        f"{o.gpu_count}x {o.gpu_name}",
        f"{o.gpu_memory_gib:g}",
        _usd(o.price_usd_per_hour),
        _usd(o.spot_price_usd_per_hour),
        _usd(per_gpu),
        o.as_of or "-",
        _age(o, now),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class OffersView:
    """The offers page's content: the filters as typed, their choices, and the rows."""

    filters: Mapping[str, str]
    providers: Sequence[str]
    shown: Sequence[Offer]
    matching: int
    source: str
    age: str
    now: datetime


def offers_page(info: PageInfo, view: OffersView, error: str | None = None) -> str:
    """The offers browser: the filter form and the matching offers with their price ages."""
    return render_dashboard(
        "offers.html.j2",
        info,
        active="offers",
        title="Offers",
        provenance=f"prices from {view.source}" + (f" ({view.age})" if view.age else ""),
        error=error,
        view=view,
        headers=OFFER_HEADERS,
        provider_choices=[("", "any"), *((p, p) for p in view.providers)],
        rows=[offer_cells(o, view.now) for o in view.shown],
        stale=[is_stale(o.as_of, view.now) for o in view.shown],
    )


def heatmap_figure(profile: Profile, title: str) -> Figure:
    """The 168 hour-of-week bins as a 7 x 24 heat map (rows Monday to Sunday, columns hours);
    a bin without data is empty."""
    z = [[profile.means[d * 24 + h] for h in range(24)] for d in range(7)]
    return {
        "data": [
            {
                "type": "heatmap",
                "z": z,
                "x": list(range(24)),
                "y": list(DAYS),
                "zmin": 0.0,
                "zmax": 1.0,
                "colorscale": "Viridis",
                "colorbar": {"title": {"text": "available"}},
                "hovertemplate": "%{y} %{x}:00: %{z:.0%}<extra></extra>",
            }
        ],
        "layout": {
            "title": {"text": title},
            "xaxis": {"title": {"text": f"hour of day (UTC{profile.utc_offset_hours:+d})"}},
            "yaxis": {"autorange": "reversed"},
            "margin": {"t": 40, "r": 20},
            "height": 320,
        },
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class SpotView:
    """The spot page's content: where the traces come from, the zone report, the availability
    profile and the simulated policies for the job in `job` (the form's values)."""

    source: str
    zones: ZoneReport
    profile: Profile
    job: Mapping[str, str]
    summaries: Sequence[SimSummary]


def spot_page(info: PageInfo, view: SpotView, error: str | None = None) -> str:
    """Availability heat map, zone advice and the simulation of the deadline policies."""
    z = view.zones
    zone_rows = [
        (
            s.name,
            f"{s.availability:.1%}",
            str(s.lifetimes.runs if s.lifetimes else 0),
            "-" if s.lifetimes is None else f"{s.lifetimes.median_h:.2f}",
        )
        for s in sorted(z.zones, key=lambda s: -s.availability)
    ]
    sim_rows = [
        (
            s.policy,
            str(s.runs),
            f"{s.mean_cost_normalized:.3f}",
            f"{s.p90_cost_normalized:.3f}",
            str(s.deadline_misses),
            f"{s.mean_spot_fraction:.0%}",
        )
        for s in view.summaries
    ]
    return render_dashboard(
        "spot.html.j2",
        info,
        active="spot",
        title="Spot",
        provenance=f"traces: {view.source}",
        error=error,
        view=view,
        figure=heatmap_figure(view.profile, "Availability by hour of week (share of time up)"),
        zone_headers=("zone", "available", "up runs", "median up h"),
        zone_rows=zone_rows,
        set_rows=[
            (
                ", ".join(s.zones),
                f"{s.p_all_unavailable:.2%}",
                f"{s.p_all_unavailable_if_independent:.2%}",
            )
            for s in z.ranked
        ],
        sim_headers=(
            "policy",
            "runs",
            "mean cost / on-demand",
            "p90 cost / on-demand",
            "missed deadlines",
            "spot share",
        ),
        sim_rows=sim_rows,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class BenchView:
    """The bench page's content: the result shown, its file, and the other results' names."""

    result: BenchResult | None
    shown: str
    files: Sequence[str]
    folder: str


def bench_page(info: PageInfo, view: BenchView, error: str | None = None) -> str:
    """A bench result against the expectations: the verdict table and the measurements."""
    r = view.result
    verdict = [
        (
            v.check,
            v.status.value,
            f"{fmt(v.measured)} {v.unit}",
            fmt(v.expected),
            "-" if v.fraction is None else f"{v.fraction:.0%} (min {v.threshold:.0%})",
            v.source if not v.cause else f"{v.source}\n{v.cause}\n-> {v.advice}",
        )
        for v in (r.verdict if r else ())
    ]
    measured = [
        (m.benchmark, m.key, f"{fmt(m.value)} {m.unit}", m.detail)
        for m in (r.measurements if r else ())
    ]
    return render_dashboard(
        "bench.html.j2",
        info,
        active="bench",
        title="Bench",
        provenance=f"results from {view.folder}",
        error=error,
        view=view,
        lines=hardware_lines(r) if r else (),
        verdict_headers=("check", "status", "measured", "expected", "fraction", "source / advice"),
        verdict=verdict,
        measured_headers=("benchmark", "figure", "value", "how"),
        measured=measured,
    )


VENDOR_COLORS = ("#1f4e9c", "#f2c12e", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#17becf")


def region_figure(grid: RegionGrid) -> Figure:
    """Who wins as two weights vary (the others share the rest): a heat map of the winner's
    index in one colour per vendor (the legend names them, with their share of the slice), each
    cell's hover its weights and winner; the weights used marked."""
    n = len(grid.cells)
    k = len(grid.vendors)
    colors = [VENDOR_COLORS[i % len(VENDOR_COLORS)] for i in range(k)]
    scale = [[edge, colors[i]] for i in range(k) for edge in (i / k, (i + 1) / k)]
    weights = [round(i * grid.step, 6) for i in range(n)]
    names = [[None if c is None else grid.vendors[c] for c in row] for row in grid.cells]
    share = dict(grid.share())
    legend = [
        {
            "type": "scatter",
            "mode": "markers",
            "name": f"{name} ({share.get(name, 0.0):.0%})",
            "x": [None],
            "y": [None],
            "marker": {"symbol": "square", "size": 12, "color": colors[i]},
        }
        for i, name in enumerate(grid.vendors)
    ]
    return {
        "data": [
            {
                "type": "heatmap",
                "x": weights,
                "y": weights,
                "z": [list(row) for row in grid.cells],
                "text": names,
                "zmin": -0.5,
                "zmax": k - 0.5,
                "colorscale": scale,
                "showscale": False,
                "hovertemplate": f"{grid.x_criterion} %{{x:.0%}}, {grid.y_criterion} "
                "%{y:.0%}: %{text}<extra></extra>",
            },
            {
                "type": "scatter",
                "mode": "markers",
                "name": "the weights used",
                "x": [grid.base_x],
                "y": [grid.base_y],
                "marker": {"symbol": "circle-open", "size": 14, "color": "#000"},
            },
            *legend,
        ],
        "layout": {
            "title": {"text": f"winner by {grid.x_criterion} and {grid.y_criterion} weight"},
            "xaxis": {"title": {"text": f"weight of {grid.x_criterion}"}, "tickformat": ".0%"},
            "yaxis": {"title": {"text": f"weight of {grid.y_criterion}"}, "tickformat": ".0%"},
            "margin": {"t": 40, "r": 20},
            "height": 420,
        },
    }


def vendors_dashboard(
    info: PageInfo, ev: Evaluation | None, source: str, error: str | None = None
) -> str:
    """The scorecard's sections as tables, and the sensitivity map after the sensitivity."""
    context: dict[str, Any] = {"ev": ev, "source": source}
    if ev is not None:
        context.update(
            header_lines=header_lines(ev),
            sections=sections(ev),
            figure=region_figure(ev.region) if ev.region is not None else None,
        )
    return render_dashboard(
        "vendors.html.j2",
        info,
        active="vendors",
        title=vendors_title(ev) if ev is not None else "Vendors",
        provenance=f"evidence from {source}",
        error=error,
        **context,
    )
