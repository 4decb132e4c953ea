"""The chart helper: the SVG's structure (axes, marks with their data, escaping), and the pages
drawing the same data points as the three hand-written SVG writers they replace."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from gpurent.monitor.report import Report
from gpurent.plan import Plan
from gpurent.report import charts
from gpurent.report.html import monitor_page, plan_page, spot_history_page

from .page_inputs import monitor_window, spot_history
from .page_text import page_text

NS = "{http://www.w3.org/2000/svg}"
GOLDEN = Path(__file__).parent / "golden"
EVIL = "<script>alert('x')</script> & \"q\""


def _svgs(page: str) -> list[ET.Element]:
    return [ET.fromstring(m) for m in re.findall(r"<svg.*?</svg>", page, re.S)]


def _by_class(root: ET.Element, tag: str, cls: str) -> list[ET.Element]:
    return [e for e in root.iter(f"{NS}{tag}") if (e.get("class") or "").split()[:1] == [cls]]


def _pairs(text: str) -> list[tuple[float, float]]:
    return [(float(a), float(b)) for a, b in (p.split(",") for p in text.split())]


def test_scatter_has_axes_points_intervals_and_escapes() -> None:
    points = [
        charts.Point(x=0.5, y=10.0, x_low=0.4, x_high=0.7, y_low=8.0, y_high=13.0, label=EVIL),
        charts.Point(x=2.0, y=4.0, label="b", highlight=True, best=True),
        charts.Point(x=90.0, y=3000.0, label="c", highlight=True),
    ]
    svg = charts.scatter(points, x_label="hours <x>", y_label="USD")
    assert "<script>" not in svg
    root = ET.fromstring(svg)  # well-formed
    axes = {g.get("class") for g in root.iter(f"{NS}g")}
    assert {"axis x", "axis y"} <= axes
    labels = [t.text for g in root.iter(f"{NS}g") for t in g if t.get("class") == "label"]
    assert labels == ["hours <x> (log)", "USD (log)"]  # spans > 20x: log axes
    circles = list(root.iter(f"{NS}circle"))
    assert [(c.get("class"), c.find(f"{NS}title").text) for c in circles] == [
        ("point", EVIL),
        ("pareto", "c"),
        ("best", "b"),
    ]
    assert [(float(c.get("data-x")), float(c.get("data-y"))) for c in circles] == [
        (0.5, 10.0),
        (90.0, 3000.0),
        (2.0, 4.0),
    ]
    x_bar, y_bar = (e for e in root.iter(f"{NS}line") if "interval" in (e.get("class") or ""))
    assert (x_bar.get("data-low"), x_bar.get("data-high")) == ("0.4", "0.7")
    assert (y_bar.get("data-low"), y_bar.get("data-high")) == ("8", "13")
    assert float(x_bar.get("x1")) < float(circles[0].get("cx")) < float(x_bar.get("x2"))
    assert len(_by_class(root, "polyline", "front")) == 1  # the two highlighted points joined
    assert charts.scatter([], x_label="x", y_label="y") == ""


def test_line_chart_breaks_at_gaps_clips_to_its_range_and_keeps_the_data() -> None:
    series = [
        charts.Series(label=EVIL, points=((0.0, 10.0), (1.0, None), (2.0, 130.0), (3.0, 50.0))),
        charts.Series(label="b", points=((0.0, 5.0), (3.0, 6.0)), color=charts.ORANGE),
    ]
    svg = charts.line_chart(
        series, title="t <1>", x_label="s", y_label="%", y_range=(0.0, 100.0), guides=(60.0,)
    )
    root = ET.fromstring(svg)
    lines = _by_class(root, "polyline", "series")
    assert [(e.get("data-series"), _pairs(e.get("data-points"))) for e in lines] == [
        (EVIL, [(0.0, 10.0)]),
        (EVIL, [(2.0, 130.0), (3.0, 50.0)]),  # the gap splits the line; data unclipped
        ("b", [(0.0, 5.0), (3.0, 6.0)]),
    ]
    top = min(float(y) for _, y in (p.split(",") for p in lines[1].get("points").split()))
    assert top == pytest.approx(float(root.find(f"{NS}rect").get("y")))  # 130 drawn at 100
    (guide,) = _by_class(root, "line", "guide")
    assert guide.get("data-y") == "60"
    assert {g.get("class") for g in root.iter(f"{NS}g")} == {"axis x", "axis y"}
    assert root.get("aria-label") == "t <1>" and "<1>" not in svg
    nothing = [charts.Series(label="x", points=((0.0, None),))]
    empty = charts.line_chart(nothing, title=EVIL, x_label="s", y_label="%")
    assert empty.startswith('<p class="nodata">') and "<script>" not in empty


def test_heatmap_has_168_cells_darker_for_more() -> None:
    values: list[float | None] = [float(h % 24) for h in range(168)]
    values[5] = None
    root = ET.fromstring(charts.hour_of_week_heatmap(values, title="p", value_label=EVIL))
    cells = _by_class(root, "rect", "cell")
    assert [int(c.get("data-hour")) for c in cells] == list(range(168))
    assert cells[5].get("data-value") is None and "no data" in cells[5].find(f"{NS}title").text
    assert cells[30].find(f"{NS}title").text.startswith("Tue 06:00: ")
    assert float(cells[30].get("data-value")) == 6.0

    def darkness(cell: ET.Element) -> int:
        return sum(255 - int(cell.get("fill")[i : i + 2], 16) for i in (1, 3, 5))

    assert darkness(cells[23]) > darkness(cells[12]) > darkness(cells[0])
    with pytest.raises(ValueError, match="168 values"):
        charts.hour_of_week_heatmap([1.0] * 24, title="p", value_label="v")


def test_bar_chart_bars_are_proportional() -> None:
    bars = [charts.Bar(label="node <a>", value=2.0), charts.Bar(label="b", value=4.0)]
    root = ET.fromstring(charts.bar_chart(bars, title="t", value_label="TFLOP/s"))
    rects = _by_class(root, "rect", "bar")
    assert [r.get("data-value") for r in rects] == ["2", "4"]
    assert float(rects[1].get("width")) == pytest.approx(2 * float(rects[0].get("width")), 0.01)
    assert any(t.text == "node <a>" for t in root.iter(f"{NS}text"))
    assert "axis x" in {g.get("class") for g in root.iter(f"{NS}g")}


def _old_charts(name: str) -> dict[str, list[ET.Element]]:
    """The old page's charts: title -> its solid polylines (the data; dashed ones are limits)."""
    page = (GOLDEN / f"{name}.html").read_text()
    out: dict[str, list[ET.Element]] = {}
    for m in re.finditer(r"(?:<figcaption>(.*?)</figcaption>)?(<svg.*?</svg>)", page, re.S):
        root = ET.fromstring(m.group(2))
        title = m.group(1) or root.get("aria-label")
        out[title] = [e for e in root.iter(f"{NS}polyline") if e.get("stroke-dasharray") is None]
    return out


