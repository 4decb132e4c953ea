"""The `vendors score` report as one self-contained HTML file, with an SVG map of the weight
regions where each vendor wins."""

from __future__ import annotations

from html import escape

from gpurent.report.vendors_format import Section, header_lines, sections, title
from gpurent.vendors.evaluation import Evaluation
from gpurent.vendors.sensitivity import RegionGrid

LEFT, TOP, BOTTOM = 80, 20, 50  # the plot's margins in px (the charts' frame)

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
PLOT_PX = 360

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3} tr.best td{background:#eaf7ea;font-weight:600}
.dim{color:#666;font-size:13px}
"""


def _section(s: Section) -> str:
    out = [f"<h2>{escape(s.title)}</h2>"]
    if s.headers:
        head = "".join(f"<th>{escape(h)}</th>" for h in s.headers)
        body = []
        for i, row in enumerate(s.rows):
            cls = ' class="best"' if s.highlight_first and i == 0 else ""
            cells = "".join(f"<td>{escape(c)}</td>" for c in row)
            body.append(f"<tr{cls}>{cells}</tr>")
        out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")
    if s.notes:
        out.append("<ul>" + "".join(f"<li>{escape(n)}</li>" for n in s.notes) + "</ul>")
    return "\n".join(out)


def region_svg(grid: RegionGrid) -> str:
    """The slice as coloured cells: x = one criterion's weight, y = another's; the base weights
    are the black ring. Every cell's <title> names its weights and winner."""
    n = len(grid.cells) - 1
    cell = PLOT_PX / (n + 1)
    legend_w = 220
    width, height = LEFT + PLOT_PX + 20 + legend_w, TOP + PLOT_PX + BOTTOM
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="winner by '
        f'{escape(grid.x_criterion)} and {escape(grid.y_criterion)} weight" '
        'font-family="sans-serif" font-size="11">'
    ]
    for j, row in enumerate(grid.cells):
        for i, winner in enumerate(row):
            if winner is None:
                continue
            x = LEFT + i * cell
            y = TOP + PLOT_PX - (j + 1) * cell
            color = PALETTE[winner % len(PALETTE)]
            tip = (
                f"{grid.x_criterion} {i * grid.step:.0%}, {grid.y_criterion} {j * grid.step:.0%}: "
                f"{grid.vendors[winner]}"
            )
            out.append(
                f'<rect class="cell" x="{x:.1f}" y="{y:.1f}" width="{cell:.1f}" '
                f'height="{cell:.1f}" fill="{color}" fill-opacity="0.75">'
                f"<title>{escape(tip)}</title></rect>"
            )
    for k in range(0, 11, 2):
        f = k / 10
        x = LEFT + f * n * cell + cell / 2
        y = TOP + PLOT_PX - f * n * cell - cell / 2
        out.append(
            f'<text x="{x:.1f}" y="{TOP + PLOT_PX + 14}" text-anchor="middle">{f:.0%}</text>'
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{f:.0%}</text>'
        )
    bx = LEFT + grid.base_x * n * cell + cell / 2
    by = TOP + PLOT_PX - grid.base_y * n * cell - cell / 2
    out.append(
        f'<circle class="base" cx="{bx:.1f}" cy="{by:.1f}" r="6" fill="none" stroke="#000" '
        'stroke-width="2"><title>the weights used</title></circle>'
    )
    out.append(
        f'<text x="{LEFT + PLOT_PX / 2}" y="{TOP + PLOT_PX + 34}" text-anchor="middle">'
        f"weight of {escape(grid.x_criterion)}</text>"
        f'<text transform="translate(16 {TOP + PLOT_PX / 2}) rotate(-90)" text-anchor="middle">'
        f"weight of {escape(grid.y_criterion)}</text>"
    )
    lx = LEFT + PLOT_PX + 20
    for k, (name, share) in enumerate(grid.share()):
        ly = TOP + 10 + k * 18
        out.append(
            f'<rect x="{lx}" y="{ly - 9}" width="12" height="12" '
            f'fill="{PALETTE[k % len(PALETTE)]}" fill-opacity="0.75"/>'
            f'<text x="{lx + 18}" y="{ly + 1}">{escape(name)} ({share:.0%})</text>'
        )
    out.append("</svg>")
    return "\n".join(out)


def render_html(ev: Evaluation) -> str:
    body = [f"<h1>{escape(title(ev))}</h1>"]
    body.append("<p>" + "<br>".join(escape(line) for line in header_lines(ev)) + "</p>")
    for s in sections(ev):
        body.append(_section(s))
        if s.title.startswith("Sensitivity") and ev.region is not None:
            body.append(
                '<p class="dim">Who wins where: the other criteria share the remaining weight '
                "in their base proportion; the ring marks the weights used.</p>"
            )
            body.append(region_svg(ev.region))
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title(ev))}</title><style>{_CSS}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )
