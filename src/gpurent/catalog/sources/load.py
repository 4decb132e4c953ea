"""The one entry point to offers: `load_offers(path=None)`.

- With a path: read that file, detecting its format by header (SkyPilot `vms.csv` or gpurent's
  plain CSV). SkyPilot files are attributed to the cloud named by their folder or file name
  (`gcp/vms.csv`, `aws.csv`, `runpod-vms.csv`), else to `provider`.
- Without: the clouds fetched by `gpurent catalog update` (prices dated by their fetch time), plus
  the bundled snapshot for every provider not fetched. Never fetched: the bundled snapshot.

The returned `OfferTable.age` says in words how old the prices are; every command that prints
prices shows it. This is an edge module (reads files and, by default, the user data dir).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

from gpurent.catalog.offer import Offer
from gpurent.catalog.offers import (
    BUNDLED_AGE,
    OfferTable,
    SkippedRow,
    bundled_table,
    parse_offers_csv,
)
from gpurent.catalog.sources.cache import cached_table
from gpurent.catalog.sources.gpuhunt import load_gpuhunt
from gpurent.catalog.sources.snapshot import CloudMeta, cloud_file, read_meta
from gpurent.errors import DataError
from gpurent.inputs import files
from gpurent.userdata import cache_home, data_home

KNOWN_CLOUDS = (
    "aws",
    "azure",
    "gcp",
    "lambda",
    "runpod",
    "nebius",
    "oci",
    "vast",
    "verda",
    "shadeform",
    "cudo",
    "fluidstack",
    "paperspace",
    "hyperstack",
    "kubernetes",
    "do",
    "ibm",
    "scp",
    "vsphere",
)


def detect_format(text: str, file: str) -> str:
    """'skypilot' or 'plain' from the header line; DataError naming both formats otherwise."""
    header = {h.strip() for h in next(csv.reader(io.StringIO(text)), [])}
    if {"InstanceType", "AcceleratorName"} <= header:
        return "skypilot"
    if {"provider", "instance_type", "gpu"} <= header:
        return "plain"
    shown = ", ".join(sorted(header)[:6]) or "nothing"
    raise DataError(
        f"{file}: unknown catalog format (header has {shown}); expected a SkyPilot vms.csv "
        "(InstanceType, AcceleratorName, ...) or gpurent's plain CSV (provider, instance_type, "
        "gpu, gpu_count, ...)"
    )


def infer_provider(path: Path) -> str | None:
    """The cloud a SkyPilot file belongs to, from its folder or file name; None if unclear."""
    if path.parent.name.lower() in KNOWN_CLOUDS:
        return path.parent.name.lower()
    stem = path.stem.lower()
    for cloud in KNOWN_CLOUDS:
        if stem == cloud or stem.startswith((f"{cloud}-", f"{cloud}_", f"{cloud}.")):
            return cloud
    return None


def parse_catalog_text(
    text: str, file: str, *, provider: str | None, as_of: str, age: str
) -> OfferTable:
    """Parse a catalog file of either format (detected by header)."""
    if detect_format(text, file) == "plain":
        return parse_offers_csv(text, file, age=age, default_as_of=as_of)
    from gpurent.catalog.sources.skypilot import parse_skypilot_csv  # only SkyPilot files need it

    return parse_skypilot_csv(
        text, file, provider=provider or "unknown", as_of=as_of, source=file, age=age
    )


def default_cache_dir() -> Path:
    """Where parsed catalog files are cached (`sources/cache.py`)."""
    return cache_home() / "catalog"


def load_file(
    path: Path, *, provider: str | None = None, cache_dir: Path | None = None
) -> OfferTable:
    """Offers from one catalog file. Its prices are dated by the file's modification day.

    With `cache_dir`, a parse of the same file (path, mtime, size) is read back from there."""
    # read (a regular file under the size limit, or one line saying why not) but decoded only
    # on a cache miss: decoding 50,000 rows of UTF-8 is a tenth of a cached load
    data = files.read_bytes(path, what="catalog file", error=DataError)
    modified = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC).date().isoformat()
    age = f"from {path.name} (price date unknown; file modified {modified})"
    cloud = provider or infer_provider(path)

    def parse() -> OfferTable:
        try:
            return parse_catalog_text(
                files.decode_utf8(data, files.shown(path), error=DataError),
                str(path),
                provider=cloud,
                as_of=f"unknown (file modified {modified})",
                age=age,
            )
        except csv.Error as exc:  # e.g. a field over the csv module's size limit
            raise DataError(f"{files.shown(path)}: unreadable CSV ({exc})") from None

    return cached_table(path, ("file", cloud or "", str(path)), parse, cache_dir)


def fetched_age(fetched_at: dict[str, str], now: datetime | None = None) -> str:
    """'fetched 2026-11-30 10:00 UTC (aws, gcp)' from {name: ISO fetch time}, the oldest fetch,
    with days ago if `now`."""
    if not fetched_at:
        return ""
    oldest = min(datetime.fromisoformat(t) for t in fetched_at.values())
    when = oldest.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    ago = ""
    if now is not None:
        days = (now - oldest).total_seconds() / 86400
        ago = ", today" if days < 1 else f", {days:.0f} days ago"
    return f"fetched {when}{ago} ({', '.join(sorted(fetched_at))})"


def _fetch_times(offers: Sequence[Offer], default: str) -> dict[str, datetime]:
    """Per provider, the oldest fetch time of its gpuhunt offers (their `as_of`, ISO)."""
    out: dict[str, datetime] = {}
    for o in offers:
        try:
            when = datetime.fromisoformat(o.as_of or default)
        except ValueError:
            continue
        if o.provider not in out or when < out[o.provider]:
            out[o.provider] = when
    return out


def _bundled(cache_dir: Path | None) -> OfferTable:
    """The bundled snapshot (`bundled_table`), read back from the parsed-file cache when its
    CSV is a plain file (an installed package): parsing its 915 rows is a tenth of a plan."""
    csv_file = resources.files("gpurent.catalog.data").joinpath("offers.csv")
    if cache_dir is None or not isinstance(csv_file, Path):
        return bundled_table()
    return cached_table(csv_file, ("bundled",), bundled_table, cache_dir)


def load_offers(
    path: Path | None = None,
    *,
    provider: str | None = None,
    home: Path | None = None,
    now: datetime | None = None,
    use_cache: bool = True,
) -> OfferTable:
    """Offers from `path`, else the user's fetched catalogs + bundled snapshot, else bundled.

    `home` defaults to `gpurent.userdata.data_home()`; `now` only adds "N days ago" to the age.
    Parsed files are cached in the user cache dir (`use_cache=False`: parse every time).
    Raises `DataError` for an unusable file (no usable row, unknown format, bad metadata).
    """
    cache_dir = default_cache_dir() if use_cache else None
    if path is not None:
        return load_file(path, provider=provider, cache_dir=cache_dir)
    home = data_home() if home is None else home
    metas = read_meta(home)
    hunt = load_gpuhunt(home, cache_dir=cache_dir)
    bundled = _bundled(cache_dir)
    if not metas and hunt is None:
        return bundled
    hunt_offers: list[Offer] = []
    if hunt is not None:  # per provider, the newer fetch wins
        hunt_table, hunt_meta = hunt
        hunt_at = _fetch_times(hunt_table.offers, hunt_meta.fetched_at)
        metas = {
            c: m
            for c, m in metas.items()
            if c not in hunt_at or datetime.fromisoformat(m.fetched_at) > hunt_at[c]
        }
        hunt_offers = [o for o in hunt_table.offers if o.provider not in metas]
    offers: list[Offer] = []
    skipped: list[SkippedRow] = []
    notes: list[str] = []
    ignored = 0
    for cloud, meta in sorted(metas.items()):
        file = cloud_file(home, cloud)

        def parse(file: Path = file, cloud: str = cloud, meta: CloudMeta = meta) -> OfferTable:
            from gpurent.catalog.sources.skypilot import parse_skypilot_csv

            return parse_skypilot_csv(
                file.read_text(encoding="utf-8"),
                str(file),
                provider=cloud,
                as_of=meta.fetched_at,
                source=meta.url,
            )

        params = ("skypilot", cloud, meta.fetched_at, meta.url)
        table = cached_table(file, params, parse, cache_dir)
        offers.extend(table.offers)
        skipped.extend(table.skipped)
        notes.extend(f"{cloud}: {n}" for n in table.notes)
        ignored += table.ignored_rows
    fetched = {o.provider for o in (*offers, *hunt_offers)}
    rest = [o for o in bundled.offers if o.provider not in fetched]
    parts = [fetched_age({c: m.fetched_at for c, m in metas.items()}, now)] if metas else []
    if hunt_offers:
        times = _fetch_times(hunt_offers, "")
        parts.append("gpuhunt " + fetched_age({p: t.isoformat() for p, t in times.items()}, now))
    age = "; ".join(parts)
    if rest:
        others = sorted({o.provider for o in rest})
        age += f"; {', '.join(others)}: {BUNDLED_AGE}"
    where = str(home / "catalog")
    return OfferTable(
        offers=(*offers, *hunt_offers, *rest),
        skipped=tuple(skipped),
        source=f"{where} + bundled snapshot" if rest else where,
        age=age,
        ignored_rows=ignored,
        notes=tuple(notes),
    )
