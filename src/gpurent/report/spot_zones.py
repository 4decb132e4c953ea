"""The zone advice of `gpurent spot zones` (and `POST /api/spot/zones`) as JSON: from traces
(the report, the order to try the recommended set's zones in, its dollars) or from the stored
spot signals (the zones of one instance type ranked)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from gpurent.report.jsonable import to_jsonable

if TYPE_CHECKING:
    from gpurent.spot.analytics.zones import ZoneReport
    from gpurent.spot.signals.select import ZoneRanking
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


def zones_document(report: ZoneReport, prices: Prices | None) -> dict[str, Any]:
    """The traces' zone report with the try order and the recommended set's dollars."""
    order, money = zone_money(report, prices)
    doc: dict[str, Any] = to_jsonable(report)
    return {**doc, "try_order": order, "dollars": money and money.as_json()}


def signal_zones_document(
    ranking: ZoneRanking, prices: Prices | None, now: datetime
) -> dict[str, Any]:
    """The zones of one instance type ranked by the stored signals, their age at `now`."""
    od = prices.on_demand_usd_per_hour if prices is not None else None
    return {
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
                "interruptions_per_hour": z.interruption and z.interruption.interruptions_per_hour,
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
