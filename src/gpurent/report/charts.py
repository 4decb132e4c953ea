"""The one chart helper: inline SVG for every gpurent page (no plotting library, no script).

Five kinds: a scatter with 80% intervals as error bars (a plan's cost vs time), a line chart
(a monitor timeline, a spot hour-of-week profile; `None` values leave gaps), an hour-of-week
heat map (7 days x 24 hours), a horizontal bar chart, and a categorical grid (which vendor wins
at which pair of weights). Every mark carries its figures in data units (`data-x`/`data-y`,
`data-points`, `data-hour`/`data-value`, `data-category`) and a <title> tooltip,
so tests and the web dashboard read values rather than pixels. All text is escaped. Axes
switch to log scale when positive data span more than 20x (cost and time across GPU classes).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

BLUE, ORANGE, GREEN, RED, GREY = "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#999"
# colours for categories, in order (the last four after the named ones)
PALETTE = (BLUE, ORANGE, GREEN, RED, "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


@dataclass(frozen=True, slots=True, kw_only=True)
class Point:
    """A scatter point; `*_low`/`*_high` draw its interval; highlighted points are joined."""

    x: float
    y: float
    label: str
    x_low: float | None = None
    x_high: float | None = None
    y_low: float | None = None
    y_high: float | None = None
    highlight: bool = False  # e.g. on the Pareto front
    best: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Series:
    """A line: (x, y) pairs in x order; a `None` y breaks the line."""

    label: str
    points: tuple[tuple[float, float | None], ...]
    color: str = BLUE


@dataclass(frozen=True, slots=True, kw_only=True)
class Bar:
    """One bar of a bar chart: its label, value and colour."""

    label: str
    value: float
    color: str = BLUE


@dataclass(frozen=True, slots=True, kw_only=True)
class GridCell:
    """One cell of a categorical grid: column and row (0 at the bottom left), the category it
    falls in (an index into the legend), its data values and its tooltip."""

    column: int
    row: int
    category: int
    x: float
    y: float
    label: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Category:
    """A legend entry: the category's name (in each cell's data-category) and the legend's text
    (the name unless given, e.g. with the category's share)."""

    name: str
    caption: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class GridMarker:
    """A ring at a (fractional) column and row, e.g. the point actually used."""

    column: float
    row: float
    label: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Frame:
    """The plot area inside an SVG of `width` x `height` pixels."""

    width: int
    height: int
    left: int = 60
    right: int = 20
    top: int = 24
    bottom: int = 40

    @property
    def x0(self) -> float:
        """Left edge of the plot area, in pixels."""
        return float(self.left)

    @property
    def x1(self) -> float:
        """Right edge of the plot area, in pixels."""
        return float(self.width - self.right)

    @property
    def y0(self) -> float:  # the bottom (pixel y grows downwards)
        """Bottom edge of the plot area, in pixels from the top."""
        return float(self.height - self.bottom)

    @property
    def y1(self) -> float:
        """Top edge of the plot area, in pixels from the top."""
        return float(self.top)


def _num(v: float) -> str:
    """A data value as written in data-* attributes: short, exact enough, locale-free."""
    return f"{v:.6g}"


def _log_tick_label(v: float) -> str:
    if v >= 1000 or (v >= 1 and float(v).is_integer()):
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.0f}"
    if v >= 1:
        return f"{v:.1f}"
    return f"{v:.2g}"


def _step(lo: float, hi: float) -> float:
    """A round tick step giving at most six ticks over [lo, hi]."""
    span = hi - lo or abs(hi) or 1.0
    step = 10 ** math.floor(math.log10(span / 5))
    for m in (1, 2, 5, 10):
        if span / (step * m) <= 6:
            return float(step * m)
    return float(step * 10)


def _ticks(lo: float, hi: float, log: bool) -> list[float]:
    if log:
        start, stop = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        ticks = [10.0**e * m for e in range(start, stop + 1) for m in (1, 2, 5)]
        return [t for t in ticks if lo <= t <= hi] or [lo, hi]
    step = _step(lo, hi)
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


