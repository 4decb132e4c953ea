"""Bill readers: a provider's CSV export as `BillLine`s (compute, storage or other), each
keeping the line numbers it came from.

Formats (column names as the providers document them; matching ignores case, `/`, `_` and `.`,
so AWS CUR 2.0's `line_item_usage_type` reads like legacy CUR's `lineItem/UsageType`):

- `aws-cur`: AWS Cost and Usage Report (docs.aws.amazon.com/cur/latest/userguide, data
  dictionary: line item, product, pricing and resource-tag columns). Needs
  `lineItem/UsageStartDate`, `lineItem/UsageType`, `lineItem/UsageAmount`,
  `lineItem/UnblendedCost`; reads `lineItem/UsageEndDate`, `lineItem/LineItemType`,
  `lineItem/ResourceId`, `lineItem/AvailabilityZone`, `product/instanceType`,
  `product/region` (or `product/regionCode`), `pricing/term` and `resourceTags/*`. A usage type
  with `BoxUsage`, `SpotUsage` or `DedicatedUsage` is instance time (hours); `EBS:` is storage.
  `SpotUsage` or term `Spot` is spot; term `Reserved`, `DiscountedUsage` and
  `SavingsPlanCoveredUsage` are committed. Tax, credits, refunds and fees are "other".
- `gcp`: Cloud Billing export to CSV (cloud.google.com/billing/docs/how-to/export-data-bigquery
  -tables/standard-usage). Needs `sku.description`, `usage_start_time`, `usage.amount`, `cost`;
  reads `service.description`, `usage_end_time`, `usage.unit`, `resource.name` (or
  `resource.global_name`), `location.region` and a machine-type column (`machine_type` or
  `system_labels.compute.googleapis.com/machine_spec`). The core, RAM and GPU SKU rows of one
  resource and usage window are one compute line, taken to run the whole window (a partly
  used window makes the billed rate look lower, never higher); rows without a resource name
  (the standard export has none) stay single SKU lines whose rate is not checked.
  `Spot`/`Preemptible` SKUs are spot, `Commitment` SKUs committed; `PD Capacity`, `Storage`,
  `Disk` and `Snapshot` SKUs are storage.
- `generic`: `date,resource,hours,amount` (a date, or an ISO time, per line), optional
  `instance_type`, `region`, `provider`, `market` (on-demand, spot, reserved) and `kind`
  (compute, storage, other; default compute).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from pathlib import Path

from gpurent.errors import InputError
from gpurent.inputs import files, values
from gpurent.vendors.outages import FIRST_YEAR, LAST_YEAR, aware_time


class LineKind(StrEnum):
    """What a bill line pays for: compute, storage or other."""

    COMPUTE = "compute"
    STORAGE = "storage"
    OTHER = "other"


class Market(StrEnum):
    """How a bill line was priced: on-demand, spot, reserved or unknown."""

    ON_DEMAND = "on-demand"
    SPOT = "spot"
    RESERVED = "reserved"  # reserved, savings plan, committed use: not a list price
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True, kw_only=True)
class BillLine:
    """One charge of a bill: provider, resource, time window, hours and amount in USD."""

    lines: tuple[int, ...]  # the CSV lines it came from (1 = the header)
    provider: str  # aws, gcp, or the generic bill's provider column ("" when not given)
    kind: LineKind
    resource: str
    start: datetime | None
    end: datetime | None
    hours: float | None  # instance hours billed (compute); the window's hours (storage)
    amount_usd: float
    instance_type: str = ""
    region: str = ""
    market: Market = Market.UNKNOWN
    usage: str = ""  # the usage type or SKU as the bill writes it
    tags: tuple[tuple[str, str], ...] = ()

    @property
    def rate_usd_per_hour(self) -> float | None:
        """The charge's USD per hour, or None without hours."""
        if not self.hours:
            return None
        return self.amount_usd / self.hours


@dataclass(frozen=True, slots=True, kw_only=True)
class Bill:
    """A bill as read: its source, format, provider and charges."""

    source: str
    format: str  # aws-cur | gcp | generic
    provider: str  # aws | gcp | "" (generic: per line or the --provider flag)
    lines: tuple[BillLine, ...]
    rows_read: int


FORMATS = ("aws-cur", "gcp", "generic")


