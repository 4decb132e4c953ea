"""`gpurent pricing`: how to pay for a usage pattern (on-demand, spot, committed, hybrid)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import typer
from rich.table import Table

from gpurent.catalog import Offer
from gpurent.catalog.query import find_offer
from gpurent.cli.common import checked, cli_errors, console, print_json
from gpurent.cloud.billing import OTHERS as BILLING_OTHERS
from gpurent.cloud.billing import BillingRule, billing_rule
from gpurent.cloud.commitments import term_for_hours, terms_for
from gpurent.cloud.spot_defaults import spot_default
from gpurent.errors import InputError
from gpurent.inputs import values as v
from gpurent.pricing import (
    ADVISOR_BANDS,
    Comparison,
    HybridPart,
    Prices,
    SpotRisk,
    UsagePattern,
    advisor_band_mtti_h,
    compare,
    cost_hybrid,
    parse_hybrid,
)
from gpurent.pricing.commit import committed_price
from gpurent.pricing.hybrid import HybridResult, parse_price_ref
from gpurent.pricing.payment_options import parse_term_hours
from gpurent.units import HOURS_PER_MONTH, format_usd

pricing_app = typer.Typer(
    help="How to pay: on-demand vs spot (with its overhead) vs committed terms; break-even; "
    "hybrid day/night schedules.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    """Attach the `pricing` group to the root app."""
    app.add_typer(pricing_app, name="pricing")


def _term(provider: str | None, commit_months: int, commit_term: str | None) -> tuple[float, str]:
    """(term hours, the provider's name for it or "") from --commit-term or --commit-months."""
    hours = parse_term_hours(commit_term) if commit_term else commit_months * HOURS_PER_MONTH
    published = term_for_hours(provider, hours)
    return hours, published.name if published else ""


def _terms_line(provider: str) -> str | None:
    terms = terms_for(provider)
    if not terms:
        return None
    sold = "; ".join(f"{t.name}, at least {_hours(t.hours)} ({t.source})" for t in terms)
    return f"terms {provider} sells (--commit-term): {sold}"


def _hours(h: float) -> str:
    if h < HOURS_PER_MONTH and h % 24 == 0:
        return f"{h / 24:g} day(s)"
    if h % HOURS_PER_MONTH == 0:
        return f"{h / HOURS_PER_MONTH:g} month(s)"
    return f"{h:,.0f} h"


def _prices_for(
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
    return _offer_prices(offer, None, discount, months, term_hours), offer.key


def _offer_prices(
    offer: Offer, committed: float | None, discount: float | None, months: int, term_hours: float
) -> Prices:
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


@pricing_app.command("compare")
@cli_errors
@checked(
    on_demand=v.positive,
    spot=v.positive,
    committed=v.positive,
    commit_discount=v.fraction,
    commit_months=v.bounded(v.positive_int, most=1200),
    hours_per_day=v.bounded(v.positive, most=24),
    days_per_month=v.bounded(v.positive, most=31),
    months=v.bounded(v.positive, most=1200),
    mtti_hours=v.bounded(v.positive, most=v.MAX_HOURS),
    checkpoint_cost_s=v.bounded(v.non_negative, most=v.MAX_SECONDS),
    restart_s=v.bounded(v.non_negative, most=v.MAX_SECONDS),
    storage_gb=v.non_negative,
)
def compare_cmd(
    *,
    offer_key: Annotated[
        str | None,
        typer.Option(
            "--offer",
            help="provider/instance/region from the catalog, e.g. aws/p3.2xlarge/us-east-1.",
        ),
    ] = None,
    on_demand: Annotated[
        float | None, typer.Option("--on-demand", help="On-demand $/h (overrides the offer).")
    ] = None,
    spot: Annotated[
        float | None, typer.Option("--spot", help="Spot $/h (overrides the offer).")
    ] = None,
    committed: Annotated[
        float | None, typer.Option("--committed", "--reserved", help="Committed (reserved) $/h.")
    ] = None,
    commit_discount: Annotated[
        float | None, typer.Option(help="Committed discount off on-demand, e.g. 0.35.")
    ] = None,
    commit_months: Annotated[int, typer.Option(help="Length of one commitment term, months.")] = 12,
    commit_term: Annotated[
        str | None,
        typer.Option(
            help="Length of one commitment term, overriding --commit-months: 1d, 1w, 1mo, 1y, "
            "3y (e.g. 1d for an AWS Capacity Block); billed in whole terms, as `plan`.",
            show_default=False,
        ),
    ] = None,
    hours_per_day: Annotated[float, typer.Option(help="Hours of use per day.")] = 24.0,
    days_per_month: Annotated[float, typer.Option(help="Days of use per month.")] = 30.0,
    months: Annotated[float, typer.Option(help="Months of use.")] = 12.0,
    mtti_hours: Annotated[
        float | None,
        typer.Option(
            help="Spot mean time to interruption, hours (e.g. from `gpurent spot interval`)."
        ),
    ] = None,
    advisor_band: Annotated[
        str | None,
        typer.Option(
            help="AWS Spot Advisor interruption band, used when --mtti-hours is not given: "
            f"{', '.join(ADVISOR_BANDS)} (default: the offer's provider's spot default, "
            "as `plan` uses).",
            show_default=False,
        ),
    ] = None,
    checkpoint_cost_s: Annotated[float, typer.Option(help="Seconds lost per checkpoint.")] = 60.0,
    restart_s: Annotated[
        float | None,
        typer.Option(
            help="Seconds from interruption to resumed training on a new instance "
            "(default: the provider's, as `plan` uses).",
            show_default=False,
        ),
    ] = None,
    hybrid: Annotated[
        str | None,
        typer.Option(
            help="Day/night schedule NAME:HOURS:INSTANCE,..., "
            "e.g. day:8:p4d.24xlarge,night:16:g5.xlarge."
        ),
    ] = None,
    storage_gb: Annotated[
        float,
        typer.Option(
            help="Disk kept for the whole period, GB: charged while the instance runs and, "
            "where the provider says so, while it is stopped (the same for every option)."
        ),
    ] = 0.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Compare on-demand, spot (effective price with its overhead) and committed terms.

    Example: gpurent pricing compare --offer aws/p3.2xlarge/us-east-1 --hours-per-day 8
    --days-per-month 22 --months 12 --mtti-hours 6

    Example: gpurent pricing compare --on-demand 3.06 --spot 0.92 --commit-discount 0.35
    --hybrid "day:10:$3.06,night:14:$0.53"
    """
    from gpurent.catalog.sources import load_offers

    offers = load_offers().offers  # fetched catalogs + the bundled snapshot, as `plan`
    offer = find_offer(offer_key, offers) if offer_key else None
    od = on_demand if on_demand is not None else (offer.price_usd_per_hour if offer else None)
    if od is None:
        raise InputError("give --offer provider/instance/region or --on-demand PRICE")
    spot_price = spot if spot is not None else (offer.spot_price_usd_per_hour if offer else None)
    term_hours, term_name = _term(offer.provider if offer else None, commit_months, commit_term)
    c, source = committed_price(od, offer, committed, commit_discount, term_hours)
    prices = Prices(
        on_demand_usd_per_hour=od,
        spot_usd_per_hour=spot_price,
        committed_usd_per_hour=c,
        commit_months=commit_months,
        committed_source=source,
        commit_term_hours=term_hours,
        term_name=term_name,
    )
    risk = _spot_risk(
        offer, mtti_hours, advisor_band, checkpoint_cost_s=checkpoint_cost_s, restart_s=restart_s
    )
    usage = UsagePattern(hours_per_day=hours_per_day, days_per_month=days_per_month, months=months)
    rule = billing_rule(offer.provider) if offer else None
    result = compare(usage, prices, risk, rule)
    storage = _storage(rule, storage_gb, months)
    hybrid_result = None
    if hybrid:
        parts = parse_hybrid(hybrid)
        priced: list[tuple[HybridPart, Prices]] = []
        for part in parts:
            p, label = _prices_for(
                part.instance,
                offer,
                offers,
                discount=commit_discount,
                months=commit_months,
                term_hours=term_hours,
            )
            priced.append(
                (HybridPart(name=part.name, hours_per_day=part.hours_per_day, instance=label), p)
            )
        hybrid_result = cost_hybrid(
            priced,
            days_per_month=days_per_month,
            months=months,
            risk=risk,
            baseline_usd_per_hour=od,
            rule=rule,
        )
    if as_json:
        print_json(
            {
                "comparison": result,
                "spot_risk": risk,
                "hybrid": hybrid_result,
                "billing": rule,
                "storage": storage,
            }
        )
        return
    _render(result, risk, offer)
    if storage is not None:
        console.print(storage.line, highlight=False)
    if hybrid_result is not None:
        _render_hybrid(hybrid_result)


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


def _storage(rule: BillingRule | None, gb: float, months: float) -> StorageCost | None:
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


def _spot_risk(
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


def _render(result: Comparison, risk: SpotRisk, offer: Offer | None) -> None:
    u = result.usage
    title = (offer.key if offer else "explicit prices") + (
        f": {u.hours_per_day:g} h/day x {u.days_per_month:g} days x {u.months:g} months "
        f"= {u.total_hours:,.0f} h"
    )
    table = Table(title=title)
    for col in ("option", "$/h", "$/useful h", "billed h", "total", "note"):
        table.add_column(col, justify="left" if col in ("option", "note") else "right")
    for o in result.options:
        table.add_row(
            o.option,
            f"{o.price_usd_per_hour:.3f}",
            f"{o.effective_usd_per_useful_hour:.3f}",
            f"{o.billed_hours:,.0f}",
            format_usd(o.cost_usd),
            o.note,
        )
    console.print(table)
    console.print(result.explanation)
    if result.spot_overhead is not None:
        console.print(
            f"spot risk: MTTI {risk.mtti_h:,.1f} h, {risk.restart_s:g} s restart; from "
            f"{risk.source}. Measured traces beat defaults: pass --mtti-hours from "
            "`gpurent spot interval`."
        )
    if result.committed_source:
        console.print(f"committed price: {result.committed_source}")
    if offer is not None:
        terms = _terms_line(offer.provider)
        if terms:
            console.print(terms, highlight=False)
        console.print(
            f"prices: {offer.source or 'bundled catalog'}, as of {offer.as_of or 'see catalog'}"
        )


def _render_hybrid(result: HybridResult) -> None:
    table = Table(title="hybrid schedule (each part at its cheapest option)")
    for col in ("part", "instance", "h/day", "on-demand", "spot", "committed", "best"):
        table.add_column(col, justify="left" if col in ("part", "instance", "best") else "right")
    for pc in result.parts:
        costs = {o.option: format_usd(o.cost_usd) for o in pc.comparison.options}
        table.add_row(
            pc.part.name,
            pc.part.instance,
            f"{pc.part.hours_per_day:g}",
            costs.get("on-demand", "-"),
            costs.get("spot", "-"),
            costs.get("committed", "-"),
            pc.comparison.cheapest,
        )
    console.print(table)
    if result.baseline_usd is not None and result.baseline_usd_per_hour is not None:
        base, what = (
            result.baseline_usd,
            f"on-demand at the table's ${result.baseline_usd_per_hour:g}/h for the same "
            f"{result.hours:,.0f} h",
        )
    else:
        base, what = result.total_on_demand_usd, "each part on demand"
    saving = 1 - result.total_cost_usd / base
    more_or_less = f"{abs(saving) * 100:.0f}% {'less' if saving >= 0 else 'more'}"
    console.print(
        f"hybrid total {format_usd(result.total_cost_usd)} vs {what} {format_usd(base)} "
        f"({more_or_less})",
        highlight=False,
    )
