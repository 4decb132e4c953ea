"""How old a price is: reading an offer's `as_of`, and the 30-day staleness rule (issue 15).

`as_of` is an ISO date or timestamp (fetched catalogs, dated rows), a half year
("2026-H1 (approximate)": the bundled snapshot, read as the half's last day, the most
favourable reading), or words ("unknown (file modified ...)"): then the date is unknown and
the price is treated as stale, never as fresh. Pure: `now` is always passed in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime

STALE_AFTER_DAYS = 30
"""A price older than this many days gets a warning wherever it is recommended or listed."""

_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")
_HALF = re.compile(r"^(\d{4})-H([12])\b")


def price_date(as_of: str) -> date | None:
    """The day a price was taken, or None when `as_of` does not say."""
    text = as_of.strip()
    iso = _ISO.match(text)
    if iso:
        try:
            return date(int(iso[1]), int(iso[2]), int(iso[3]))
        except ValueError:
            return None
    half = _HALF.match(text)
    if half:
        year = int(half[1])
        return date(year, 6, 30) if half[2] == "1" else date(year, 12, 31)
    return None


def age_days(as_of: str, now: datetime) -> int | None:
    """Whole days from the price's day to `now` (UTC), or None when the day is unknown."""
    day = price_date(as_of)
    if day is None:
        return None
    return (now.astimezone(UTC).date() - day).days


def is_stale(as_of: str, now: datetime, days: int = STALE_AFTER_DAYS) -> bool:
    """Whether a price dated as_of is older than days days at now (unreadable: stale)."""
    age = age_days(as_of, now)
    return age is None or age > days


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceAge:
    """One source of offers as `catalog info` lists it."""

    source: str  # "bundled snapshot", "skypilot aws", "gpuhunt", ...
    as_of: str
    age_days: int | None
    offers: int
    stale: bool


def stale_price_warning(label: str, as_of: str, now: datetime) -> str | None:
    """The warning for a recommended offer whose price is older than 30 days, else None."""
    age = age_days(as_of, now)
    if age is not None and age <= STALE_AFTER_DAYS:
        return None
    how_old = (
        f"{age} days old on {now.date().isoformat()}" if age is not None else "of unknown date"
    )
    return (
        f"the price of {label} is dated {as_of!r}, {how_old} (over {STALE_AFTER_DAYS} days): "
        "check the provider's current price or run `gpurent catalog update`"
    )
