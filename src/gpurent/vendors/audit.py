"""A bill against what it should have cost: the catalog's prices and the monitor's records.

Pure: takes a `Bill`, the catalog's offers, recorded samples per resource and the resources
known to have run as spot, and returns an `AuditReport` of findings with dollar amounts and the
bill's line numbers. Four checks:

- **over-billed**: an instance line whose billed rate (amount / hours) is above the catalog's
  rate for that instance type and region by more than the tolerance (on-demand lines against
  the on-demand price, spot lines against the highest spot price seen). Committed lines
  (reserved, savings plans, committed use) have no list price to compare and are skipped.
- **idle-billed**: hours billed while the monitor's samples of that resource show every GPU at
  or below the idle threshold, priced at the line's billed rate.
- **storage-after-stop**: storage billed while no instance of the bill ran (after the first one
  started), as the share of each storage line's window no instance line covers.
- **spot-billed-as-on-demand**: an instance that ran as spot (per the launches file or a
  resource tag such as `lifecycle=spot` or `karpenter.sh/capacity-type=spot`) billed at the
  on-demand term; the excess is over the catalog's highest spot price.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from enum import StrEnum

from gpurent.catalog.offer import Offer
from gpurent.monitor.rules import Thresholds, is_idle
from gpurent.monitor.sample import Sample
from gpurent.vendors.bills import Bill, BillLine, LineKind, Market
from gpurent.vendors.outages import typical_interval_s
from gpurent.vendors.sla import merge

_US = 1_000_000
_CENT = 0.005
# Tag keys (letters and digits, lower case) whose value "spot" says how an instance was bought.
_SPOT_TAG_HINTS = ("lifecycle", "capacitytype", "purchaseoption", "market")


class FindingKind(StrEnum):
    """What a bill audit found wrong with a bill line."""

    OVER_BILLED = "over-billed"
    IDLE_BILLED = "idle-billed"
    STORAGE_AFTER_STOP = "storage-after-stop"
    SPOT_AS_ON_DEMAND = "spot-billed-as-on-demand"


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One audit finding: its kind, the bill lines and hours, billed, expected and excess USD."""

    kind: FindingKind
    resource: str
    lines: tuple[int, ...]  # the bill's CSV lines (1 = header)
    hours: float  # the hours the finding is about
    billed_usd: float  # what those lines billed
    expected_usd: float | None  # what they should have billed (None: not known)
    excess_usd: float | None  # billed beyond expected, or the money wasted (idle, storage)
    detail: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditReport:
    """A bill audit: the bill read, what it billed in USD, the findings and what was not checked."""

    source: str
    format: str
    rows_read: int
    billed_usd: float  # every line of the bill
    findings: tuple[Finding, ...]
    excess_usd: float  # the findings' excess together
    notes: tuple[str, ...]  # what could not be checked, and why


@dataclass(frozen=True, slots=True, kw_only=True)
class SpotEvidence:
    """A resource known to have run as spot, and where that is written."""

    resource: str
    evidence: str


