"""`gpurent spot zones` helpers: zones ranked by stored signals (no traces), the order to try
a recommended set's zones in, and its dollars."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from gpurent.cli.common import console, print_json, split_list
from gpurent.errors import InputError
from gpurent.textsafe import cells, clean

if TYPE_CHECKING:
    from gpurent.spot.analytics.zones import ZoneReport
    from gpurent.spot.signals.base import SpotSignal
    from gpurent.spot.sim.dollars import HourlyDollars, Prices


def zone_money(report: ZoneReport, prices: Prices | None) -> tuple[list[str], HourlyDollars | None]:
    """The recommended zones in the order to try them (most available first, then longer
    median lifetime), and the set's $/h when prices are known."""
    from gpurent.spot.sim.dollars import fallback_dollars

    stats = {z.name: z for z in report.zones}

    def key(name: str) -> tuple[float, float, str]:
        z = stats[name]
        median = z.lifetimes.median_h if z.lifetimes and z.lifetimes.median_h else 0.0
        return (-z.availability, -median, name)

    order = sorted(report.recommended.zones, key=key)
    money = (
        None
        if prices is None
        else fallback_dollars(report.recommended.p_all_unavailable, prices, report.nodes)
    )
    return order, money


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
    from gpurent.cli.spot_signal_cmds import now_utc
    from gpurent.plan.signal_store import load_signals
    from gpurent.spot.signals.select import age_text, rank_zones

    if instance is None and offer is not None:
        parts = offer.split("/")
        if len(parts) == 3:
            provider = provider or parts[0]
            instance = parts[1]
    if instance is None:
        raise InputError(
            "give trace files, or --instance NAME (or --offer) to rank zones by stored signals"
        )
    ranking = rank_zones(load_signals(), instance, provider=provider, regions=split_list(regions))
    now = now_utc()
    od = prices.on_demand_usd_per_hour if prices is not None else None
    if as_json:
        print_json(
            {
                "instance": ranking.instance,
                "source": "stored spot signals",
                "rule": ranking.rule,
                "try_order": list(ranking.order),
                "zones": [
                    {
                        "provider": z.provider,
                        "region": z.region,
                        "zone": z.zone,
                        "placement_score": z.placement_score and z.placement_score.value,
                        "interruption": z.interruption and z.interruption.label,
                        "interruptions_per_hour": z.interruption
                        and z.interruption.interruptions_per_hour,
                        "spot_usd_per_hour": z.spot_price and z.spot_price.value,
                        "saving_vs_on_demand": (
                            1 - z.spot_price.value / od if z.spot_price and od else None
                        ),
                        "as_of": z.oldest.isoformat(),
                        "age_s": (now - z.oldest).total_seconds(),
                    }
                    for z in ranking.zones
                ],
                "price_source": prices.source if prices is not None else None,
            }
        )
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