def key(name: str) -> str:
    """A column name for matching: lower case, letters and digits only."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


_AWS_NEED = ("lineItem/UsageStartDate", "lineItem/UsageType", "lineItem/UsageAmount",
             "lineItem/UnblendedCost")  # fmt: skip
_GCP_NEED = ("sku.description", "usage_start_time", "usage.amount", "cost")
_GENERIC_NEED = ("date", "resource", "hours", "amount")
_NEEDS = {"aws-cur": _AWS_NEED, "gcp": _GCP_NEED, "generic": _GENERIC_NEED}


def detect_format(header: list[str], where: str) -> str:
    """`aws-cur`, `gcp` or `generic` from the header; else one line naming the columns seen."""
    keys = {key(h) for h in header}
    if any(k.startswith("lineitem") for k in keys):
        return "aws-cur"
    if "skudescription" in keys or "usagestarttime" in keys:
        return "gcp"
    if {key(c) for c in _GENERIC_NEED} <= keys:
        return "generic"
    seen = ",".join(header)
    raise InputError(
        f"{where}: unknown bill format (columns: {seen[:160]}); expected an AWS Cost and Usage "
        "Report (lineItem/...), a GCP billing export (sku.description, usage_start_time, ...) "
        "or date,resource,hours,amount; or give --format"
    )


class _Row:
    """One CSV row read by normalised column name, errors naming the file and line."""

    def __init__(self, row: dict[str, str], names: dict[str, str], where: str, line: int):
        self.row, self.names, self.where, self.line = row, names, where, line

    def get(self, *columns: str) -> str:
        for c in columns:
            name = self.names.get(key(c))
            if name is not None and self.row.get(name, "").strip():
                return self.row[name].strip()
        return ""

    def number(self, column: str, *, default: float | None = None) -> float:
        text = self.get(column)
        if not text:
            if default is not None:
                return default
            raise InputError(f"{self.where}:{self.line}: {column} is empty; give a number")
        return values.finite(text, f"{self.where}:{self.line}: {column}")

    def time(self, column: str) -> datetime | None:
        text = self.get(column)
        if not text:
            return None
        return bill_time(text, f"{self.where}:{self.line}: {column}")


def bill_time(text: str, where: str) -> datetime:
    """An ISO time with an offset (GCP's `2026-11-03 10:00:00 UTC` too), or a bare date (the
    UTC day)."""
    cleaned = re.sub(r"\s*UTC$", "+00:00", text.strip())
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", cleaned):
        try:
            day = date.fromisoformat(cleaned)
        except ValueError:
            raise InputError(f"{where}: bad date {text!r}; use YYYY-MM-DD") from None
        if not FIRST_YEAR <= day.year <= LAST_YEAR:
            raise InputError(
                f"{where}: {text!r} is not a date between {FIRST_YEAR} and {LAST_YEAR}"
            )
        return datetime.combine(day, datetime.min.time(), UTC)
    return aware_time(cleaned, where)


def read_bill(path: Path, fmt: str = "auto") -> Bill:
    """The lines of a bill CSV in `fmt` (`auto` detects it from the header)."""
    where = files.shown(path)
    header, rows = files.csv_records(files.read_text(path, what="bill"), where)
    if not header:
        raise InputError(f"{where}: empty file; expected a bill CSV with a header row")
    chosen = detect_format(header, where) if fmt == "auto" else fmt
    if chosen not in FORMATS:
        raise InputError(f"--format {fmt!r}: give one of auto, {', '.join(FORMATS)}")
    names = {key(h): h for h in header}
    missing = [c for c in _NEEDS[chosen] if key(c) not in names]
    if missing:
        raise InputError(
            f"{where}:1: missing column(s) {', '.join(missing)} for the {chosen} format "
            f"(columns seen: {','.join(header)[:160]})"
        )
    reader = {"aws-cur": _aws_line, "gcp": None, "generic": _generic_line}[chosen]
    read = [_Row(row, names, where, line) for line, row in rows]
    lines = _gcp_lines(read) if reader is None else [reader(r) for r in read]
    provider = {"aws-cur": "aws", "gcp": "gcp"}.get(chosen, "")
    return Bill(source=where, format=chosen, provider=provider, lines=tuple(lines),
                rows_read=len(rows))  # fmt: skip


# ------------------------------------------------------------------------- AWS CUR

_COMPUTE_USAGE = ("boxusage", "spotusage", "dedicatedusage", "hostusage")
_COMMITTED_TYPES = {
    "discountedusage",
    "savingsplancoveredusage",
    "rifee",
    "savingsplanrecurringfee",
}
_USAGE_TYPES = {"usage", "discountedusage", "savingsplancoveredusage", ""}


def _aws_line(r: _Row) -> BillLine:
    usage = r.get("lineItem/UsageType")
    usage_key = key(usage)
    item_type = key(r.get("lineItem/LineItemType"))
    term = key(r.get("pricing/term"))
    amount = r.number("lineItem/UnblendedCost", default=0.0)
    start = r.time("lineItem/UsageStartDate")
    end = r.time("lineItem/UsageEndDate")
    if item_type not in _USAGE_TYPES:
        kind = LineKind.OTHER
    elif any(u in usage_key for u in _COMPUTE_USAGE):
        kind = LineKind.COMPUTE
    elif "ebs:" in usage.lower():
        kind = LineKind.STORAGE
    else:
        kind = LineKind.OTHER
    if "spotusage" in usage_key or term == "spot":
        market = Market.SPOT
    elif term == "reserved" or item_type in _COMMITTED_TYPES:
        market = Market.RESERVED
    elif term == "ondemand" or "boxusage" in usage_key:
        market = Market.ON_DEMAND
    else:
        market = Market.UNKNOWN
    hours: float | None
    if kind is LineKind.COMPUTE:
        hours = values.non_negative(
            r.number("lineItem/UsageAmount"), f"{r.where}:{r.line}: lineItem/UsageAmount"
        )
    else:
        hours = _window_hours(start, end)
    zone = r.get("lineItem/AvailabilityZone")
    region = r.get("product/region", "product/regionCode") or (
        zone[:-1] if zone and zone[-1].isalpha() else zone
    )
    instance = r.get("product/instanceType") or _type_in_usage(usage, kind)
    tags = tuple(
        (name.split("/", 1)[-1] if "/" in name else name, r.row[name].strip())
        for k, name in r.names.items()
        if k.startswith("resourcetags") and r.row.get(name, "").strip()
    )
    return BillLine(
        lines=(r.line,),
        provider="aws",
        kind=kind,
        resource=r.get("lineItem/ResourceId"),
        start=start,
        end=end,
        hours=hours,
        amount_usd=amount,
        instance_type=instance,
        region=region,
        market=market,
        usage=usage,
        tags=tags,
    )


def _type_in_usage(usage: str, kind: LineKind) -> str:
    """`p4d.24xlarge` from `USE1-BoxUsage:p4d.24xlarge` (compute lines only)."""
    if kind is not LineKind.COMPUTE or ":" not in usage:
        return ""
    return usage.rsplit(":", 1)[1].strip()


def _window_hours(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None or end <= start:
        return None
    return (end - start) / timedelta(hours=1)


# ------------------------------------------------------------------------- GCP

_GCP_COMPUTE = ("gpu", "core", "ram", "instance", "vcpu")
_GCP_STORAGE = ("pd capacity", "storage", "disk", "snapshot")


def _gcp_kind(sku: str, service: str) -> LineKind:
    low = sku.lower()
    if any(s in low for s in _GCP_STORAGE):
        return LineKind.STORAGE
    if any(s in low for s in _GCP_COMPUTE) and "compute" in (service.lower() or "compute"):
        return LineKind.COMPUTE
    return LineKind.OTHER


def _gcp_market(sku: str) -> Market:
    low = sku.lower()
    if "spot" in low or "preemptible" in low:
        return Market.SPOT
    if "commitment" in low:
        return Market.RESERVED
    return Market.ON_DEMAND


def _gcp_lines(rows: list[_Row]) -> list[BillLine]:
    singles: list[BillLine] = []
    groups: dict[tuple[str, str, str, Market], list[tuple[_Row, float]]] = {}
    for r in rows:
        sku = r.get("sku.description")
        amount = r.number("cost", default=0.0)
        r.number("usage.amount", default=0.0)  # checked: a number
        kind = _gcp_kind(sku, r.get("service.description"))
        resource = r.get("resource.name", "resource.global_name")
        start, end = r.time("usage_start_time"), r.time("usage_end_time")
        if kind is LineKind.COMPUTE and start is not None and resource:
            group = (resource, start.isoformat(), end.isoformat() if end else "", _gcp_market(sku))
            groups.setdefault(group, []).append((r, amount))
            continue
        singles.append(
            BillLine(
                lines=(r.line,),
                provider="gcp",
                kind=kind,
                resource=resource,
                start=start,
                end=end,
                hours=_window_hours(start, end),
                amount_usd=amount,
                region=r.get("location.region"),
                market=_gcp_market(sku),
                usage=sku,
            )
        )
    for (resource, _, _, market), members in groups.items():
        first = members[0][0]
        start, end = first.time("usage_start_time"), first.time("usage_end_time")
        machine = next(
            (m for r, _ in members if (m := _gcp_machine(r))),
            "",
        )
        singles.append(
            BillLine(
                lines=tuple(r.line for r, _ in members),
                provider="gcp",
                kind=LineKind.COMPUTE,
                resource=resource,
                start=start,
                end=end,
                hours=_window_hours(start, end),
                amount_usd=sum(a for _, a in members),
                instance_type=machine,
                region=first.get("location.region"),
                market=market,
                usage="; ".join(dict.fromkeys(r.get("sku.description") for r, _ in members)),
            )
        )
    return sorted(singles, key=lambda b: b.lines)


def _gcp_machine(r: _Row) -> str:
    for k, name in r.names.items():
        if k.endswith(("machinespec", "machinetype")) and r.row.get(name, "").strip():
            return r.row[name].strip()
    return ""


# ------------------------------------------------------------------------- generic

_KINDS = {k.value: k for k in LineKind}
_MARKETS = {"on-demand": Market.ON_DEMAND, "ondemand": Market.ON_DEMAND, "spot": Market.SPOT,
            "reserved": Market.RESERVED, "committed": Market.RESERVED}  # fmt: skip


def _generic_line(r: _Row) -> BillLine:
    at = f"{r.where}:{r.line}"
    text = r.get("date")
    if not text:
        raise InputError(f"{at}: date is empty; give YYYY-MM-DD or an ISO time")
    start = bill_time(text, f"{at}: date")
    end_text = r.get("end")
    day_only = re.fullmatch(r"\s*\d{4}-\d{2}-\d{2}\s*", text) is not None
    end = (
        bill_time(end_text, f"{at}: end")
        if end_text
        else start + timedelta(days=1)
        if day_only
        else None
    )
    kind_text = r.get("kind").lower() or "compute"
    market_text = r.get("market").lower()
    if kind_text not in _KINDS:
        raise InputError(f"{at}: kind {kind_text!r}; give compute, storage or other")
    if market_text and market_text not in _MARKETS:
        raise InputError(f"{at}: market {market_text!r}; give on-demand, spot or reserved")
    hours = values.non_negative(r.number("hours", default=0.0), f"{at}: hours")
    return BillLine(
        lines=(r.line,),
        provider=r.get("provider").lower(),
        kind=_KINDS[kind_text],
        resource=r.get("resource"),
        start=start,
        end=end,
        hours=hours if hours > 0 or kind_text != "storage" else _window_hours(start, end),
        amount_usd=r.number("amount"),
        instance_type=r.get("instance_type"),
        region=r.get("region"),
        market=_MARKETS.get(market_text, Market.UNKNOWN),
        usage=r.get("usage") or kind_text,
    )


def read_launches(path: Path) -> dict[str, tuple[Market, str]]:
    """How each instance was bought, from a CSV `resource,market` (market: spot, on-demand or
    reserved; other columns ignored): resource -> (market, "file:line")."""
    where = files.shown(path)
    header, rows = files.csv_records(files.read_text(path, what="launches file"), where)
    names = {key(h): h for h in header}
    missing = [c for c in ("resource", "market") if c not in names]
    if missing:
        raise InputError(
            f"{where}:1: missing column(s) {', '.join(missing)}; expected resource,market "
            f"(columns seen: {','.join(header)[:120]})"
        )
    out: dict[str, tuple[Market, str]] = {}
    for line, row in rows:
        resource = row[names["resource"]].strip()
        text = row[names["market"]].strip().lower()
        if text not in _MARKETS:
            raise InputError(f"{where}:{line}: market {text!r}; give spot, on-demand or reserved")
        if resource:
            out[resource] = (_MARKETS[text], f"{where}:{line}")
    return out
