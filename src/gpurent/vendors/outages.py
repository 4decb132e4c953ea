"""Where outages come from: an outage log (CSV), the monitor's recorded samples, and the SLA
terms (TOML). Every problem is one InputError line naming the file, the line and the field.

Outage log: CSV `start,end,resource,reason`, times in ISO 8601 with an offset (`Z`,
`+01:00`) or epoch seconds; a time without an offset is refused (a contract needs the zone).

Recorded samples (`gpurent monitor --record` store, or a CSV/JSON-lines samples file): a GPU
lost or an unhealthy Xid (any but the application Xids 13, 31, 43, 45, 68) marks the time from
that sample to the next as down for that GPU; a gap between samples longer than `gap_s` (the
monitor or the host was not answering) marks the gap as the host down.

Terms: TOML with `[[tier]]` tables (`below_pct`, `credit_pct`), optional `name`,
`monthly_bill_usd` and `excluded_reasons` (a list of outage reasons that do not count).
"""

from __future__ import annotations

import itertools
import stat
import statistics
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gpurent.errors import DataError, InputError
from gpurent.inputs import files, values
from gpurent.inputs.times import is_number, parse_time
from gpurent.monitor.sample import Sample
from gpurent.nvml import is_application_xid
from gpurent.vendors.sla import Outage, SlaTerms, Tier

OUTAGE_COLUMNS = ("start", "end", "resource", "reason")
# Times outside these years are refused: a month is counted in any time zone, and the month
# after December 9999 or before January 1 has no datetime.
FIRST_YEAR, LAST_YEAR = 1971, 9998
_TERMS_KEYS = {"name", "tier", "monthly_bill_usd", "excluded_reasons"}
_TIER_KEYS = {"below_pct", "credit_pct"}


def aware_time(cell: str, where: str) -> datetime:
    """An ISO 8601 time with an offset, or epoch seconds; one InputError line otherwise."""
    text = cell.strip()
    if not text:
        raise InputError(f"{where} is empty; give an ISO time with an offset")
    try:
        t = parse_time(text, where)
    except DataError as exc:
        raise InputError(exc.message) from None
    if not is_number(text):
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
        if parsed.tzinfo is None:
            raise InputError(
                f"{where}: {text!r} has no time zone offset; write it as {text}Z (UTC) or "
                f"{text}+01:00"
            )
    try:
        year = t.astimezone(UTC).year
    except OverflowError:
        year = 0
    if not FIRST_YEAR <= year <= LAST_YEAR:
        raise InputError(f"{where}: {text!r} is not a time between {FIRST_YEAR} and {LAST_YEAR}")
    return t


def read_outages(path: Path) -> tuple[Outage, ...]:
    """The outages of a CSV log `start,end,resource,reason` (other columns ignored)."""
    where = files.shown(path)
    text = files.read_text(path, what="outage log")
    header, rows = files.csv_records(text, where)
    if not header:
        raise InputError(f"{where}: empty file; expected a CSV header {','.join(OUTAGE_COLUMNS)}")
    missing = [c for c in OUTAGE_COLUMNS[:2] if c not in header]
    if missing:
        raise InputError(
            f"{where}:1: missing column(s) {', '.join(missing)}; expected "
            f"{','.join(OUTAGE_COLUMNS)}, got {','.join(header)[:120]}"
        )
    out: list[Outage] = []
    for line, row in rows:
        start = aware_time(row["start"], f"{where}:{line}: start")
        end = aware_time(row["end"], f"{where}:{line}: end")
        if end <= start:
            raise InputError(
                f"{where}:{line}: end {row['end'].strip()} is not after start "
                f"{row['start'].strip()}; swap them or fix the row"
            )
        out.append(
            Outage(
                start=start,
                end=end,
                resource=(row.get("resource") or "").strip() or "service",
                reason=(row.get("reason") or "").strip(),
                evidence=f"{where}:{line}",
            )
        )
    return tuple(out)