class Axis:
    """Data values to pixels along one axis: linear (padded) or log, or a fixed range."""

    def __init__(
        self,
        values: Sequence[float],
        lo_px: float,
        hi_px: float,
        *,
        fixed: tuple[float, float] | None = None,
        allow_log: bool = True,
    ) -> None:
        lo, hi = fixed if fixed is not None else (min(values), max(values))
        self.log = fixed is None and allow_log and lo > 0 and hi / lo > 20
        if fixed is None and self.log:
            lo, hi = lo / 1.15, hi * 1.15
        elif fixed is None:
            pad = (hi - lo) * 0.08 or max(abs(hi) * 0.1, 1e-9)
            lo, hi = (max(0.0, lo - pad) if lo >= 0 else lo - pad), hi + pad
        elif hi <= lo:
            hi = lo + 1.0  # one value on a fixed axis: any span shows it
        self.lo, self.hi, self.lo_px, self.hi_px = lo, hi, lo_px, hi_px

    def __call__(self, v: float) -> float:
        """The pixel position of data value v."""
        if self.log:
            f = (math.log(v) - math.log(self.lo)) / (math.log(self.hi) - math.log(self.lo))
        else:
            f = (v - self.lo) / (self.hi - self.lo)
        return self.lo_px + f * (self.hi_px - self.lo_px)

    def ticks(self) -> list[float]:
        """Data values at which to draw the axis's ticks."""
        return _ticks(self.lo, self.hi, self.log)

    def tick_label(self, v: float) -> str:
        """A tick's text: as many decimals as the linear step needs (0.92, 0.94, ... 1.00)."""
        if self.log:
            return _log_tick_label(v)
        decimals = max(0, -math.floor(math.log10(_step(self.lo, self.hi))))
        return f"{v:,.{decimals}f}"


def _open(frame: Frame, title: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {frame.width} {frame.height}" '
        f'width="{frame.width}" height="{frame.height}" role="img" aria-label="{escape(title)}" '
        'font-family="sans-serif" font-size="11">',
        f"<title>{escape(title)}</title>",
        f'<rect class="plot" x="{frame.x0:.1f}" y="{frame.y1:.1f}" '
        f'width="{frame.x1 - frame.x0:.1f}" height="{frame.y0 - frame.y1:.1f}" '
        'fill="#fafafa" stroke="#ccc"/>',
    ]


def _heading(frame: Frame, title: str) -> str:
    return f'<text class="title" x="{frame.x0:.1f}" y="14" font-size="12">{escape(title)}</text>'


def _x_axis(frame: Frame, axis: Axis, label: str, ticks: Sequence[tuple[float, str]]) -> str:
    parts = ['<g class="axis x">']
    for t, text in ticks:
        x = axis(t)
        parts.append(
            f'<line x1="{x:.1f}" y1="{frame.y1:.1f}" x2="{x:.1f}" y2="{frame.y0:.1f}" '
            f'stroke="#eee"/><text x="{x:.1f}" y="{frame.y0 + 14:.1f}" '
            f'text-anchor="middle">{escape(text)}</text>'
        )
    log = " (log)" if axis.log else ""
    parts.append(
        f'<text class="label" x="{(frame.x0 + frame.x1) / 2:.1f}" y="{frame.height - 6}" '
        f'text-anchor="middle">{escape(label)}{log}</text></g>'
    )
    return "".join(parts)


def _y_axis(frame: Frame, axis: Axis, label: str) -> str:
    parts = ['<g class="axis y">']
    for t in axis.ticks():
        y = axis(t)
        parts.append(
            f'<line x1="{frame.x0:.1f}" y1="{y:.1f}" x2="{frame.x1:.1f}" y2="{y:.1f}" '
            f'stroke="#eee"/><text x="{frame.x0 - 6:.1f}" y="{y + 4:.1f}" '
            f'text-anchor="end">{axis.tick_label(t)}</text>'
        )
    log = " (log)" if axis.log else ""
    parts.append(
        f'<text class="label" transform="translate(14 {(frame.y0 + frame.y1) / 2:.1f}) '
        f'rotate(-90)" text-anchor="middle">{escape(label)}{log}</text></g>'
    )
    return "".join(parts)


