"""`gpurent pricing compare`'s document, built from its inputs and the offers: shared by the CLI
(`--json` prints it, the table renders it) and the server (`POST /api/pricing/compare`).

Messages name the CLI's flags (--offer, --on-demand, --hybrid); the API's fields have the
same names with underscores (docs/serve.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpurent.catalog.offer import Offer
from gpurent.catalog.query import find_offer
from gpurent.cloud.billing import OTHERS as BILLING_OTHERS
from gpurent.cloud.billing import BillingRule, billing_rule
from gpurent.cloud.commitments import term_for_hours
from gpurent.cloud.spot_defaults import spot_default
from gpurent.errors import InputError
from gpurent.pricing.commit import committed_price
from gpurent.pricing.hybrid import (
    HybridPart,
    HybridResult,
    cost_hybrid,
    parse_hybrid,
    parse_price_ref,
)
from gpurent.pricing.payment_options import (
    Comparison,
    Prices,
    SpotRisk,
    UsagePattern,
    advisor_band_mtti_h,
    compare,
    parse_term_hours,
)
from gpurent.units import HOURS_PER_MONTH, format_usd


@dataclass(frozen=True, slots=True, kw_only=True)
class CompareInputs:
    """The flags of `gpurent pricing compare`, by the same names (prices in USD per hour)."""

    offer_key: str | None = None
    on_demand_usd_per_hour: float | None = None
    spot_usd_per_hour: float | None = None
    committed_usd_per_hour: float | None = None
    commit_discount: float | None = None
    commit_months: int = 12
    commit_term: str | None = None
    hours_per_day: float = 24.0
    days_per_month: float = 30.0
    months: float = 12.0
    mtti_hours: float | None = None
    advisor_band: str | None = None
    checkpoint_cost_s: float = 60.0
    restart_s: float | None = None
    hybrid: str | None = None
    storage_gb: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class CompareDocument:
    """What the comparison found, and the offer it was for (None for explicit prices)."""

    comparison: Comparison
    spot_risk: SpotRisk
    hybrid: HybridResult | None
    billing: BillingRule | None
    storage: StorageCost | None
    offer: Offer | None

    def as_json(self) -> dict[str, Any]:
        """The objects of `--json` (to_jsonable makes them JSON)."""
        return {
            "comparison": self.comparison,
            "spot_risk": self.spot_risk,
            "hybrid": self.hybrid,
            "billing": self.billing,
            "storage": self.storage,
        }


def compare_document(i: CompareInputs, offers: tuple[Offer, ...]) -> CompareDocument:
    """On-demand, spot (with its overhead), committed and the hybrid schedule for `i`."""
    offer = find_offer(i.offer_key, offers) if i.offer_key else None
    od = (
        i.on_demand_usd_per_hour
        if i.on_demand_usd_per_hour is not None
        else (offer.price_usd_per_hour if offer else None)
    )
    if od is None:
        raise InputError("give --offer provider/instance/region or --on-demand PRICE")
    spot_price = (
        i.spot_usd_per_hour
        if i.spot_usd_per_hour is not None
        else (offer.spot_price_usd_per_hour if offer else None)
    )
    term_hours, term_name = commit_term_hours(
        offer.provider if offer else None, i.commit_months, i.commit_term
    )
    c, source = committed_price(od, offer, i.committed_usd_per_hour, i.commit_discount, term_hours)
    prices = Prices(
        on_demand_usd_per_hour=od,
        spot_usd_per_hour=spot_price,
        committed_usd_per_hour=c,
        commit_months=i.commit_months,
        committed_source=source,
        commit_term_hours=term_hours,
        term_name=term_name,
    )
    risk = spot_risk(
        offer,
        i.mtti_hours,
        i.advisor_band,
        checkpoint_cost_s=i.checkpoint_cost_s,
        restart_s=i.restart_s,
    )
    usage = UsagePattern(
        hours_per_day=i.hours_per_day, days_per_month=i.days_per_month, months=i.months
    )
    rule = billing_rule(offer.provider) if offer else None
    result = compare(usage, prices, risk, rule)
    storage = storage_cost(rule, i.storage_gb, i.months)
    hybrid_result = None
    if i.hybrid:
        parts = parse_hybrid(i.hybrid)
        priced: list[tuple[HybridPart, Prices]] = []
        for part in parts:
            p, label = part_prices(
                part.instance,
                offer,
                offers,
                discount=i.commit_discount,
                months=i.commit_months,
                term_hours=term_hours,
            )
            priced.append(
                (HybridPart(name=part.name, hours_per_day=part.hours_per_day, instance=label), p)
            )
        hybrid_result = cost_hybrid(
            priced,
            days_per_month=i.days_per_month,
            months=i.months,
            risk=risk,
            baseline_usd_per_hour=od,
            rule=rule,
        )
    return CompareDocument(
        comparison=result,
        spot_risk=risk,
        hybrid=hybrid_result,
        billing=rule,
        storage=storage,
        offer=offer,
    )


def commit_term_hours(
    provider: str | None, commit_months: int, commit_term: str | None
) -> tuple[float, str]:
    """(term hours, the provider's name for it or "") from --commit-term or --commit-months."""
    hours = parse_term_hours(commit_term) if commit_term else commit_months * HOURS_PER_MONTH
    published = term_for_hours(provider, hours)
    return hours, published.name if published else ""


def part_prices(
    ref: str,
    base: Offer | None,
    offers: tuple[Offer, ...],
    *,
    discount: float | None,
    months: int,
    term_hours: float,
) -> tuple[Prices, str]:
    """Prices of a hybrid part's instance reference."""
    price = parse_price_ref(ref)
    if price is not None:
        return Prices(
            on_demand_usd_per_hour=price, commit_months=months, commit_term_hours=term_hours
        ), f"${price:g}/h"
    if "/" in ref:
        offer = find_offer(ref, offers)
    else:
        if base is None:
            raise InputError(
                f"--hybrid instance {ref!r}: give --offer (for its provider and region) "
                "or a full provider/instance/region key"
            )
        offer = find_offer(f"{base.provider}/{ref}/{base.region}", offers)
    return offer_prices(offer, None, discount, months, term_hours), offer.key


def offer_prices(
    offer: Offer, committed: float | None, discount: float | None, months: int, term_hours: float
) -> Prices:
    """An offer's on-demand, spot and committed prices (the committed one from the flags, else
    the published term, else the guide's discount)."""
    if offer.price_usd_per_hour is None:
        raise InputError(f"offer {offer.key} has no on-demand price; pass --on-demand")
    c, source = committed_price(offer.price_usd_per_hour, offer, committed, discount, term_hours)
    published = term_for_hours(offer.provider, term_hours)
    return Prices(
        on_demand_usd_per_hour=offer.price_usd_per_hour,
        spot_usd_per_hour=offer.spot_price_usd_per_hour,
        committed_usd_per_hour=c,
        commit_months=months,
        committed_source=source,
        commit_term_hours=term_hours,
        term_name=published.name if published else "",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class StorageCost:
    """A disk kept through the whole period, stopped hours included where the provider bills
    them; the same for every option, so it is shown apart from the table."""

    gb: float
    usd_per_gb_month: float
    months: float
    while_stopped: bool
    cost_usd: float
    source: str

    @property
    def line(self) -> str:
        """The storage cost as the one line printed under the table."""
        when = "running and stopped" if self.while_stopped else "while running"
        return (
            f"storage: {self.gb:g} GB for {self.months:g} months ({when}) at "
            f"${self.usd_per_gb_month:g}/GB-month = {format_usd(self.cost_usd)} on top of "
            f"every option; from {self.source}"
        )


def storage_cost(rule: BillingRule | None, gb: float, months: float) -> StorageCost | None:
    """The disk's cost over the period under the provider's billing rule; None for no disk."""
    if gb <= 0:
        return None
    r = rule or BILLING_OTHERS
    return StorageCost(
        gb=gb,
        usd_per_gb_month=r.storage_usd_per_gb_month,
        months=months,
        while_stopped=r.storage_while_stopped,
        cost_usd=gb * r.storage_usd_per_gb_month * months,
        source=f"{r.provider}: {r.storage_source}",
    )


def spot_risk(
    offer: Offer | None,
    mtti_hours: float | None,
    advisor_band: str | None,
    *,
    checkpoint_cost_s: float,
    restart_s: float | None,
) -> SpotRisk:
    """The spot risk from the flags, else the offer's provider's row of the shared defaults."""
    d = spot_default(offer.provider if offer else None)
    sources = []
    if mtti_hours is not None:
        mtti_h, sources = mtti_hours, ["--mtti-hours"]
    elif advisor_band is not None:
        mtti_h = advisor_band_mtti_h(advisor_band)
        sources = [f"AWS Spot Advisor band {advisor_band} (Poisson)"]
    else:
        mtti_h = d.mtti_hours
    why = [d.rate_source] if mtti_hours is None and advisor_band is None else []
    if restart_s is None:
        why.append(d.restart_source)
    if why:
        who = offer.provider if offer else f"{d.provider} (no --offer)"
        sources.append(f"gpurent's spot defaults for {who}: {'; '.join(why)}")
    return SpotRisk(
        mtti_h=mtti_h,
        checkpoint_cost_s=checkpoint_cost_s,
        restart_s=d.restart_s if restart_s is None else restart_s,
        source="; ".join(sources),
    )
