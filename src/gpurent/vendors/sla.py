"""SLA arithmetic: monthly availability from outages, and the credit tiered terms owe.

Pure: takes outages (aware datetimes), terms and a time zone, returns frozen results. Times are
counted in whole microseconds (integers), so a hand-checked case is exact: 43 min 12 s of
downtime in a 30-day month is 99.9% availability, which is *not* below a 99.9% tier.

- The month is the calendar month in the chosen time zone: from local midnight on the 1st to
  local midnight on the 1st of the next month, so a month holding a DST change is an hour
  shorter or longer (Europe/Berlin: March 2026 is 743 h, October 2026 is 745 h).
- Overlapping outages (two resources down at once, or a log that repeats an event) are merged
  before they are summed; an outage that spans a month boundary counts in each month for the
  part inside it.
- Availability = (month length - downtime) / month length. A tier `below_pct = 99.9,
  credit_pct = 10` is met when availability is strictly below 99.9%; of the tiers met, the one
  with the largest credit applies (so the credit never falls as downtime grows).
- Outages whose reason the terms exclude (scheduled maintenance, say) are listed as evidence but
  not counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from fractions import Fraction

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
US_PER_S = 1_000_000


@dataclass(frozen=True, slots=True, kw_only=True)
class Outage:
    """One period a resource was down, with where the claim can point to it."""

    start: datetime  # aware
    end: datetime  # aware, after start
    resource: str
    reason: str
    evidence: str  # "outages.csv:4", or the sample rows it came from


@dataclass(frozen=True, slots=True, kw_only=True)
class Tier:
    """Availability strictly below `below_pct` earns `credit_pct` of the monthly bill."""

    below_pct: float
    credit_pct: float


@dataclass(frozen=True, slots=True, kw_only=True)
class SlaTerms:
    """A provider's SLA: its credit tiers, the monthly bill and the outage reasons it excludes."""

    tiers: tuple[Tier, ...]  # at least one
    name: str = ""
    monthly_bill_usd: float | None = None
    excluded_reasons: tuple[str, ...] = ()  # lower case; matched against an outage's reason
    source: str = ""  # the terms file


@dataclass(frozen=True, slots=True, kw_only=True)
class EvidenceRow:
    """One outage as it falls inside the month (clipped to it), in the month's time zone."""

    start: datetime
    end: datetime
    duration_s: float  # inside the month, before merging with other outages
    resource: str
    reason: str
    evidence: str
    excluded: bool  # the terms exclude its reason: shown, not counted


@dataclass(frozen=True, slots=True, kw_only=True)
class MonthlySla:
    """One month's availability under the SLA: downtime, availability %, tier met and credit."""

    month: str  # "2026-11"
    time_zone: str
    start: datetime  # local midnight on the 1st
    end: datetime  # local midnight on the 1st of the next month
    period_s: float
    downtime_s: float  # merged, excluded reasons left out
    excluded_s: float  # merged time of the excluded outages not otherwise down
    availability_pct: float
    tier: Tier | None  # the tier met with the largest credit; None when no tier is met
    credit_pct: float
    monthly_bill_usd: float | None
    credit_usd: float | None  # None when no bill amount was given
    resources: tuple[tuple[str, float], ...]  # (resource, merged downtime s), most first
    rows: tuple[EvidenceRow, ...]
    terms_name: str = ""


def _us(t: datetime) -> int:
    return (t - _EPOCH) // _US


def _from_us(us: int, tz: tzinfo) -> datetime:
    return (_EPOCH + us * _US).astimezone(tz)


def merge(intervals: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, non-overlapping intervals covering the same time (touching ones joined)."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(i for i in intervals if i[1] > i[0]):
        if out and start <= out[-1][1]:
            if end > out[-1][1]:
                out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def _total(intervals: Iterable[tuple[int, int]]) -> int:
    return sum(end - start for start, end in intervals)


def month_window(year: int, month: int, tz: tzinfo) -> tuple[datetime, datetime]:
    """Local midnight on the 1st of the month and of the next month, in `tz`."""
    start = datetime(year, month, 1, tzinfo=tz)
    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=tz)
    return start, end