def _new_lines(page: str) -> dict[str, list[ET.Element]]:
    return {
        r.get("aria-label"): _by_class(r, "polyline", "series")
        for r in _svgs(page)
        if _by_class(r, "polyline", "series")
    }


@pytest.mark.parametrize("scenario", ["busy", "idle"])
def test_monitor_timelines_draw_the_old_points(scenario: str) -> None:
    diagnosis, cost, samples, thresholds = monitor_window(scenario)
    page = monitor_page(Report(diagnosis=diagnosis, cost=cost), samples, thresholds)
    old, new = _old_charts(f"monitor-{scenario}"), _new_lines(page)
    assert set(old) == set(new) and len(old) == len(diagnosis.gpus) + 1
    width, height, pad = 720, 160, 36  # the old writer's geometry
    for title, lines in new.items():
        assert [e.get("stroke") for e in lines] == [e.get("stroke") for e in old[title]]
        data = [_pairs(e.get("data-points")) for e in lines]
        t0 = min(t for d in data for t, _ in d)
        span = max(max(t for d in data for t, _ in d) - t0, 1e-9)
        for points, before in zip(data, old[title], strict=True):
            drawn = _pairs(before.get("points"))
            assert len(points) == len(drawn)
            for (t, v), (x, y) in zip(points, drawn, strict=True):
                assert (x - pad) / (width - 2 * pad) == pytest.approx((t - t0) / span, abs=1e-3)
                assert (height - pad / 2 - y) / (height - pad) == pytest.approx(
                    max(0.0, min(100.0, v)) / 100, abs=2e-3
                )


def test_spot_profiles_draw_the_old_points_and_a_heat_map() -> None:
    report = spot_history()
    page = spot_history_page(report)
    old = _old_charts("spot-history")
    (caption,) = old
    new_roots = [r for r in _svgs(page) if _by_class(r, "polyline", "series")]
    (root,) = new_roots
    data = [p for e in _by_class(root, "polyline", "series") for p in _pairs(e.get("data-points"))]
    drawn = [p for e in old[caption] for p in _pairs(e.get("points"))]
    assert len(data) == len(drawn) == report.price_profile.covered_bins
    lo, hi = min(v for _, v in data), max(v for _, v in data)
    w, h, pad = 840, 220, 40
    for (b, v), (x, y) in zip(data, drawn, strict=True):
        assert round((x - pad) * 167 / (w - 2 * pad)) == b
        assert (h - pad - y) / (h - 2 * pad) == pytest.approx((v - lo) / (hi - lo), abs=2e-3)
    assert html.unescape(caption) in page_text(page)  # the figure keeps its caption
    (heat,) = [r for r in _svgs(page) if _by_class(r, "rect", "cell")]
    cells = [c for c in _by_class(heat, "rect", "cell") if c.get("data-value")]
    values = {int(c.get("data-hour")): float(c.get("data-value")) for c in cells}
    assert values == {
        b: pytest.approx(m, rel=1e-5)
        for b, m in enumerate(report.price_profile.means)
        if m is not None
    }


def test_plan_chart_draws_the_old_points_with_their_intervals(feasible_plan: Plan) -> None:
    (old,) = _svgs((GOLDEN / "plan-feasible_plan.html").read_text())
    (new,) = _svgs(plan_page(feasible_plan))

    def marks(root: ET.Element) -> Counter[tuple[str | None, str | None]]:
        return Counter(
            (c.get("class"), c.find(f"{NS}title").text) for c in root.iter(f"{NS}circle")
        )

    assert marks(new) == marks(old)
    bars = [e for e in new.iter(f"{NS}line") if "interval" in (e.get("class") or "")]
    assert len(bars) == 2 * len(list(new.iter(f"{NS}circle")))
