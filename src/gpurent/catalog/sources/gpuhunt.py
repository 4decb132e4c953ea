"""`gpurent catalog update --source gpuhunt`: offers from dstack's gpuhunt catalogs.

gpuhunt (github.com/dstackai/gpuhunt, the `gpuhunt` package, extra `catalog`) publishes one
offline catalog per provider: `<base>/<provider>/version` names the latest version and
`<base>/<provider>/<version>/catalog.zip` holds `<provider>.csv` (columns instance_name,
location, price, cpu, memory, gpu_count, gpu_name, gpu_memory, spot, disk_size, gpu_vendor, ...;
one row per instance, location and spot/on-demand). The package reads the base URL from
`$GPUHUNT_CATALOG_URL` (default: dstack's public bucket); its online providers (vastai, ...)
query the provider's API, with the user's credentials where one needs them.

Everything goes through the package: `Catalog.load()` then `Catalog.query()`. The items are
mapped to `Offer`s (spot and on-demand rows of one instance and location become one offer), dated
by the fetch time and sourced by their catalog URL and version, and stored as gpurent's plain CSV
in `<data dir>/catalog/_gpuhunt/offers.csv` with `meta.json` beside it (atomic writes; a failed
update keeps the previous files). This is an edge module (network, files, environment).
"""

from __future__ import annotations

import contextlib
import csv
import gc
import io
import json
import logging
import os
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from gpurent.catalog.offers import OfferTable, parse_offers_csv
from gpurent.catalog.sources.snapshot import catalog_dir, write_atomic
from gpurent.catalog.specs import find_gpu
from gpurent.errors import DataError, InputError, require

GPUHUNT_URL_ENV = "GPUHUNT_CATALOG_URL"
"""The package's own variable for where its offline catalogs are published."""
GPUHUNT_DIR = "_gpuhunt"  # never a cloud name (those start with a letter)
OFFERS_FILE = "offers.csv"
META_FILE = "meta.json"

PROVIDER_NAMES = {"lambdalabs": "lambda", "vastai": "vast"}
"""gpuhunt provider names that gpurent (and SkyPilot) spell differently."""

GPU_VENDORS = ("nvidia", "amd")
"""Accelerators gpurent can estimate; TPUs and others are counted as ignored rows."""

PLAIN_COLUMNS = (
    "provider",
    "instance_type",
    "gpu",
    "gpu_count",
    "gpu_memory_gib",
    "vcpus",
    "memory_gib",
    "region",
    "price_hour_usd",
    "spot_price_hour_usd",
    "spot_price_max_hour_usd",
    "currency_note",
    "source_repo",
    "source_path",
    "source_commit",
    "as_of",
)


class GpuhuntItem(Protocol):
    """The fields of a `gpuhunt.CatalogItem` that gpurent reads."""

    provider: str
    instance_name: str
    location: str
    price: float
    cpu: int
    memory: float
    gpu_count: int
    gpu_name: str | None
    gpu_memory: float | None
    spot: bool
    gpu_vendor: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuhuntMeta:
    """One gpuhunt update: where from, when, per provider the version and offer count."""

    url: str  # the offline catalogs' base URL
    fetched_at: str  # ISO-8601 UTC
    providers: dict[str, dict[str, str | int]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)  # provider -> one-line reason
    offers: int = 0
    ignored_rows: int = 0


def gpurent_provider(name: str) -> str:
    return PROVIDER_NAMES.get(name.lower(), name.lower())


def _gpu_name(raw: str, memory_gb: float | None) -> str:
    """Canonical spec name: the memory-qualified name first (A100 40 vs 80 GB), then the name."""
    if memory_gb:
        spec = find_gpu(f"{raw} {memory_gb:g}GB")
        if spec is not None:
            return spec.name
    spec = find_gpu(raw)
    return spec.name if spec else raw