def months_touched(outages: Iterable[Outage], tz: tzinfo) -> list[tuple[int, int]]:
    """The (year, month) of every local calendar month an outage falls in, in order."""
    seen: set[tuple[int, int]] = set()
    for o in outages:
        first = o.start.astimezone(tz)
        last = (o.end - _US).astimezone(tz)
        y, m = first.year, first.month
        while (y, m) <= (last.year, last.month):
            seen.add((y, m))
            y, m = y + m // 12, m % 12 + 1
    return sorted(seen)


def _below(downtime_us: int, period_us: int, threshold_pct: float) -> bool:
    """Whether availability is strictly below `threshold_pct`, exactly."""
    threshold = Fraction(repr(threshold_pct))
    return Fraction(100 * (period_us - downtime_us), period_us) < threshold


def tier_met(downtime_us: int, period_us: int, tiers: Sequence[Tier]) -> Tier | None:
    """Of the tiers whose threshold the availability is below, the one with the largest credit
    (ties: the lower threshold)."""
    met = [t for t in tiers if _below(downtime_us, period_us, t.below_pct)]
    if not met:
        return None
    return max(met, key=lambda t: (t.credit_pct, -t.below_pct))


def monthly_sla(
    outages: Sequence[Outage],
    terms: SlaTerms,
    tz: tzinfo,
    year: int,
    month: int,
    *,
    monthly_bill_usd: float | None = None,
) -> MonthlySla:
    """Availability and credit for one local calendar month. `monthly_bill_usd` (else the
    terms' amount) is what the credit percentage applies to."""
    start, end = month_window(year, month, tz)
    lo, hi = _us(start), _us(end)
    period_us = hi - lo
    rows: list[EvidenceRow] = []
    counted: list[tuple[int, int]] = []
    excluded: list[tuple[int, int]] = []
    per_resource: dict[str, list[tuple[int, int]]] = {}
    for o in sorted(outages, key=lambda o: (o.start, o.end, o.resource)):
        a, b = max(_us(o.start), lo), min(_us(o.end), hi)
        if b <= a:
            continue
        is_excluded = o.reason.strip().lower() in terms.excluded_reasons
        (excluded if is_excluded else counted).append((a, b))
        if not is_excluded:
            per_resource.setdefault(o.resource, []).append((a, b))
        rows.append(
            EvidenceRow(
                start=_from_us(a, tz),
                end=_from_us(b, tz),
                duration_s=(b - a) / US_PER_S,
                resource=o.resource,
                reason=o.reason,
                evidence=o.evidence,
                excluded=is_excluded,
            )
        )
    down = merge(counted)
    downtime_us = _total(down)
    excluded_us = _total(merge([*down, *excluded])) - downtime_us
    tier = tier_met(downtime_us, period_us, terms.tiers)
    credit_pct = tier.credit_pct if tier is not None else 0.0
    bill = monthly_bill_usd if monthly_bill_usd is not None else terms.monthly_bill_usd
    resources = sorted(
        ((name, _total(merge(spans)) / US_PER_S) for name, spans in per_resource.items()),
        key=lambda r: (-r[1], r[0]),
    )
    return MonthlySla(
        month=f"{year:04d}-{month:02d}",
        time_zone=str(tz),
        start=start,
        end=end,
        period_s=period_us / US_PER_S,
        downtime_s=downtime_us / US_PER_S,
        excluded_s=excluded_us / US_PER_S,
        availability_pct=float(Fraction(100 * (period_us - downtime_us), period_us)),
        tier=tier,
        credit_pct=credit_pct,
        monthly_bill_usd=bill,
        credit_usd=None if bill is None else round(bill * credit_pct / 100.0, 2),
        resources=tuple(resources),
        rows=tuple(rows),
        terms_name=terms.name,
    )


def sla_report(
    outages: Sequence[Outage],
    terms: SlaTerms,
    tz: tzinfo,
    *,
    months: Sequence[tuple[int, int]] | None = None,
    monthly_bill_usd: float | None = None,
) -> tuple[MonthlySla, ...]:
    """One `MonthlySla` per month asked for, else per month an outage touches."""
    chosen = list(months) if months is not None else months_touched(outages, tz)
    return tuple(
        monthly_sla(outages, terms, tz, y, m, monthly_bill_usd=monthly_bill_usd) for y, m in chosen
    )