def scatter(
    points: Sequence[Point],
    *,
    x_label: str,
    y_label: str,
    width: int = 720,
    height: int = 420,
) -> str:
    """Points with their intervals as error bars; highlighted ones joined in x order; the
    best one larger, in red, labelled. Empty input draws nothing."""
    if not points:
        return ""
    frame = Frame(width=width, height=height, left=80, bottom=50, top=20)

    def extent(p: Point, axis: str) -> list[float]:
        low, high = (p.x_low, p.x_high) if axis == "x" else (p.y_low, p.y_high)
        mid = p.x if axis == "x" else p.y
        return [v for v in (mid, low, high) if v is not None]

    xa = Axis([v for p in points for v in extent(p, "x")], frame.x0, frame.x1)
    ya = Axis([v for p in points for v in extent(p, "y")], frame.y0, frame.y1)
    out = _open(frame, f"{y_label} vs {x_label}")
    out.append(_x_axis(frame, xa, x_label, [(t, xa.tick_label(t)) for t in xa.ticks()]))
    out.append(_y_axis(frame, ya, y_label))
    front = sorted((p for p in points if p.highlight), key=lambda p: p.x)
    if len(front) > 1:
        path = " ".join(f"{xa(p.x):.1f},{ya(p.y):.1f}" for p in front)
        out.append(
            f'<polyline class="front" points="{path}" fill="none" stroke="{BLUE}" '
            'stroke-width="1.5"/>'
        )
    for p in sorted(points, key=lambda p: (p.highlight, p.best)):
        x, y = xa(p.x), ya(p.y)
        kind = "best" if p.best else "pareto" if p.highlight else "point"
        color = RED if p.best else (BLUE if p.highlight else GREY)
        if p.x_low is not None and p.x_high is not None:
            out.append(
                f'<line class="interval x" x1="{xa(p.x_low):.1f}" y1="{y:.1f}" '
                f'x2="{xa(p.x_high):.1f}" y2="{y:.1f}" stroke="{color}" stroke-opacity="0.5" '
                f'data-low="{_num(p.x_low)}" data-high="{_num(p.x_high)}"/>'
            )
        if p.y_low is not None and p.y_high is not None:
            out.append(
                f'<line class="interval y" x1="{x:.1f}" y1="{ya(p.y_low):.1f}" '
                f'x2="{x:.1f}" y2="{ya(p.y_high):.1f}" stroke="{color}" stroke-opacity="0.5" '
                f'data-low="{_num(p.y_low)}" data-high="{_num(p.y_high)}"/>'
            )
        out.append(
            f'<circle class="{kind}" cx="{x:.1f}" cy="{y:.1f}" r="{7 if p.best else 5}" '
            f'fill="{color}" fill-opacity="0.8" data-x="{_num(p.x)}" data-y="{_num(p.y)}">'
            f"<title>{escape(p.label)}</title></circle>"
        )
        if p.best:
            out.append(f'<text x="{x + 10:.1f}" y="{y - 8:.1f}" fill="{color}">best</text>')
    out.append("</svg>")
    return "\n".join(out)