def _vendor(item: GpuhuntItem) -> str:
    vendor = item.gpu_vendor
    return str(getattr(vendor, "value", vendor) or "nvidia").lower()


def items_to_rows(
    items: Iterable[GpuhuntItem], *, fetched_at: str, sources: dict[str, str]
) -> tuple[list[dict[str, str]], int]:
    """gpurent plain-CSV rows (one per instance and location) and the count of ignored items.

    `sources` maps a gpuhunt provider name to the catalog its items came from (URL + version).
    """
    groups: dict[tuple[str, str, str], list[GpuhuntItem]] = {}
    ignored = 0
    for item in items:
        if not item.gpu_count or not item.gpu_name or _vendor(item) not in GPU_VENDORS:
            ignored += 1
            continue
        key = (item.provider.lower(), item.instance_name, item.location)
        groups.setdefault(key, []).append(item)
    rows: list[dict[str, str]] = []
    for (provider, instance, location), group in sorted(groups.items()):
        first = group[0]
        on_demand = [i.price for i in group if not i.spot]
        spot = [i.price for i in group if i.spot]
        rows.append(
            {
                "provider": gpurent_provider(provider),
                "instance_type": instance,
                "gpu": _gpu_name(str(first.gpu_name), first.gpu_memory),
                "gpu_count": str(first.gpu_count),
                "gpu_memory_gib": "" if first.gpu_memory is None else f"{first.gpu_memory:g}",
                "vcpus": f"{first.cpu:g}",
                "memory_gib": f"{first.memory:g}",
                "region": location,
                "price_hour_usd": f"{min(on_demand):g}" if on_demand else "",
                "spot_price_hour_usd": f"{min(spot):g}" if spot else "",
                "spot_price_max_hour_usd": f"{max(spot):g}" if spot else "",
                "currency_note": f"USD; gpuhunt {provider} catalog",
                "source_repo": sources.get(provider, f"gpuhunt {provider}"),
                "source_path": "",
                "source_commit": "",
                "as_of": fetched_at,
            }
        )
    return rows, ignored


