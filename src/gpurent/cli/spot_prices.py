"""Where the spot commands take dollars from: `--offer PROVIDER/INSTANCE/REGION` (the catalog),
`--prices spot=..,ondemand=..`, or the trace's own prices. Shared by simulate, zones, interval;
the choice itself is `gpurent.plan.spot_prices` (the server's too)."""

from __future__ import annotations

from gpurent.plan.spot_prices import choose_prices, is_price_pair, offer_prices

OFFER_HELP = "Take spot and on-demand $/h from this catalog offer (provider/instance/region)."
PRICES_HELP = "Prices as spot=USD_PER_HOUR,ondemand=USD_PER_HOUR (per instance)."


__all__ = ["OFFER_HELP", "PRICES_HELP", "choose_prices", "is_price_pair", "offer_prices", "usd"]


def usd(x: float) -> str:
    """The amount in USD with cents, e.g. "$1,234.50"."""
    return f"${x:,.2f}"
