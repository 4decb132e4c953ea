"""Dollars for spot results: what the job costs and what it saves against on-demand.

The simulator reports costs normalised by the all-on-demand cost of the job (k x C, per node).
Given an on-demand price in $/h per instance, the job's cost in dollars is

    cost $ = normalised cost x on-demand $/h x job hours x nodes,

and the saving is the all-on-demand cost (on-demand $/h x job hours x nodes) minus that. This
module computes from the simulator's result objects only (means over runs), so it does not
depend on the simulator's internals. Pure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpurent.errors import InputError


@dataclass(frozen=True, slots=True, kw_only=True)
class Prices:
    """$/h per instance, spot and on-demand, and where they come from."""

    spot_usd_per_hour: float
    on_demand_usd_per_hour: float
    source: str

    def __post_init__(self) -> None:
        for name in ("spot_usd_per_hour", "on_demand_usd_per_hour"):
            x = getattr(self, name)
            if not (math.isfinite(x) and x > 0):
                raise InputError(f"{self.source}: {name.split('_')[0]} price must be > 0 $/h")

    @property
    def ratio(self) -> float:
        """On-demand / spot, the simulator's k."""
        return self.on_demand_usd_per_hour / self.spot_usd_per_hour


def parse_price_pair(text: str, where: str = "--prices") -> Prices:
    """'spot=1.2,ondemand=3.9' ($/h per instance, either order)."""
    got: dict[str, float] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        key = key.strip().lower().replace("-", "").replace("_", "")
        if not sep or key not in ("spot", "ondemand", "od"):
            raise InputError(
                f"{where} {text!r}: expected spot=USD_PER_HOUR,ondemand=USD_PER_HOUR (or a price "
                "JSON file)"
            )
        try:
            x = float(value)
        except ValueError:
            x = math.nan
        if not (math.isfinite(x) and x > 0):
            raise InputError(f"{where}: {key} price {value.strip()!r} must be a number > 0 $/h")
        got["ondemand" if key == "od" else key] = x
    if set(got) != {"spot", "ondemand"}:
        raise InputError(f"{where} {text!r}: give both spot= and ondemand=")
    return Prices(
        spot_usd_per_hour=got["spot"], on_demand_usd_per_hour=got["ondemand"], source=where
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class JobDollars:
    """A job's mean cost in $ against running it all on on-demand."""

    cost_usd: float
    on_demand_cost_usd: float
    saving_usd: float
    saving_fraction: float
    on_demand_usd_per_hour: float
    price_source: str

    def as_json(self) -> dict[str, object]:
        """The job's costs as a JSON-ready dict."""
        return {
            "cost_usd": self.cost_usd,
            "on_demand_cost_usd": self.on_demand_cost_usd,
            "saving_usd": self.saving_usd,
            "saving_fraction": self.saving_fraction,
            "on_demand_usd_per_hour": self.on_demand_usd_per_hour,
            "price_source": self.price_source,
        }


def job_dollars(
    cost_normalized: float,
    *,
    on_demand_usd_per_hour: float,
    job_hours: float,
    nodes: int,
    price_source: str,
) -> JobDollars:
    """Dollars of a normalised cost (module docstring)."""
    od_cost = on_demand_usd_per_hour * job_hours * nodes
    cost = cost_normalized * od_cost
    return JobDollars(
        cost_usd=cost,
        on_demand_cost_usd=od_cost,
        saving_usd=od_cost - cost,
        saving_fraction=1.0 - cost_normalized,
        on_demand_usd_per_hour=on_demand_usd_per_hour,
        price_source=price_source,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class HourlyDollars:
    """$/h of running on spot with on-demand fallback (or with spot overhead), vs on-demand."""

    usd_per_hour: float
    on_demand_usd_per_hour: float
    saving_fraction: float
    price_source: str
    rule: str

    def as_json(self) -> dict[str, object]:
        """The hourly costs as a JSON-ready dict."""
        return {
            "usd_per_hour": self.usd_per_hour,
            "on_demand_usd_per_hour": self.on_demand_usd_per_hour,
            "saving_fraction": self.saving_fraction,
            "price_source": self.price_source,
            "rule": self.rule,
        }


def fallback_dollars(p_all_unavailable: float, prices: Prices, nodes: int = 1) -> HourlyDollars:
    """$/h of a zone set: spot while any zone has capacity, on-demand while none has
    (changeovers not counted; `spot simulate` counts them)."""
    per_node = (
        1 - p_all_unavailable
    ) * prices.spot_usd_per_hour + p_all_unavailable * prices.on_demand_usd_per_hour
    return HourlyDollars(
        usd_per_hour=per_node * nodes,
        on_demand_usd_per_hour=prices.on_demand_usd_per_hour * nodes,
        saving_fraction=1 - per_node / prices.on_demand_usd_per_hour,
        price_source=prices.source,
        rule="spot while a zone of the set has capacity, on-demand while none has; "
        "changeovers not counted (spot simulate counts them)",
    )


def overhead_dollars(overhead: float, prices: Prices, nodes: int = 1) -> HourlyDollars:
    """$ per hour of useful work on spot that spends `overhead` (fraction) on checkpoints,
    lost work and restarts, all billed at the spot price."""
    per_node = prices.spot_usd_per_hour * (1 + overhead)
    return HourlyDollars(
        usd_per_hour=per_node * nodes,
        on_demand_usd_per_hour=prices.on_demand_usd_per_hour * nodes,
        saving_fraction=1 - per_node / prices.on_demand_usd_per_hour,
        price_source=prices.source,
        rule="spot price x (1 + overhead) per hour of useful work",
    )
