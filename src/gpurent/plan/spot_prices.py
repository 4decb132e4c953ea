"""Where the spot commands (and their API endpoints) take dollars from: a catalog offer
(`--offer PROVIDER/INSTANCE/REGION`), a price pair (`--prices spot=..,ondemand=..`), or none.
An edge module: an offer's prices come from the catalogs on disk."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpurent.errors import InputError

if TYPE_CHECKING:
    from gpurent.spot.sim.dollars import Prices


def is_price_pair(text: str | None) -> bool:
    """Whether text looks like a name=price pair."""
    return text is not None and "=" in text


def offer_prices(key: str) -> Prices:
    """The spot and on-demand prices of a catalog offer (the fetched catalogs, else the
    bundled snapshot)."""
    from gpurent.catalog.query import find_offer
    from gpurent.catalog.sources import load_offers
    from gpurent.spot.sim.dollars import Prices

    offer = find_offer(key, load_offers(None).offers)
    if offer.price_usd_per_hour is None or offer.spot_price_usd_per_hour is None:
        missing = "on-demand" if offer.price_usd_per_hour is None else "spot"
        raise InputError(
            f"offer {offer.key} has no {missing} price in the catalog; "
            "pass --prices spot=..,ondemand=.."
        )
    as_of = f", as of {offer.as_of}" if offer.as_of else ""
    return Prices(
        spot_usd_per_hour=offer.spot_price_usd_per_hour,
        on_demand_usd_per_hour=offer.price_usd_per_hour,
        source=f"catalog offer {offer.key}{as_of}",
    )


def choose_prices(offer: str | None, prices: str | None) -> Prices | None:
    """Prices from --offer or a --prices pair (not both), or None."""
    from gpurent.spot.sim.dollars import parse_price_pair

    if offer is not None and is_price_pair(prices):
        raise InputError("give --offer or --prices spot=..,ondemand=.., not both")
    chosen = None
    if offer is not None:
        chosen = offer_prices(offer)
    elif prices is not None and is_price_pair(prices):
        chosen = parse_price_pair(prices)
    if chosen is not None and chosen.spot_usd_per_hour > chosen.on_demand_usd_per_hour:
        raise InputError(
            f"{chosen.source}: spot ${chosen.spot_usd_per_hour:g}/h is above on-demand "
            f"${chosen.on_demand_usd_per_hour:g}/h; check the prices"
        )
    return chosen
