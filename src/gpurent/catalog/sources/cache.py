"""A cache of parsed catalog files, so that a big catalog is parsed once, not on every command.

Parsing 50,000 CSV rows into offers takes most of a plan's time; reading them back from the
cache takes a fraction of it. An entry lives in `<user cache dir>/catalog/<hash of path>.bin`
and is keyed on the file's resolved path, modification time (ns) and size, the parser's inputs
(provider, price date, source), gpurent's version and the GPU spec table (offers carry resolved
GPU names), so that any change to the file or to gpurent misses and re-parses.

The file is `MAGIC <sha256 of payload>\\n` + a `marshal` payload of plain values (lists,
tuples, strings, numbers: no objects, nothing executed on load). A partial, corrupt or foreign
file fails the checksum or the key and is ignored and rebuilt; writes go to a temporary file
renamed into place (`write_atomic`), so a reader never sees half an entry.
`$GPURENT_NO_CACHE=1` turns the cache off. This is an edge module (files, environment).
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import marshal
import os
from collections import deque
from collections.abc import Callable
from dataclasses import fields
from functools import cache
from importlib import resources
from itertools import repeat
from pathlib import Path
from typing import Any

from gpurent.catalog.offer import Offer, ReservedTerm
from gpurent.catalog.offers import OfferTable, SkippedRow
from gpurent.catalog.sources.snapshot import write_atomic

NO_CACHE_ENV = "GPURENT_NO_CACHE"
CACHE_FORMAT = "2"  # 2: zones and extra stored as tuples, offers built column by column
MAGIC = b"gpurent-offers-cache"
_OFFER_FIELDS = tuple(f.name for f in fields(Offer))
_ROW_ORDER = (
    "provider",
    "instance_type",
    "region",
    "gpu_name",
    "gpu_count",
    "gpu_memory_gib",
    "vcpus",
    "memory_gib",
    "price_usd_per_hour",
    "spot_price_usd_per_hour",
    "spot_price_max_usd_per_hour",
    "zones",
    "zone_count",
    "local_disk_gb",
    "network_gbps",
    "gpu_interconnect",
    "reserved",
    "billing_granularity_s",
    "as_of",
    "source",
    "notes",
    "extra",
)
if _OFFER_FIELDS != _ROW_ORDER:  # a field added to Offer must be added to the row too
    raise RuntimeError(f"cache row order is out of date with Offer: {_OFFER_FIELDS}")
if hasattr(Offer, "__post_init__"):  # `_offers` sets the slots directly, skipping __init__
    raise RuntimeError("Offer gained a __post_init__: the cache must call it")
_RESERVED = _OFFER_FIELDS.index("reserved")
# Offer's slot descriptors: setting one writes the field as __init__ does (which, frozen, calls
# object.__setattr__ per field); applied a column at a time, all in C
_SETTERS = tuple(getattr(Offer, name).__set__ for name in _OFFER_FIELDS)


@cache
def _code_key() -> str:
    """gpurent's version and the GPU table's bytes: what else decides how a row parses."""
    from gpurent import __version__

    specs = resources.files("gpurent.catalog.data").joinpath("gpus.csv").read_bytes()
    return f"{CACHE_FORMAT}/{__version__}/{hashlib.sha256(specs).hexdigest()[:16]}"


def file_key(path: Path, params: tuple[str, ...]) -> list[str]:
    """What an entry must match: path, mtime, size, the parser's inputs and the code."""
    stat = path.stat()
    return [_code_key(), str(path.resolve()), str(stat.st_mtime_ns), str(stat.st_size), *params]


def entry_path(cache_dir: Path, path: Path) -> Path:
    """The cache file for the source file at path: a hash of its resolved path under cache_dir."""
    digest = hashlib.sha256(str(path.resolve()).encode("utf-8")).hexdigest()[:32]
    return cache_dir / f"{digest}.bin"


def _offer_row(o: Offer) -> list[Any]:
    row: list[Any] = [getattr(o, name) for name in _OFFER_FIELDS]
    row[_OFFER_FIELDS.index("zones")] = tuple(o.zones)  # marshal keeps tuples tuples
    row[_RESERVED] = [[t.term_months, t.price_usd_per_hour, t.upfront] for t in o.reserved]
    row[_OFFER_FIELDS.index("extra")] = tuple(tuple(pair) for pair in o.extra)
    return row


