"""`gpurent spot zones` helpers: zones ranked by stored signals (no traces), printed; the
documents and the try order are `gpurent.report.spot_zones` (the server's too)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from gpurent.cli.common import console, print_json, split_list
from gpurent.report.spot_zones import zone_money
from gpurent.textsafe import cells, clean

if TYPE_CHECKING:
    from gpurent.spot.signals.base import SpotSignal
    from gpurent.spot.sim.dollars import Prices

__all__ = ["render_signal_zones", "zone_money"]


def _cell(s: SpotSignal | None) -> str:
    return s.label if s is not None else "-"


def render_signal_zones(
    instance: str | None,
    offer: str | None,
    provider: str | None,
    regions: list[str] | None,
    prices: Prices | None,
    *,
    as_json: bool,
) -> None:
    """Rank the zones of one instance type by the stored signals and print the order."""
    from gpurent.plan.signal_store import rank_stored_zones
    from gpurent.report.spot_zones import signal_zones_document
    from gpurent.spot.signals.select import age_text
    from gpurent.userdata import now_utc

    ranking = rank_stored_zones(instance, offer, provider, split_list(regions))
    now = now_utc()
    od = prices.on_demand_usd_per_hour if prices is not None else None
    if as_json:
        print_json(signal_zones_document(ranking, prices, now))
        return
    table = Table(
        title=f"zones for {ranking.instance} by stored spot signals, best first "
        "(score: placement 1-10; interrupted: share per month)"
    )
    for col in ("#", "zone", "region", "score", "interrupted", "spot $/h", "age"):
        table.add_column(
            col, justify="left" if col in ("zone", "region") else "right", no_wrap=True
        )
    for i, z in enumerate(ranking.zones, start=1):
        spot = z.spot_price.value if z.spot_price else None
        spot_cell = "-" if spot is None else f"${spot:g}"
        if spot is not None and od:
            spot_cell += f", {1 - spot / od:.0%} off"
        table.add_row(
            *cells(
                str(i),
                z.zone or "(region)",
                z.region,
                f"{z.placement_score.value:g}/10" if z.placement_score else "-",
                _cell(z.interruption),
                spot_cell,
                age_text(z.oldest, now),
            )
        )
    console.print(table)
    console.print(
        f"try in this order: {clean(', '.join(ranking.order))}", highlight=False, markup=False
    )
    console.print(f"rule: {ranking.rule}", highlight=False, soft_wrap=True)
    if prices is not None:
        console.print(f"on-demand ${prices.on_demand_usd_per_hour:g}/h from {prices.source}")
