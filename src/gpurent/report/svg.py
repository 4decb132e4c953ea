"""A small hand-written SVG scatter plot (no plotting library: keeps the base install light).

Axes switch to log scale when the data span more than 20x, which is common for cost and time
across GPU classes. Every point carries a <title> tooltip.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

WIDTH, HEIGHT = 720, 420
LEFT, RIGHT, TOP, BOTTOM = 80, 20, 20, 50


@dataclass(frozen=True, slots=True, kw_only=True)
class Point:
    x: float
    y: float
    label: str
    highlight: bool = False  # e.g. on the Pareto front
    best: bool = False


def _ticks(lo: float, hi: float, log: bool) -> list[float]:
    if log:
        start, stop = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        ticks = [10.0**e * m for e in range(start, stop + 1) for m in (1, 2, 5)]
        return [t for t in ticks if lo <= t <= hi] or [lo, hi]
    span = hi - lo or abs(hi) or 1.0
    step = 10 ** math.floor(math.log10(span / 5))
    for m in (1, 2, 5, 10):
        if span / (step * m) <= 6:
            step *= m
            break
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step) + 1)]


def _fmt(v: float) -> str:
    if v >= 1000 or (v >= 1 and float(v).is_integer()):
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.0f}"
    if v >= 1:
        return f"{v:.1f}"
    return f"{v:.2g}"


class _Axis:
    def __init__(self, values: list[float], lo_px: float, hi_px: float) -> None:
        lo, hi = min(values), max(values)
        self.log = lo > 0 and hi / lo > 20
        if self.log:
            lo, hi = lo / 1.15, hi * 1.15
        else:
            pad = (hi - lo) * 0.08 or max(abs(hi) * 0.1, 1e-9)
            lo, hi = max(0.0, lo - pad), hi + pad
        self.lo, self.hi, self.lo_px, self.hi_px = lo, hi, lo_px, hi_px

    def __call__(self, v: float) -> float:
        if self.log:
            f = (math.log(v) - math.log(self.lo)) / (math.log(self.hi) - math.log(self.lo))
        else:
            f = (v - self.lo) / (self.hi - self.lo)
        return self.lo_px + f * (self.hi_px - self.lo_px)

    def ticks(self) -> list[float]:
        return _ticks(self.lo, self.hi, self.log)


def scatter_svg(points: list[Point], *, x_label: str, y_label: str) -> str:
    """An inline <svg> scatter of `points`; highlighted points are joined by a line (in x order)."""
    if not points:
        return ""
    xa = _Axis([p.x for p in points], LEFT, WIDTH - RIGHT)
    ya = _Axis([p.y for p in points], HEIGHT - BOTTOM, TOP)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{escape(y_label)} vs '
        f'{escape(x_label)}" font-family="sans-serif" font-size="11">',
        f'<rect x="{LEFT}" y="{TOP}" width="{WIDTH - LEFT - RIGHT}" '
        f'height="{HEIGHT - TOP - BOTTOM}" fill="#fafafa" stroke="#ccc"/>',
    ]
    for t in xa.ticks():
        x = xa(t)
        out.append(
            f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{HEIGHT - BOTTOM}" stroke="#eee"/>'
            f'<text x="{x:.1f}" y="{HEIGHT - BOTTOM + 15}" text-anchor="middle">{_fmt(t)}</text>'
        )
    for t in ya.ticks():
        y = ya(t)
        out.append(
            f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" stroke="#eee"/>'
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{_fmt(t)}</text>'
        )
    log_x = " (log)" if xa.log else ""
    log_y = " (log)" if ya.log else ""
    out.append(
        f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 10}" text-anchor="middle">'
        f"{escape(x_label)}{log_x}</text>"
        f'<text transform="translate(16 {(TOP + HEIGHT - BOTTOM) / 2}) rotate(-90)" '
        f'text-anchor="middle">{escape(y_label)}{log_y}</text>'
    )
    front = sorted((p for p in points if p.highlight), key=lambda p: p.x)
    if len(front) > 1:
        path = " ".join(f"{xa(p.x):.1f},{ya(p.y):.1f}" for p in front)
        out.append(f'<polyline points="{path}" fill="none" stroke="#1f77b4" stroke-width="1.5"/>')
    for p in sorted(points, key=lambda p: (p.highlight, p.best)):
        x, y = xa(p.x), ya(p.y)
        color = "#d62728" if p.best else ("#1f77b4" if p.highlight else "#999")
        radius = 7 if p.best else 5
        out.append(
            f'<circle class="{"best" if p.best else "pareto" if p.highlight else "point"}" '
            f'cx="{x:.1f}" cy="{y:.1f}" r="{radius}" fill="{color}" fill-opacity="0.8">'
            f"<title>{escape(p.label)}</title></circle>"
        )
        if p.best:
            out.append(f'<text x="{x + 10:.1f}" y="{y - 8:.1f}" fill="{color}">best</text>')
    out.append("</svg>")
    return "\n".join(out)