def _us(t: datetime) -> int:
    return int((t - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds() * _US)


def _key(text: str) -> str:
    return "".join(c for c in text.lower() if c.isalnum())


class _Catalog:
    """Offers by (instance type, region), lower case; a provider narrows the match."""

    def __init__(self, offers: Sequence[Offer]):
        self.by: dict[tuple[str, str], list[Offer]] = {}
        for o in offers:
            self.by.setdefault((o.instance_type.lower(), o.region.lower()), []).append(o)

    def find(self, provider: str, instance_type: str, region: str) -> Offer | None:
        found = self.by.get((instance_type.lower(), region.lower()), [])
        if provider:
            found = [o for o in found if o.provider.lower() == provider.lower()]
        prices = {o.price_usd_per_hour for o in found}
        return found[0] if len(prices) == 1 else None


def spot_from_tags(lines: Sequence[BillLine]) -> dict[str, SpotEvidence]:
    """Resources whose bill lines carry a tag saying they ran as spot."""
    out: dict[str, SpotEvidence] = {}
    for line in lines:
        for name, value in line.tags:
            says_spot = value.strip().lower() == "spot" and line.resource not in out
            if says_spot and line.resource and any(h in _key(name) for h in _SPOT_TAG_HINTS):
                out[line.resource] = SpotEvidence(
                    resource=line.resource,
                    evidence=f"tag {name}={value} (line {line.lines[0]})",
                )
    return out


def _spot_rate(offer: Offer) -> float | None:
    return offer.spot_price_max_usd_per_hour or offer.spot_price_usd_per_hour


def _group(
    findings: list[tuple[tuple[str, ...], BillLine, float, float | None, str]],
    kind: FindingKind,
) -> list[Finding]:
    """Join per-line results with the same key (resource, rate...) into one finding each:
    (key, line, hours, expected $ or None, detail)."""
    groups: dict[tuple[str, ...], list[tuple[BillLine, float, float | None, str]]] = {}
    for group_key, line, hours, expected, detail in findings:
        groups.setdefault(group_key, []).append((line, hours, expected, detail))
    out = []
    for members in groups.values():
        billed = sum(m[0].amount_usd for m in members)
        hours = sum(m[1] for m in members)
        known = all(m[2] is not None for m in members)
        expected = sum(m[2] or 0.0 for m in members) if known else None
        out.append(
            Finding(
                kind=kind,
                resource=members[0][0].resource,
                lines=tuple(n for m in members for n in m[0].lines),
                hours=hours,
                billed_usd=billed,
                expected_usd=expected,
                excess_usd=None if expected is None else billed - expected,
                detail=members[0][3].replace("{rate}", f"${billed / hours:.4g}/h")
                if hours
                else members[0][3],
            )
        )
    return out


def _wasted(
    findings: list[tuple[tuple[str, ...], BillLine, float, float | None, str]],
    kind: FindingKind,
    describe: Callable[[Finding, float], str],
) -> list[Finding]:
    """The grouped findings of `kind` (see `_group`) that wasted a cent or more, each with the
    money wasted as its excess and `describe(finding, wasted)` as its detail."""
    out = []
    for f in _group(findings, kind):
        wasted = f.excess_usd or 0.0
        if wasted >= _CENT:
            out.append(replace(f, excess_usd=wasted, detail=describe(f, wasted)))
    return out


def _rate_checks(
    bill: Bill,
    catalog: _Catalog,
    *,
    spot: Mapping[str, SpotEvidence],
    tolerance_pct: float,
    provider: str,
    notes: list[str],
) -> list[Finding]:
    over: list[tuple[tuple[str, ...], BillLine, float, float | None, str]] = []
    as_on_demand: list[tuple[tuple[str, ...], BillLine, float, float | None, str]] = []
    unpriced: dict[str, int] = {}
    committed = untyped = 0
    factor = 1 + tolerance_pct / 100
    for line in bill.lines:
        if line.kind is not LineKind.COMPUTE:
            continue
        if line.market is Market.RESERVED:
            committed += 1
            continue
        if not line.hours or line.amount_usd <= 0:
            continue
        offer = catalog.find(line.provider or provider, line.instance_type, line.region)
        rate = line.amount_usd / line.hours
        where = f"{line.instance_type or 'an instance'} in {line.region or 'a region'}"
        spot_rate = None if offer is None else _spot_rate(offer)
        ran_spot = spot.get(line.resource) if line.resource else None
        billed_on_demand = line.market is Market.ON_DEMAND or (
            line.market is Market.UNKNOWN
            and spot_rate is not None
            and rate > spot_rate * factor + _CENT
        )
        if ran_spot is not None and billed_on_demand:
            expected = None if spot_rate is None else line.hours * spot_rate
            spot_text = (
                f"${spot_rate:.4g}/h at most ({offer.source or 'catalog'})"
                if offer is not None and spot_rate is not None
                else "not in the catalog"
            )
            detail = (
                f"ran as spot ({ran_spot.evidence}) but billed at the on-demand term, "
                f"{{rate}} for {where}; the catalog's spot price is {spot_text}"
            )
            spot_key = (line.resource, line.instance_type, line.region)
            as_on_demand.append((spot_key, line, line.hours, expected, detail))
            continue
        if not line.instance_type or not line.region:
            untyped += 1
            continue
        if offer is None:
            unpriced[where] = unpriced.get(where, 0) + 1
            continue
        listed = spot_rate if line.market is Market.SPOT else offer.price_usd_per_hour
        if listed is None:
            unpriced[where] = unpriced.get(where, 0) + 1
            continue
        if line.amount_usd > line.hours * listed * factor + _CENT:
            term = "spot" if line.market is Market.SPOT else "on-demand"
            detail = (
                f"billed ${rate:.4g}/h for {where} ({term}); the catalog says ${listed:.4g}/h "
                f"(+{100 * (rate / listed - 1):.1f}%, tolerance {tolerance_pct:g}%; "
                f"{offer.source or 'catalog'}{', as of ' + offer.as_of if offer.as_of else ''})"
            )
            rate_key = (line.resource, line.instance_type, line.region, term, f"{rate:.6g}")
            over.append((rate_key, line, line.hours, line.hours * listed, detail))
    for where, count in sorted(unpriced.items()):
        notes.append(f"{count} instance line(s) of {where}: no catalog price; rate not checked")
    if committed:
        notes.append(f"{committed} committed-use line(s) (reserved, savings plan): no list price")
    if untyped:
        notes.append(f"{untyped} instance line(s) without instance type or region: not checked")
    return [
        *_group(over, FindingKind.OVER_BILLED),
        *_group(as_on_demand, FindingKind.SPOT_AS_ON_DEMAND),
    ]


class IdleTimeline:
    """The time a resource's samples cover, each span marked idle or not, for window sums.

    Each sample stands for the time to the next one (at most 3 typical intervals); it is idle
    when every GPU is at or below the threshold (a sample without GPUs, with a lost GPU or with
    a GPU not measured is not idle)."""

    def __init__(self, samples: Sequence[Sample], idle_activity_pct: float):
        ordered = sorted(samples, key=lambda s: s.timestamp_s)
        interval = typical_interval_s(ordered) or 60.0
        thresholds = Thresholds(idle_activity_pct=idle_activity_pct)
        self.spans: list[tuple[float, float, bool]] = []
        for i, s in enumerate(ordered):
            nxt = ordered[i + 1].timestamp_s if i + 1 < len(ordered) else s.timestamp_s + interval
            end = min(nxt, s.timestamp_s + 3 * interval)
            idle = bool(s.gpus) and all(not g.lost and is_idle(g, thresholds) for g in s.gpus)
            if end > s.timestamp_s:
                self.spans.append((s.timestamp_s, end, idle))
        self.starts = [a for a, _, _ in self.spans]

    def seconds(self, start_s: float, end_s: float) -> tuple[float, float]:
        """(idle, observed) seconds of [start_s, end_s)."""
        idle = observed = 0.0
        i = max(0, bisect.bisect_right(self.starts, start_s) - 1)
        while i < len(self.spans) and self.spans[i][0] < end_s:
            a, b, is_idle_span = self.spans[i]
            overlap = min(b, end_s) - max(a, start_s)
            if overlap > 0:
                observed += overlap
                idle += overlap if is_idle_span else 0.0
            i += 1
        return idle, observed


def idle_seconds(
    samples: Sequence[Sample], start_s: float, end_s: float, idle_activity_pct: float
) -> tuple[float, float]:
    """(idle, observed) seconds of [start_s, end_s) (see `IdleTimeline`)."""
    return IdleTimeline(samples, idle_activity_pct).seconds(start_s, end_s)


def _idle_checks(
    bill: Bill,
    samples: Mapping[str, Sequence[Sample]],
    idle_activity_pct: float,
    notes: list[str],
) -> list[Finding]:
    found: list[tuple[tuple[str, ...], BillLine, float, float | None, str]] = []
    billed_resources = {b.resource for b in bill.lines if b.kind is LineKind.COMPUTE}
    for resource in samples:
        if resource not in billed_resources:
            notes.append(f"samples for {resource!r}: no instance line of the bill names it")
    timelines = {r: IdleTimeline(recorded, idle_activity_pct) for r, recorded in samples.items()}
    for line in bill.lines:
        timeline = timelines.get(line.resource)
        if (
            timeline is None
            or line.kind is not LineKind.COMPUTE
            or line.start is None
            or line.end is None
            or not line.hours
        ):
            continue
        idle_s, _ = timeline.seconds(line.start.timestamp(), line.end.timestamp())
        hours = min(idle_s / 3600, line.hours)
        if hours <= 0:
            continue
        wasted = hours * line.amount_usd / line.hours
        found.append(((line.resource,), line, hours, line.amount_usd - wasted, ""))
    return _wasted(
        found,
        FindingKind.IDLE_BILLED,
        lambda f, wasted: (
            f"{f.hours:.2f} h billed while the monitor saw every GPU at or below "
            f"{idle_activity_pct:g}% activity (${wasted:,.2f} of ${f.billed_usd:,.2f})"
        ),
    )


def _storage_checks(bill: Bill, notes: list[str]) -> list[Finding]:
    compute = [
        (_us(b.start), _us(b.end))
        for b in bill.lines
        if b.kind is LineKind.COMPUTE and b.start and b.end and b.hours and b.amount_usd > 0
    ]
    storage = [b for b in bill.lines if b.kind is LineKind.STORAGE and b.amount_usd > 0]
    if not storage:
        return []
    if not compute:
        notes.append("no instance time in the bill: storage after stop not checked")
        return []
    running = merge(compute)
    first = running[0][0]
    found: list[tuple[tuple[str, ...], BillLine, float, float | None, str]] = []
    for line in storage:
        if line.start is None or line.end is None or line.end <= line.start:
            continue
        a, b = _us(line.start), _us(line.end)
        lo = max(a, first)
        covered = sum(max(0, min(b, e) - max(lo, s)) for s, e in running)
        idle_us = max(0, b - lo) - covered
        if idle_us <= 0:
            continue
        wasted = line.amount_usd * idle_us / (b - a)
        hours = idle_us / _US / 3600
        found.append(((line.resource, line.usage), line, hours, line.amount_usd - wasted, ""))
    return _wasted(
        found,
        FindingKind.STORAGE_AFTER_STOP,
        lambda f, wasted: (
            f"{f.hours:.1f} h of storage billed while no instance of the bill ran "
            f"(${wasted:,.2f}); delete or snapshot volumes when instances stop"
        ),
    )


def audit(
    bill: Bill,
    offers: Sequence[Offer],
    *,
    samples: Mapping[str, Sequence[Sample]] | None = None,
    spot: Mapping[str, SpotEvidence] | None = None,
    tolerance_pct: float = 5.0,
    idle_activity_pct: float = 5.0,
    provider: str = "",
) -> AuditReport:
    """The findings of the four checks on `bill` (see the module docstring). `spot` adds to
    the resources the bill's own tags say ran as spot; `provider` names a generic bill's
    provider where its lines do not."""
    notes: list[str] = []
    spot_all = {**spot_from_tags(bill.lines), **(spot or {})}
    findings = [
        *_rate_checks(
            bill,
            _Catalog(offers),
            spot=spot_all,
            tolerance_pct=tolerance_pct,
            provider=provider,
            notes=notes,
        ),
        *_idle_checks(bill, samples or {}, idle_activity_pct, notes),
        *_storage_checks(bill, notes),
    ]
    findings.sort(key=lambda f: (-(f.excess_usd or 0.0), f.kind.value, f.lines))
    return AuditReport(
        source=bill.source,
        format=bill.format,
        rows_read=bill.rows_read,
        billed_usd=sum(b.amount_usd for b in bill.lines),
        findings=tuple(findings),
        excess_usd=sum(f.excess_usd or 0.0 for f in findings),
        notes=tuple(notes),
    )
