"""The `vendors score` report as one self-contained HTML page from the shared templates
(`vendors.html.j2`), with the chart helper's categorical grid as the map of the weight regions
where each vendor wins."""

from __future__ import annotations

from markupsafe import Markup

from gpurent.report import charts
from gpurent.report.html import render_page
from gpurent.report.vendors_format import header_lines, sections, title
from gpurent.vendors.evaluation import Evaluation
from gpurent.vendors.sensitivity import RegionGrid


def region_chart(grid: RegionGrid) -> str:
    """The slice as coloured cells: x = one criterion's weight, y = another's; the base weights
    are the ring. Every cell's tooltip names its weights and winner."""
    x, y = grid.x_criterion, grid.y_criterion
    cells = [
        charts.GridCell(
            column=i,
            row=j,
            category=winner,
            x=i * grid.step,
            y=j * grid.step,
            label=f"{x} {i * grid.step:.0%}, {y} {j * grid.step:.0%}: {grid.vendors[winner]}",
        )
        for j, row in enumerate(grid.cells)
        for i, winner in enumerate(row)
        if winner is not None
    ]
    n = len(grid.cells) - 1
    ticks = [(k / 10 * n, f"{k / 10:.0%}") for k in range(0, 11, 2)]
    return charts.category_grid(
        cells,
        title=f"winner by {x} and {y} weight",
        x_label=f"weight of {x}",
        y_label=f"weight of {y}",
        legend=[
            charts.Category(name=name, caption=f"{name} ({share:.0%})")
            for name, share in grid.share()
        ],
        x_ticks=ticks,
        y_ticks=ticks,
        marker=charts.GridMarker(
            column=grid.base_x * n, row=grid.base_y * n, label="the weights used"
        ),
    )


def vendors_page(ev: Evaluation) -> str:
    """The scorecard's sections as tables and lists; the region map after the sensitivity."""
    region = Markup(region_chart(ev.region)) if ev.region is not None else None
    return render_page(
        "vendors.html.j2",
        title=title(ev),
        kind="vendor scorecard",
        provenance=f"evidence from {ev.source}",
        header_lines=header_lines(ev),
        sections=[(s, region if s.title.startswith("Sensitivity") else None) for s in sections(ev)],
    )