def read_terms(path: Path) -> SlaTerms:
    """SLA terms from TOML: `[[tier]] below_pct = 99.9  credit_pct = 10` (one or more)."""
    where = files.shown(path)
    doc = files.parse_toml(
        files.read_text(path, limit_bytes=files.MAX_CONFIG_BYTES, what="SLA terms"), where
    )
    unknown = sorted(set(doc) - _TERMS_KEYS)
    if unknown:
        raise InputError(
            f"{where}: unknown key {unknown[0]!r}; expected {', '.join(sorted(_TERMS_KEYS))}"
        )
    raw_tiers = doc.get("tier")
    if not isinstance(raw_tiers, list) or not raw_tiers:
        raise InputError(
            f"{where}: no [[tier]] tables; add at least one, e.g. [[tier]] below_pct = 99.9 "
            "credit_pct = 10"
        )
    tiers: list[Tier] = []
    for i, raw in enumerate(raw_tiers, start=1):
        at = f"{where}: tier {i}"
        if not isinstance(raw, dict):
            raise InputError(f"{at} must be a table with below_pct and credit_pct")
        extra = sorted(set(raw) - _TIER_KEYS)
        if extra:
            raise InputError(f"{at}: unknown key {extra[0]!r}; expected below_pct, credit_pct")
        for key in sorted(_TIER_KEYS - set(raw)):
            raise InputError(f"{at}: missing {key}")
        below = values.percent(raw["below_pct"], f"{at}: below_pct")
        if below == 0:
            raise InputError(f"{at}: below_pct must be > 0 (availability is never below 0%)")
        tiers.append(
            Tier(below_pct=below, credit_pct=values.percent(raw["credit_pct"], f"{at}: credit_pct"))
        )
    thresholds = [t.below_pct for t in tiers]
    if len(set(thresholds)) != len(thresholds):
        raise InputError(f"{where}: two tiers have the same below_pct; merge them")
    bill = doc.get("monthly_bill_usd")
    reasons = doc.get("excluded_reasons", [])
    if not isinstance(reasons, list) or not all(isinstance(r, str) for r in reasons):
        raise InputError(
            f'{where}: excluded_reasons must be a list of strings, e.g. ["maintenance"]'
        )
    name = doc.get("name", "")
    if not isinstance(name, str):
        raise InputError(f"{where}: name must be a string")
    return SlaTerms(
        tiers=tuple(sorted(tiers, key=lambda t: -t.below_pct)),
        name=name,
        monthly_bill_usd=(
            None if bill is None else values.non_negative(bill, f"{where}: monthly_bill_usd")
        ),
        excluded_reasons=tuple(r.strip().lower() for r in reasons),
        source=where,
    )


# ------------------------------------------------------------------ monitor samples


def load_samples(target: str) -> list[Sample]:
    """Samples from a monitor store (SQLite file or SQLAlchemy URL) or a recorded CSV /
    JSON-lines file; errors name the target."""
    from gpurent.monitor.sample_files import read_samples

    if "://" not in target:
        path = Path(target).expanduser()
        if not head_is_sqlite(path):
            try:
                return read_samples(path)
            except DataError as exc:
                raise InputError(exc.message) from None
    return _store_samples(target)


def head_is_sqlite(path: Path) -> bool:
    """Whether a regular file starts with SQLite's header (read 16 bytes, whatever its size);
    a path that is no regular file is the one-line error `files.read_bytes` gives."""
    try:
        regular = stat.S_ISREG(path.stat().st_mode)
    except OSError:
        regular = False
    if not regular:
        files.read_bytes(path, what="samples")  # raises the one-line error for this path
        return False
    try:
        with path.open("rb") as fh:
            return fh.read(16).startswith(b"SQLite format 3")
    except OSError as exc:
        raise InputError(files.os_error_message(exc, path)) from None


