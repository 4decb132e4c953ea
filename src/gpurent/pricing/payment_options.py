"""Pricing models for one usage pattern: on-demand, spot (effective price) and committed terms.

- On-demand: every used hour at the on-demand price.
- Spot: every used hour at the spot price times the slowdown of checkpointing and restarting
  (`gpurent.spot.interval.overhead_exponential` at Daly's interval), so the spot price is compared
  as an *effective* price per hour of useful work. Waiting while spot has no capacity is not
  billed and not modelled here (see `gpurent spot zones` for how often that happens).
- Committed (reserved / savings plan / CUD / capacity block): every hour of the term is billed at
  the committed price whether used or not, in whole terms covering the calendar span of use
  (`gpurent.cloud.commitments.billed_term_hours`, the rule `plan --pricing reserved` uses for
  a job's wall time): a 12-month commitment for 3 months of work is paid for 12 months; a term
  shorter than a month (a 1-day capacity block, a 1-week cluster) covers the days of use.
Break-even (RESEARCH §3): commitment wins over on-demand when the expected utilisation of the
committed hours exceeds committed price / on-demand price; against spot, committed price /
effective spot price. Utilisation = used hours / hours in the term.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpurent.cloud.billing import BillingRule
from gpurent.cloud.commitments import HOURS_PER_DAY, billed_term_hours
from gpurent.errors import InputError
from gpurent.spot.interval import Overhead, daly_interval_s, overhead_exponential
from gpurent.units import HOURS_PER_MONTH, SECONDS_PER_HOUR

GUIDE_COMMIT_DISCOUNT = 1.0 - 1.0 / 1.4
"""Assumption, not data: the guide says on-demand costs 30-50% more than committed terms; the
middle, 40% more, means a committed price of 1/1.4 of on-demand, a discount of 28.6%. Used only
when neither the offer nor `--commit-discount`/`--committed` gives a committed price."""

ADVISOR_BANDS: dict[str, float] = {
    "<5%": 0.025,
    "5-10%": 0.075,
    "10-15%": 0.125,
    "15-20%": 0.175,
    ">20%": 0.25,
}
"""AWS Spot Instance Advisor "frequency of interruption" bands (share of instances reclaimed in
the trailing month) -> the probability used here (band middle; 25% for the open ">20%" band)."""


def advisor_band_mtti_h(band: str) -> float:
    """Mean time to interruption (hours) implied by an Advisor band, if interruptions are a
    Poisson process: P(reclaimed within a month) = 1 - exp(-730 h / MTTI)."""
    if band not in ADVISOR_BANDS:
        raise InputError(f"--advisor-band {band!r}: use one of {', '.join(ADVISOR_BANDS)}")
    return -HOURS_PER_MONTH / math.log1p(-ADVISOR_BANDS[band])


def _positive(value: float, flag: str, *, allow_zero: bool = False) -> None:
    ok = math.isfinite(value) and (value >= 0 if allow_zero else value > 0)
    if not ok:
        raise InputError(
            f"{flag} must be a {'non-negative' if allow_zero else 'positive'} number, got {value}"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class UsagePattern:
    """How much the instance is used: hours per day, days per month, for `months` months."""

    hours_per_day: float
    days_per_month: float = 30.0
    months: float = 1.0

    def __post_init__(self) -> None:
        if not (0 < self.hours_per_day <= 24):
            raise InputError(f"--hours-per-day must be in (0, 24], got {self.hours_per_day}")
        if not (0 < self.days_per_month <= 31):
            raise InputError(f"--days-per-month must be in (0, 31], got {self.days_per_month}")
        _positive(self.months, "--months")

    @property
    def hours_per_month(self) -> float:
        """Hours used per month."""
        return self.hours_per_day * self.days_per_month

    @property
    def total_hours(self) -> float:
        """Hours used over the whole period."""
        return self.hours_per_month * self.months

    def span_hours(self, term_hours: float) -> float:
        """Calendar hours a commitment of `term_hours` must cover: the whole months for terms of
        a month or more, else the days of use (days are assumed consecutive)."""
        if term_hours >= HOURS_PER_MONTH:
            return self.months * HOURS_PER_MONTH
        return self.days_per_month * self.months * HOURS_PER_DAY

    @property
    def utilisation(self) -> float:
        """Share of the month's hours (730 h) in use."""
        return min(self.hours_per_month / HOURS_PER_MONTH, 1.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class Prices:
    """$/h for one instance. `committed_usd_per_hour` with `commit_months`; sources say where
    each figure came from (offer, flag, or a labelled assumption)."""

    on_demand_usd_per_hour: float
    spot_usd_per_hour: float | None = None
    committed_usd_per_hour: float | None = None
    commit_months: int = 12
    committed_source: str = ""
    commit_term_hours: float | None = None  # overrides commit_months (e.g. a 24 h block)
    term_name: str = ""  # e.g. "EC2 Capacity Block for ML", when the term is a provider's

    @property
    def term_hours(self) -> float:
        """Length of the commitment in hours."""
        if self.commit_term_hours is not None:
            return self.commit_term_hours
        return self.commit_months * HOURS_PER_MONTH

    @property
    def term_label(self) -> str:
        """The commitment's length as text, e.g. "12-month term"."""
        h = self.term_hours
        if h >= HOURS_PER_MONTH and h % HOURS_PER_MONTH == 0:
            label = f"{h / HOURS_PER_MONTH:g}-month"
        elif h % HOURS_PER_DAY == 0:
            label = f"{h / HOURS_PER_DAY:g}-day"
        else:
            label = f"{h:,.0f} h"
        return f"{label} term" + (f" ({self.term_name})" if self.term_name else "")

    def __post_init__(self) -> None:
        _positive(self.on_demand_usd_per_hour, "on-demand price")
        if self.spot_usd_per_hour is not None:
            _positive(self.spot_usd_per_hour, "spot price")
        if self.committed_usd_per_hour is not None:
            _positive(self.committed_usd_per_hour, "committed price")
        if self.commit_months < 1:
            raise InputError(f"--commit-months must be >= 1, got {self.commit_months}")
        if self.commit_term_hours is not None and not self.commit_term_hours > 0:
            raise InputError(f"--commit-term must be positive, got {self.commit_term_hours} h")


@dataclass(frozen=True, slots=True, kw_only=True)
class SpotRisk:
    """What spot interruptions cost: MTTI (hours), seconds per checkpoint, seconds to restart."""

    mtti_h: float
    checkpoint_cost_s: float = 60.0
    restart_s: float = 600.0
    source: str = ""

    def __post_init__(self) -> None:
        _positive(self.mtti_h, "--mtti-hours")
        _positive(self.checkpoint_cost_s, "--checkpoint-cost-s")
        _positive(self.restart_s, "--restart-s", allow_zero=True)

    def overhead(self) -> Overhead:
        """Overhead at Daly's interval for exponential lifetimes with this MTTI."""
        mtti_s = self.mtti_h * SECONDS_PER_HOUR
        tau = daly_interval_s(self.checkpoint_cost_s, mtti_s)
        return overhead_exponential(tau, self.checkpoint_cost_s, mtti_s, self.restart_s)


@dataclass(frozen=True, slots=True, kw_only=True)
class OptionCost:
    """One way to pay: effective $/h of useful work, hours billed, total cost."""

    option: str
    price_usd_per_hour: float
    effective_usd_per_useful_hour: float
    billed_hours: float
    cost_usd: float
    note: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    """All options for one usage pattern, cheapest first, with break-even utilisations."""

    usage: UsagePattern
    options: tuple[OptionCost, ...]
    cheapest: str
    spot_overhead: Overhead | None
    break_even_utilisation_vs_on_demand: float | None
    break_even_utilisation_vs_spot: float | None
    utilisation: float
    explanation: str
    committed_source: str


def _launches(usage: UsagePattern) -> float:
    """Launches the pattern takes: one per day of use, one in all when it runs around the clock."""
    return 1.0 if usage.hours_per_day >= HOURS_PER_DAY else usage.days_per_month * usage.months


def billed_usage_hours(usage: UsagePattern, hours: float, rule: BillingRule | None) -> float:
    """Hours billed for `hours` of running spread over the pattern's launches, each rounded to
    the provider's minimum and steps (`rule`; exact hours without one)."""
    if rule is None:
        return hours
    launches = _launches(usage)
    return launches * rule.billed_s(hours / launches * SECONDS_PER_HOUR) / SECONDS_PER_HOUR


def _per_launch(rule: BillingRule | None) -> str:
    if rule is None:
        return "pay per used hour"
    step = "per second" if rule.step_s == 1 else f"in {rule.step_s:g} s steps"
    return f"billed {step}, at least {rule.minimum_s:g} s per launch ({rule.provider})"


def compare(
    usage: UsagePattern,
    prices: Prices,
    risk: SpotRisk | None = None,
    rule: BillingRule | None = None,
) -> Comparison:
    """Cost of the usage pattern under each pricing model; see the module docstring. With the
    provider's billing `rule`, on-demand and spot hours are billed per launch (one a day of
    use) at its minimum and steps, as `plan` bills a job."""
    used = usage.total_hours
    od = prices.on_demand_usd_per_hour
    od_billed = billed_usage_hours(usage, used, rule)
    options = [
        OptionCost(
            option="on-demand",
            price_usd_per_hour=od,
            effective_usd_per_useful_hour=od * od_billed / used,
            billed_hours=od_billed,
            cost_usd=od * od_billed,
            note=_per_launch(rule),
        )
    ]
    overhead = None
    spot_eff = None
    if prices.spot_usd_per_hour is not None and risk is not None:
        overhead = risk.overhead()
        spot_billed = billed_usage_hours(usage, used * overhead.slowdown, rule)
        spot_eff = prices.spot_usd_per_hour * spot_billed / used
        options.append(
            OptionCost(
                option="spot",
                price_usd_per_hour=prices.spot_usd_per_hour,
                effective_usd_per_useful_hour=spot_eff,
                billed_hours=spot_billed,
                cost_usd=spot_eff * used,
                note=f"+{overhead.total * 100:.1f}% for checkpoints every "
                f"{overhead.interval_s / 60:.0f} min, restarts and lost work "
                f"(MTTI {risk.mtti_h:.3g} h)",
            )
        )
    be_od = be_spot = None
    if prices.committed_usd_per_hour is not None:
        c = prices.committed_usd_per_hour
        terms, billed = _committed_terms(usage, prices)
        options.append(
            OptionCost(
                option="committed",
                price_usd_per_hour=c,
                effective_usd_per_useful_hour=c * billed / used,
                billed_hours=billed,
                cost_usd=c * billed,
                note=f"{terms} x {prices.term_label}, every hour billed",
            )
        )
        be_od = c / od
        be_spot = c / spot_eff if spot_eff is not None else None
    ranked = sorted(options, key=lambda o: (o.cost_usd, o.option))
    committed_util = used / _committed_terms(usage, prices)[1]
    return Comparison(
        usage=usage,
        options=tuple(ranked),
        cheapest=ranked[0].option,
        spot_overhead=overhead,
        break_even_utilisation_vs_on_demand=be_od,
        break_even_utilisation_vs_spot=be_spot,
        utilisation=committed_util,
        explanation=_explain(ranked, committed_util, be_od, be_spot),
        committed_source=prices.committed_source,
    )


def _committed_terms(usage: UsagePattern, prices: Prices) -> tuple[int, float]:
    """Whole commitment terms covering the usage, and the hours they bill."""
    term_h = prices.term_hours
    billed = billed_term_hours(usage.span_hours(term_h), term_h)
    return round(billed / term_h), billed


_TERM_UNITS_H = {
    "h": 1.0,
    "d": HOURS_PER_DAY,
    "w": 7 * HOURS_PER_DAY,
    "mo": HOURS_PER_MONTH,
    "y": 12 * HOURS_PER_MONTH,
}
_TERM_ALIASES = {
    "hour": "h",
    "hours": "h",
    "day": "d",
    "days": "d",
    "week": "w",
    "weeks": "w",
    "month": "mo",
    "months": "mo",
    "year": "y",
    "years": "y",
    "yr": "y",
}


def parse_term_hours(text: str, flag: str = "--commit-term") -> float:
    """A commitment term such as 1d, 2w, 1mo, 3mo, 1y, 3y or 24h, in hours."""
    raw = text.strip().lower().replace(" ", "")
    number = raw.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = raw[len(number) :]
    unit = _TERM_ALIASES.get(unit, unit)
    try:
        value = float(number)
    except ValueError:
        value = math.nan
    if unit not in _TERM_UNITS_H or not (math.isfinite(value) and value > 0):
        raise InputError(f"{flag}: cannot read {text!r} as a term; use e.g. 1d, 1w, 1mo, 1y, 3y")
    return value * _TERM_UNITS_H[unit]


def _explain(
    ranked: list[OptionCost], util: float, be_od: float | None, be_spot: float | None
) -> str:
    best, rest = ranked[0], ranked[1:]
    parts = [f"{best.option} is cheapest"]
    if rest:
        saving = 1.0 - best.cost_usd / rest[0].cost_usd
        parts.append(f"{saving * 100:.0f}% less than {rest[0].option}")
    text = ", ".join(parts) + "."
    if be_od is not None:
        text += (
            f" A commitment pays off against on-demand above {be_od * 100:.0f}% utilisation"
            + (f" and against spot above {be_spot * 100:.0f}%" if be_spot is not None else "")
            + f"; this pattern uses {util * 100:.0f}% of the committed hours."
        )
        if be_spot is not None and be_spot > 1:
            text += (
                " Spot's effective price is below the committed price: "
                "no utilisation makes the commitment beat spot."
            )
    return text