def _shared(rows: list[list[Any]]) -> list[list[Any]]:
    """Columns of `rows` with equal strings made one object, which marshal then writes once and
    reads back as references (catalog rows repeat provider, source, notes, dates)."""
    seen: dict[str, str] = {}
    columns = [list(col) for col in zip(*rows, strict=True)] if rows else []
    for col in columns:
        if col and isinstance(col[0], str):
            col[:] = [seen.setdefault(v, v) if isinstance(v, str) else v for v in col]
    return columns


def _encode(key: list[str], table: OfferTable) -> bytes:
    payload = marshal.dumps(
        {
            "key": key,
            "columns": _shared([_offer_row(o) for o in table.offers]),
            "skipped": [[s.file, s.line, s.reason] for s in table.skipped],
            "source": table.source,
            "age": table.age,
            "ignored_rows": table.ignored_rows,
            "notes": list(table.notes),
            "format": table.format,
        }
    )
    return MAGIC + b" " + hashlib.sha256(payload).hexdigest().encode("ascii") + b"\n" + payload


def _offers(columns: list[list[Any]]) -> list[Offer]:
    """Offers from columns in `_OFFER_FIELDS` order: each Offer is made empty and its slots are
    set one column at a time (about 3x faster than calling __init__ per row; Offer has no
    __post_init__ to skip). Reserved terms, stored as plain lists, become ReservedTerm."""
    if len(columns) != len(_SETTERS):
        raise ValueError("cache entry has the wrong number of columns")
    n = len(columns[0])
    if any(len(col) != n for col in columns):
        raise ValueError("cache entry has columns of different lengths")
    columns = list(columns)
    columns[_RESERVED] = [
        tuple(ReservedTerm(term_months=m, price_usd_per_hour=p, upfront=u) for m, p, u in terms)
        if terms
        else ()
        for terms in columns[_RESERVED]
    ]
    offers = list(map(object.__new__, repeat(Offer, n)))
    for setter, column in zip(_SETTERS, columns, strict=True):
        deque(map(setter, offers, column), maxlen=0)
    return offers


def _decode(data: bytes, key: list[str]) -> OfferTable | None:
    """The table in `data` if it is whole and was made for `key`, else None."""
    head, _, payload = data.partition(b"\n")
    if head != MAGIC + b" " + hashlib.sha256(payload).hexdigest().encode("ascii"):
        return None
    was_enabled = gc.isenabled()
    gc.disable()  # 50,000 new objects would start several full collections (~20 % of the time)
    try:
        raw = marshal.loads(payload)
        if not isinstance(raw, dict) or raw.get("key") != key:
            return None
        offers = _offers(raw["columns"]) if raw["columns"] else []
    finally:
        if was_enabled:
            gc.enable()
    return OfferTable(
        offers=tuple(offers),
        skipped=tuple(SkippedRow(file=f, line=n, reason=r) for f, n, r in raw["skipped"]),
        source=raw["source"],
        age=raw["age"],
        ignored_rows=raw["ignored_rows"],
        notes=tuple(raw["notes"]),
        format=raw["format"],
    )


def cached_table(
    path: Path,
    params: tuple[str, ...],
    parse: Callable[[], OfferTable],
    cache_dir: Path | None,
) -> OfferTable:
    """`parse()`'s table for `path`, from the cache when an entry matches, else parsed and
    stored. `cache_dir` None (or `$GPURENT_NO_CACHE=1`) parses without the cache. A cache that
    cannot be read or written is passed over: it never stops a command."""
    if cache_dir is None or os.environ.get(NO_CACHE_ENV, "") not in ("", "0"):
        return parse()
    key = file_key(path, params)
    entry = entry_path(cache_dir, path)
    try:
        table = _decode(entry.read_bytes(), key)
    except (OSError, ValueError, EOFError, TypeError, KeyError, IndexError):
        table = None
    if table is not None:
        return table
    table = parse()
    with contextlib.suppress(OSError, ValueError):  # a read-only or full cache dir
        write_atomic(entry, _encode(key, table))
    return table