def _store_samples(target: str) -> list[Sample]:
    from gpurent.errors import require

    sa: Any = require("sqlalchemy", "monitor")
    from gpurent.monitor.sample import from_rows
    from gpurent.store import open_engine, select_rows

    engine = open_engine(target, read_only=True)
    try:
        with engine.connect() as conn:
            rows = select_rows(conn)
    except sa.exc.SQLAlchemyError as exc:
        raise InputError(
            f"{files.shown(target)}: not a gpurent monitor store ({str(exc).splitlines()[0]})"
        ) from None
    finally:
        engine.dispose()
    if not rows:
        raise InputError(f"{files.shown(target)}: no samples in the store")
    return from_rows(rows)


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).isoformat().replace("+00:00", "Z")


def typical_interval_s(samples: Sequence[Sample]) -> float | None:
    """The median time between consecutive samples (None with fewer than two)."""
    gaps = [b.timestamp_s - a.timestamp_s for a, b in itertools.pairwise(samples)]
    gaps = [g for g in gaps if g > 0]
    return statistics.median(gaps) if gaps else None


def sample_outages(
    samples: Sequence[Sample], where: str, *, gap_s: float | None = None
) -> tuple[Outage, ...]:
    """Outages the samples show: a lost GPU or an unhealthy Xid (down from that sample to the
    next, per GPU), and gaps longer than `gap_s` (default: 3 typical intervals, at least 60 s)
    with no sample at all (the host down). Consecutive down samples of one GPU join."""
    ordered = sorted(samples, key=lambda s: s.timestamp_s)
    lowest = datetime(FIRST_YEAR, 1, 1, tzinfo=UTC).timestamp()
    highest = datetime(LAST_YEAR, 12, 31, tzinfo=UTC).timestamp()
    for s in (ordered[0], ordered[-1]) if ordered else ():
        if not lowest <= s.timestamp_s <= highest:
            raise InputError(
                f"{where}: a sample's timestamp {s.timestamp_s:g} is not a time between "
                f"{FIRST_YEAR} and {LAST_YEAR} (Unix seconds)"
            )
    interval = typical_interval_s(ordered)
    limit = gap_s if gap_s is not None else max(60.0, 3 * (interval or 0.0))
    step = interval if interval is not None else limit
    spans: list[tuple[float, float, str, str]] = []
    for i, sample in enumerate(ordered):
        following = ordered[i + 1].timestamp_s if i + 1 < len(ordered) else None
        gap = following is not None and following - sample.timestamp_s > limit
        until = following if following is not None and not gap else sample.timestamp_s + step
        for gpu in sample.gpus:
            bad = [x for x in gpu.xids if not is_application_xid(x)]
            if gpu.lost or bad:
                reason = "GPU lost" if gpu.lost else f"Xid {' '.join(str(x) for x in bad)}"
                spans.append((sample.timestamp_s, until, f"gpu {gpu.index}", reason))
        if gap and following is not None:
            spans.append((sample.timestamp_s, following, "host", "no samples (host down)"))
    return tuple(_join(spans, where))


def _join(spans: list[tuple[float, float, str, str]], where: str) -> list[Outage]:
    """Join each resource's back-to-back spans with the same reason into one outage."""
    out: list[Outage] = []
    open_: dict[tuple[str, str], list[float]] = {}
    for start, end, resource, reason in sorted(spans):
        key = (resource, reason)
        current = open_.get(key)
        if current is not None and start <= current[1]:
            current[1] = max(current[1], end)
            continue
        if current is not None:
            out.append(_outage(current, key, where))
        open_[key] = [start, end]
    out.extend(_outage(span, key, where) for key, span in open_.items())
    return sorted(out, key=lambda o: (o.start, o.resource))


def _outage(span: list[float], key: tuple[str, str], where: str) -> Outage:
    return Outage(
        start=datetime.fromtimestamp(span[0], tz=UTC),
        end=datetime.fromtimestamp(span[1], tz=UTC),
        resource=key[0],
        reason=key[1],
        evidence=f"{where}: samples {_iso(span[0])} to {_iso(span[1])}",
    )
