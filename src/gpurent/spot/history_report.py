"""One analysis of a price history (and optional availability traces), and its HTML page.

`analyse_history` ties the pieces together (step functions -> hour-of-week profiles -> the
weekday-evening test for price, and for availability when traces are given -> forecast
back-test); `render_html` draws it as a self-contained page with inline SVG (no dependency).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from gpurent.errors import InputError
from gpurent.spot.analytics.forecast import Backtest, backtest
from gpurent.spot.analytics.history import (
    PatternTest,
    PriceSeries,
    Profile,
    availability_profile,
    hour_group_test,
    is_business_hours,
    price_profile,
    weekday_evening_test,
)
from gpurent.spot.io.trace import Trace


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryReport:
    """What `gpurent spot history` prints: coverage, profiles, tests, back-test."""

    series: int
    start: datetime
    end: datetime
    days_of_data: float
    price_profile: Profile
    price_evening: PatternTest
    availability_profile: Profile | None
    availability_evening: PatternTest | None
    availability_business_hours: PatternTest | None
    backtest: Backtest
    answer: str


def analyse_history(
    series: Sequence[PriceSeries],
    *,
    traces: Sequence[Trace] = (),
    utc_offset_hours: int = 0,
    evening_hours: tuple[int, int] = (17, 22),
    horizon_h: int = 1,
    nodes: int = 1,
) -> HistoryReport:
    """Profiles, weekday-evening tests and the forecast back-test for the given series."""
    if not series:
        raise InputError("no price series to analyse")
    start = min(s.times[0] for s in series)
    end = max(s.end for s in series)
    days = (end - start).total_seconds() / 86400.0
    prof = price_profile(series, utc_offset_hours=utc_offset_hours)
    price_test = weekday_evening_test(
        prof, quantity="price", days_of_data=days, evening_hours=evening_hours
    )
    avail = avail_eve = avail_biz = None
    if traces:
        avail = availability_profile(traces, utc_offset_hours=utc_offset_hours, nodes=nodes)
        trace_days = max(t.duration_hours for t in traces) / 24.0
        avail_eve = weekday_evening_test(
            avail, quantity="availability", days_of_data=trace_days, evening_hours=evening_hours
        )
        avail_biz = hour_group_test(
            avail,
            is_business_hours,
            group_name="weekday business hours (09-17)",
            quantity="availability",
            days_of_data=trace_days,
        )
    bt = backtest(series, horizon_h=horizon_h, warmup_h=min(24, max(1, int(days * 24) // 2)))
    answer = "Is spot cheapest on weekday evenings? " + price_test.verdict + "."
    if avail_biz is not None:
        answer += " Availability: " + avail_biz.verdict + "."
    return HistoryReport(
        series=len(series),
        start=start,
        end=end,
        days_of_data=days,
        price_profile=prof,
        price_evening=price_test,
        availability_profile=avail,
        availability_evening=avail_eve,
        availability_business_hours=avail_biz,
        backtest=bt,
        answer=answer,
    )


def _svg_profile(profile: Profile, title: str, y_label: str) -> str:
    """A 168-bin line chart with day separators; gaps where a bin has no data."""
    w, h, pad = 840, 220, 40
    values = [m for m in profile.means if m is not None]
    if not values:
        return f"<p>{html.escape(title)}: no data</p>"
    lo, hi = min(values), max(values)
    if hi - lo < 1e-12:
        lo, hi = lo - 0.5 * abs(lo or 1) * 0.01, hi + 0.5 * abs(hi or 1) * 0.01

    def xy(b: int, v: float) -> tuple[float, float]:
        return pad + b * (w - 2 * pad) / 167, h - pad - (v - lo) * (h - 2 * pad) / (hi - lo)

    paths: list[list[tuple[float, float]]] = []
    current: list[tuple[float, float]] = []
    for b, m in enumerate(profile.means):
        if m is None:
            if current:
                paths.append(current)
            current = []
        else:
            current.append(xy(b, m))
    if current:
        paths.append(current)
    lines = "".join(
        '<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="'
        + " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
        + '"/>'
        for pts in paths
    )
    days = "".join(
        f'<line x1="{xy(d * 24, lo)[0]:.1f}" y1="{pad}" x2="{xy(d * 24, lo)[0]:.1f}" '
        f'y2="{h - pad}" stroke="#ddd"/>'
        f'<text x="{xy(d * 24 + 12, lo)[0]:.1f}" y="{h - pad + 15}" font-size="11" '
        f'text-anchor="middle">{name}</text>'
        for d, name in enumerate(("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"))
    )
    return (
        f"<figure><figcaption>{html.escape(title)}</figcaption>"
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img">'
        f"{days}{lines}"
        f'<text x="4" y="{pad - 8}" font-size="11">{html.escape(y_label)}: {hi:.4g}</text>'
        f'<text x="4" y="{h - pad + 30}" font-size="11">{lo:.4g}</text></svg></figure>'
    )


def render_html(report: HistoryReport) -> str:
    """A self-contained HTML page: the answer, the profiles as inline SVG, the back-test."""
    off = report.price_profile.utc_offset_hours
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>gpurent spot history</title>",
        "<style>body{font-family:sans-serif;max-width:900px;margin:2em auto}"
        "td,th{padding:2px 8px;text-align:right}</style></head><body>",
        "<h1>Spot price history</h1>",
        f"<p>{report.series} series, {report.start:%Y-%m-%d %H:%M} to {report.end:%Y-%m-%d %H:%M} "
        f"UTC ({report.days_of_data:.2f} days); hours shown at UTC{off:+d}.</p>",
        f"<p><b>{html.escape(report.answer)}</b></p>",
        _svg_profile(
            report.price_profile,
            "Price by hour of week (relative to each series' mean)",
            "relative price",
        ),
    ]
    if report.availability_profile is not None:
        parts.append(
            _svg_profile(
                report.availability_profile,
                "Availability by hour of week (share of time with capacity)",
                "availability",
            )
        )
    parts.append(
        "<h2>Forecast back-test</h2><table><tr><th>method</th><th>MAE $/h</th>"
        "<th>mean rel. error</th><th>forecasts</th></tr>"
    )
    for s in report.backtest.scores:
        mae = "-" if s.mae_usd_per_hour is None else f"{s.mae_usd_per_hour:.5f}"
        rel = "-" if s.mean_relative_error is None else f"{s.mean_relative_error * 100:.3f}%"
        parts.append(
            f"<tr><td>{s.method}</td><td>{mae}</td><td>{rel}</td><td>{s.forecasts}</td></tr>"
        )
    parts.append("</table></body></html>")
    return "\n".join(parts)