def line_chart(
    series: Sequence[Series],
    *,
    title: str,
    x_label: str,
    y_label: str,
    y_range: tuple[float, float] | None = None,
    guides: Sequence[float] = (),
    x_ticks: Sequence[tuple[float, str]] | None = None,
    x_range: tuple[float, float] | None = None,
    x_separators: Sequence[float] = (),
    width: int = 720,
    height: int = 200,
) -> str:
    """Lines (values clipped to `y_range` when given), dashed horizontal `guides` (e.g.
    thresholds), vertical `x_separators` (e.g. midnights), a legend. Without any value: a
    one-line "no data" paragraph instead."""
    values = [(x, y) for s in series for x, y in s.points if y is not None]
    if not values:
        return f'<p class="nodata">{escape(title)}: no data</p>'
    frame = Frame(width=width, height=height, top=28)
    xs = [x for x, _ in values]
    xa = Axis(xs, frame.x0, frame.x1, fixed=x_range or (min(xs), max(xs)))
    ys = [y for _, y in values] + list(guides)
    ya = Axis(ys, frame.y0, frame.y1, fixed=y_range, allow_log=False)

    def clip(v: float) -> float:
        return v if y_range is None else max(y_range[0], min(y_range[1], v))

    out = _open(frame, title)
    out.append(_heading(frame, title))
    ticks = x_ticks if x_ticks is not None else [(t, xa.tick_label(t)) for t in xa.ticks()]
    out.append(_x_axis(frame, xa, x_label, ticks))
    out.append(_y_axis(frame, ya, y_label))
    for sep in x_separators:
        x = xa(sep)
        out.append(
            f'<line class="separator" x1="{x:.1f}" y1="{frame.y1:.1f}" x2="{x:.1f}" '
            f'y2="{frame.y0:.1f}" stroke="#ccc"/>'
        )
    for g in guides:
        y = ya(clip(g))
        out.append(
            f'<line class="guide" x1="{frame.x0:.1f}" y1="{y:.1f}" x2="{frame.x1:.1f}" '
            f'y2="{y:.1f}" stroke="{GREY}" stroke-dasharray="4 3" data-y="{_num(g)}"/>'
        )
    for i, s in enumerate(series):
        runs: list[list[tuple[float, float]]] = [[]]
        for x, value in s.points:
            if value is None:
                runs.append([])
            else:
                runs[-1].append((x, value))
        for run in (r for r in runs if r):
            pixels = " ".join(f"{xa(x):.1f},{ya(clip(y)):.1f}" for x, y in run)
            data = " ".join(f"{_num(x)},{_num(y)}" for x, y in run)
            out.append(
                f'<polyline class="series" points="{pixels}" data-series="{escape(s.label)}" '
                f'data-points="{data}" stroke="{s.color}" stroke-width="1.5" fill="none">'
                f"<title>{escape(s.label)}</title></polyline>"
            )
        out.append(
            f'<text class="legend" x="{frame.x1 - 200:.1f}" y="{12 + 12 * i}" '
            f'fill="{s.color}">{escape(s.label)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out)


def hour_of_week_ticks() -> list[tuple[float, str]]:
    """Day names at each day's noon, for line charts over the 168 hours of a week."""
    return [(d * 24 + 12, name) for d, name in enumerate(DAYS)]


def midnights() -> list[float]:
    """The six day boundaries inside a week's 168 hours."""
    return [float(d * 24) for d in range(1, 7)]


def _shade(f: float) -> str:
    """White (0) to the chart blue (1)."""
    f = max(0.0, min(1.0, f))
    r, g, b = (round(255 + (c - 255) * f) for c in (0x1F, 0x77, 0xB4))
    return f"#{r:02x}{g:02x}{b:02x}"


def hour_of_week_heatmap(
    values: Sequence[float | None], *, title: str, value_label: str, width: int = 720
) -> str:
    """168 hour-of-week values (Monday 00:00 first) as 7 rows of 24 cells, light to dark."""
    if len(values) != 168:
        raise ValueError(f"an hour-of-week heat map takes 168 values, got {len(values)}")
    known = [v for v in values if v is not None]
    if not known:
        return f'<p class="nodata">{escape(title)}: no data</p>'
    lo, hi = min(known), max(known)
    frame = Frame(width=width, height=7 * 18 + 64, left=40, top=28, bottom=36)
    cell_w = (frame.x1 - frame.x0) / 24
    out = _open(frame, title)
    out.append(_heading(frame, title))
    for h in range(0, 24, 3):
        out.append(
            f'<text x="{frame.x0 + (h + 0.5) * cell_w:.1f}" y="{frame.y1 + 7 * 18 + 12:.1f}" '
            f'text-anchor="middle">{h:02d}</text>'
        )
    for hour, v in enumerate(values):
        day, h = divmod(hour, 24)
        x, y = frame.x0 + h * cell_w, frame.y1 + day * 18
        if h == 0:
            out.append(
                f'<text x="{frame.x0 - 6:.1f}" y="{y + 13:.1f}" text-anchor="end">'
                f"{DAYS[day]}</text>"
            )
        shown = "no data" if v is None else f"{v:.4g}"
        fill = "#eee" if v is None else _shade(0.5 if hi == lo else (v - lo) / (hi - lo))
        value = "" if v is None else f' data-value="{_num(v)}"'
        out.append(
            f'<rect class="cell" x="{x:.1f}" y="{y:.1f}" width="{cell_w:.1f}" height="18" '
            f'fill="{fill}" data-hour="{hour}"{value}><title>{DAYS[day]} {h:02d}:00: '
            f"{escape(value_label)} {shown}</title></rect>"
        )
    out.append(
        f'<text class="legend" x="{frame.x0:.1f}" y="{frame.height - 6}">{escape(value_label)}: '
        f"light {lo:.4g}, dark {hi:.4g}</text>"
    )
    out.append("</svg>")
    return "\n".join(out)


def bar_chart(bars: Sequence[Bar], *, title: str, value_label: str, width: int = 720) -> str:
    """Horizontal bars from zero, one per row, each labelled with its value."""
    if not bars:
        return f'<p class="nodata">{escape(title)}: no data</p>'
    frame = Frame(width=width, height=len(bars) * 22 + 64, left=160, top=28, bottom=36)
    values = [b.value for b in bars]
    va = Axis([0.0, *values], frame.x0, frame.x1, allow_log=False)
    out = _open(frame, title)
    out.append(_heading(frame, title))
    out.append(_x_axis(frame, va, value_label, [(t, va.tick_label(t)) for t in va.ticks()]))
    for i, b in enumerate(bars):
        y = frame.y1 + 4 + i * 22
        x0, x1 = sorted((va(0.0), va(b.value)))
        out.append(
            f'<text x="{frame.x0 - 6:.1f}" y="{y + 12:.1f}" text-anchor="end">'
            f"{escape(b.label)}</text>"
            f'<rect class="bar" x="{x0:.1f}" y="{y:.1f}" width="{x1 - x0:.1f}" height="16" '
            f'fill="{b.color}" data-value="{_num(b.value)}"><title>{escape(b.label)}: '
            f"{b.value:.4g} {escape(value_label)}</title></rect>"
        )
    out.append("</svg>")
    return "\n".join(out)


def category_grid(
    cells: Sequence[GridCell],
    *,
    title: str,
    x_label: str,
    y_label: str,
    legend: Sequence[Category],
    x_ticks: Sequence[tuple[float, str]] = (),
    y_ticks: Sequence[tuple[float, str]] = (),
    marker: GridMarker | None = None,
    plot_px: int = 360,
    legend_px: int = 220,
) -> str:
    """Square cells on a columns x rows grid, coloured by category (`legend[i]` is category i,
    coloured PALETTE[i]); ticks sit at the centre of the column or row they name; absent
    cells are left blank. Without cells: a one-line "no data" paragraph instead."""
    if not cells:
        return f'<p class="nodata">{escape(title)}: no data</p>'
    for c in cells:
        if not 0 <= c.category < len(legend):
            raise ValueError(f"cell category {c.category} has no legend entry ({len(legend)})")
    columns = max(c.column for c in cells) + 1
    rows = max(c.row for c in cells) + 1
    side = plot_px / max(columns, rows)
    frame = Frame(
        width=80 + plot_px + 20 + legend_px,
        height=20 + plot_px + 50,
        left=80,
        right=20 + legend_px,
        top=20,
        bottom=50,
    )

    def px(column: float, row: float) -> tuple[float, float]:
        """The pixel centre of a (fractional) column and row."""
        return frame.x0 + (column + 0.5) * side, frame.y0 - (row + 0.5) * side

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {frame.width} {frame.height}" '
        f'width="{frame.width}" height="{frame.height}" role="img" aria-label="{escape(title)}" '
        'font-family="sans-serif" font-size="11">',
        f"<title>{escape(title)}</title>",
    ]
    for c in cells:
        cx, cy = px(c.column, c.row)
        color = PALETTE[c.category % len(PALETTE)]
        out.append(
            f'<rect class="cell" x="{cx - side / 2:.1f}" y="{cy - side / 2:.1f}" '
            f'width="{side:.1f}" height="{side:.1f}" fill="{color}" fill-opacity="0.75" '
            f'data-x="{_num(c.x)}" data-y="{_num(c.y)}" '
            f'data-category="{escape(legend[c.category].name)}"><title>{escape(c.label)}</title></rect>'
        )
    parts = ['<g class="axis x">']
    for column, text in x_ticks:
        x, _ = px(column, 0)
        parts.append(
            f'<text x="{x:.1f}" y="{frame.y0 + 14:.1f}" text-anchor="middle">{escape(text)}</text>'
        )
    parts.append(
        f'<text class="label" x="{frame.x0 + plot_px / 2:.1f}" y="{frame.y0 + 34:.1f}" '
        f'text-anchor="middle">{escape(x_label)}</text></g>'
    )
    parts.append('<g class="axis y">')
    for row, text in y_ticks:
        _, y = px(0, row)
        parts.append(
            f'<text x="{frame.x0 - 6:.1f}" y="{y + 4:.1f}" text-anchor="end">{escape(text)}</text>'
        )
    parts.append(
        f'<text class="label" transform="translate(16 {frame.y1 + plot_px / 2:.1f}) '
        f'rotate(-90)" text-anchor="middle">{escape(y_label)}</text></g>'
    )
    out.append("".join(parts))
    if marker is not None:
        mx, my = px(marker.column, marker.row)
        out.append(
            f'<circle class="marker" cx="{mx:.1f}" cy="{my:.1f}" r="6" fill="none" '
            f'stroke="#000" stroke-width="2"><title>{escape(marker.label)}</title></circle>'
        )
    lx = frame.x1 + 20
    for k, entry in enumerate(legend):
        ly = frame.y1 + 10 + k * 18
        text = entry.name if entry.caption is None else entry.caption
        out.append(
            f'<g class="legend" data-category="{escape(entry.name)}">'
            f'<rect x="{lx:.1f}" y="{ly - 9:.1f}" width="12" height="12" '
            f'fill="{PALETTE[k % len(PALETTE)]}" fill-opacity="0.75"/>'
            f'<text x="{lx + 18:.1f}" y="{ly + 1:.1f}">{escape(text)}</text></g>'
        )
    out.append("</svg>")
    return "\n".join(out)