def rows_to_csv(rows: Sequence[dict[str, str]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=PLAIN_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


@contextlib.contextmanager
def _gpuhunt_env(url: str | None, timeout_s: float) -> Iterator[None]:
    """The package reads its URL from the environment, logs failures with tracebacks and leaves
    the sockets of failed requests to the garbage collector: point it at `url`, bound every
    socket wait, keep its log off the terminal, close what it left open, then restore."""
    import socket  # here, not at the top: loading stored offers (every plan) opens none

    saved_url = os.environ.get(GPUHUNT_URL_ENV)
    saved_timeout = socket.getdefaulttimeout()
    log = logging.getLogger("gpuhunt")
    saved_propagate = log.propagate
    quiet = logging.NullHandler()
    if url:
        os.environ[GPUHUNT_URL_ENV] = url
    socket.setdefaulttimeout(timeout_s)
    log.addHandler(quiet)
    log.propagate = False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            try:
                yield
            finally:
                gc.collect()  # the failed responses' sockets, while their warning is off
    finally:
        log.removeHandler(quiet)
        log.propagate = saved_propagate
        socket.setdefaulttimeout(saved_timeout)
        if url:
            if saved_url is None:
                os.environ.pop(GPUHUNT_URL_ENV, None)
            else:
                os.environ[GPUHUNT_URL_ENV] = saved_url


def _online_provider(name: str) -> Any:
    """An online provider object, from its credentials in the environment where it needs them."""
    import importlib

    try:
        module = importlib.import_module(f"gpuhunt.providers.{name}")
    except ImportError:
        raise InputError(f"--online: gpuhunt has no provider {name!r}") from None
    base: Any = require("gpuhunt.providers.base", "catalog")
    for value in vars(module).values():
        is_provider = isinstance(value, type) and issubclass(value, base.AbstractProvider)
        if is_provider and getattr(value, "NAME", None) == name:
            factory = getattr(value, "from_env", None) or value
            try:
                return factory()
            except Exception as exc:  # gpuhunt's MissingCredsError, a missing argument, ...
                raise InputError(
                    f"--online {name}: needs credentials ({exc}); set them as gpuhunt's "
                    f"{name} provider documents, or drop it"
                ) from None
    raise InputError(f"--online: gpuhunt has no provider {name!r}")


def fetch_gpuhunt(
    providers: Sequence[str],
    *,
    now: datetime,
    url: str | None = None,
    online: Sequence[str] = (),
    timeout_s: float = 30.0,
) -> tuple[list[dict[str, str]], GpuhuntMeta]:
    """Query gpuhunt's offline catalogs of `providers` (and `online` providers) as of `now`.

    Raises `DataError` when no provider gave an offer; the failures of the others are in the
    returned metadata.
    """
    gpuhunt: Any = require("gpuhunt", "catalog")
    internal: Any = require("gpuhunt._internal.catalog", "catalog")
    offline_known = list(internal.OFFLINE_PROVIDERS)
    online_known = list(internal.ONLINE_PROVIDERS)
    theirs = {ours: name for name, ours in PROVIDER_NAMES.items()}  # gpurent's "lambda" works
    providers = [name if name in offline_known else theirs.get(name, name) for name in providers]
    online = [name if name in online_known else theirs.get(name, name) for name in online]
    for name in providers:
        if name not in offline_known:
            raise InputError(
                f"--clouds: {name!r} is no gpuhunt offline provider; "
                f"choose from {', '.join(offline_known)}"
            )
    for name in online:
        if name not in online_known:
            raise InputError(
                f"--online: {name!r} is no gpuhunt online provider; "
                f"choose from {', '.join(online_known)}"
            )
    fetched_at = now.isoformat(timespec="seconds")
    failed: dict[str, str] = {}
    items: list[GpuhuntItem] = []
    with _gpuhunt_env(url, timeout_s):
        base = str(os.environ.get(GPUHUNT_URL_ENV) or internal.CATALOG_URL).rstrip("/")
        catalog = gpuhunt.Catalog(balance_resources=False, auto_reload=False)
        if providers:
            try:
                catalog.load()
            except Exception as exc:  # the package wraps urllib/zip errors in GPUHuntError
                cause = exc.__cause__ or exc
                raise DataError(
                    f"gpuhunt: no catalog loaded from {base} ({type(cause).__name__}: {cause}); "
                    f"check --url-base / ${GPUHUNT_URL_ENV} or the network"
                ) from None
        loaded = {p: c for p, c in catalog.catalog.items() if p in providers}
        for name in providers:
            if name not in loaded:
                failed[name] = f"no catalog at {base}/{name}/ (not published or unreachable)"
        for name in online:
            try:
                catalog.add_provider(_online_provider(name))
            except InputError as exc:
                failed[name] = exc.message
        wanted = [*loaded, *(n for n in online if n not in failed)]
        if wanted:
            try:
                items = list(catalog.query(provider=wanted))
            except Exception as exc:  # an online provider's API failing, in any way
                raise DataError(f"gpuhunt: query failed ({type(exc).__name__}: {exc})") from None
    sources = {name: f"{base}/{name}/{loaded[name].version}/catalog.zip" for name in loaded} | {
        name: f"gpuhunt online {name} (queried {fetched_at})" for name in online
    }
    rows, ignored = items_to_rows(items, fetched_at=fetched_at, sources=sources)
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["provider"]] = counts.get(row["provider"], 0) + 1
    meta = GpuhuntMeta(
        url=base,
        fetched_at=fetched_at,
        providers={
            name: {
                "version": loaded[name].version if name in loaded else "online",
                "offers": counts.get(gpurent_provider(name), 0),
                "fetched_at": fetched_at,
            }
            for name in wanted
        },
        failed=failed,
        offers=len(rows),
        ignored_rows=ignored,
    )
    if not rows:
        reasons = "; ".join(f"{k}: {v}" for k, v in failed.items()) or "no GPU offer in them"
        raise DataError(f"gpuhunt: no GPU offer fetched ({reasons}); previous catalog kept")
    return rows, meta


def gpuhunt_dir(home: Path) -> Path:
    return catalog_dir(home) / GPUHUNT_DIR


def store_gpuhunt(home: Path, rows: Sequence[dict[str, str]], meta: GpuhuntMeta) -> Path:
    """Write the offers, then the metadata (each atomically); return the offers file.

    Providers stored before and not fetched this time (not asked for, or failed) keep their
    previous rows, each still dated by its own fetch time."""
    folder = gpuhunt_dir(home)
    fetched = {gpurent_provider(name) for name in meta.providers}
    kept: list[dict[str, str]] = []
    kept_meta: dict[str, dict[str, str | int]] = {}
    previous = read_gpuhunt_meta(home)
    if previous is not None:
        text = (folder / OFFERS_FILE).read_text(encoding="utf-8")
        kept = [r for r in csv.DictReader(io.StringIO(text)) if r["provider"] not in fetched]
        still = {r["provider"] for r in kept}
        kept_meta = {
            name: info
            for name, info in previous.providers.items()
            if gpurent_provider(name) in still
        }
    merged = replace(
        meta,
        providers={**kept_meta, **meta.providers},
        offers=len(rows) + len(kept),
    )
    text = rows_to_csv([*rows, *kept])
    parse_offers_csv(text, OFFERS_FILE)  # what is stored must load
    write_atomic(folder / OFFERS_FILE, text.encode("utf-8"))
    payload = json.dumps({"format": 1, **asdict(merged)}, indent=2) + "\n"
    write_atomic(folder / META_FILE, payload.encode("utf-8"))
    return folder / OFFERS_FILE


def read_gpuhunt_meta(home: Path) -> GpuhuntMeta | None:
    """The last gpuhunt update's metadata, or None when there is none (or no offers file)."""
    folder = gpuhunt_dir(home)
    path = folder / META_FILE
    if not path.exists() or not (folder / OFFERS_FILE).exists():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return GpuhuntMeta(
            url=str(raw["url"]),
            fetched_at=str(raw["fetched_at"]),
            providers={str(k): dict(v) for k, v in raw["providers"].items()},
            failed={str(k): str(v) for k, v in raw.get("failed", {}).items()},
            offers=int(raw["offers"]),
            ignored_rows=int(raw.get("ignored_rows", 0)),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DataError(
            f"{path}: unreadable gpuhunt metadata ({exc}); run "
            f"`gpurent catalog update --source gpuhunt` again or delete {folder}"
        ) from None


def load_gpuhunt(
    home: Path, *, cache_dir: Path | None = None
) -> tuple[OfferTable, GpuhuntMeta] | None:
    """The stored gpuhunt offers with their metadata, or None when never fetched."""
    from gpurent.catalog.sources.cache import cached_table

    meta = read_gpuhunt_meta(home)
    if meta is None:
        return None
    path = gpuhunt_dir(home) / OFFERS_FILE

    def parse() -> OfferTable:
        text = path.read_text(encoding="utf-8")
        try:
            return parse_offers_csv(text, str(path), default_as_of=meta.fetched_at)
        except (DataError, csv.Error) as exc:
            raise DataError(f"{exc}; run `gpurent catalog update --source gpuhunt` again") from None

    table = cached_table(path, ("gpuhunt", meta.fetched_at), parse, cache_dir)
    return table, meta


__all__ = [
    "GPUHUNT_URL_ENV",
    "GpuhuntMeta",
    "fetch_gpuhunt",
    "items_to_rows",
    "load_gpuhunt",
    "read_gpuhunt_meta",
    "store_gpuhunt",
]
