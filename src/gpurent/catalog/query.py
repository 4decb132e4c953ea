"""Filtering and sorting offers: what `gpurent offers` does, reusable by the planner.

Pure: takes offers and a query, returns a tuple. GPU names in a query go through the spec
aliases ("H100", "h100-sxm", "A100 80GB SXM4" all work); a name the spec table does not know is
matched against the offers' raw GPU names (e.g. "RTX5090"), and is an error if nothing matches.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from gpurent.catalog.gpu import GpuSpec
from gpurent.catalog.offer import Offer
from gpurent.catalog.specs import find_gpu, known_gpu_names, normalize_name
from gpurent.errors import InputError, NotFoundError


class OfferSort(StrEnum):
    """Sort orders; missing values (no on-demand or no spot price) sort last."""

    PRICE = "price"  # instance on-demand $/h, cheapest first
    GPU_PRICE = "gpu-price"  # on-demand $/GPU-h, cheapest first
    SPOT = "spot"  # instance spot $/h, cheapest first
    GPUS = "gpus"  # GPU count, most first
    MEMORY = "memory"  # total GPU memory, most first


@dataclass(frozen=True, slots=True, kw_only=True)
class OfferQuery:
    """Conditions an offer must meet; None/empty means no condition."""

    gpus: tuple[str, ...] = ()  # canonical or raw GPU names (any of them)
    min_gpus: int | None = None
    providers: tuple[str, ...] = ()
    region: str | None = None  # substring, case-insensitive
    max_price_usd_per_hour: float | None = None  # instance on-demand (or spot with spot_only)
    spot_only: bool = False
    min_gpu_memory_gib: float | None = None  # per GPU


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuQuery:
    """Conditions a GPU spec must meet (`gpurent gpus`); None means no condition."""

    min_memory_gib: float | None = None
    architecture: str | None = None  # whole name, case-insensitive ("hopper")
    vendor: str | None = None  # "nvidia" or "amd", case-insensitive
    name: str | None = None  # substring of the name or of an alias, case-insensitive


def select_gpus(specs: Iterable[GpuSpec], query: GpuQuery) -> tuple[GpuSpec, ...]:
    """The specs meeting `query`, in the order given."""

    def keep(g: GpuSpec) -> bool:
        q = query
        return (
            (q.min_memory_gib is None or g.memory_gib >= q.min_memory_gib)
            and (q.architecture is None or g.architecture.lower() == q.architecture.lower())
            and (q.vendor is None or g.vendor.lower() == q.vendor.lower())
            and (q.name is None or any(q.name.lower() in n.lower() for n in (g.name, *g.aliases)))
        )

    return tuple(g for g in specs if keep(g))


def find_offer(key: str, offers: Iterable[Offer]) -> Offer:
    """An offer by `provider/instance/region` (case-insensitive); NotFoundError lists close keys."""
    listed = tuple(offers)
    hit = {o.key.lower(): o for o in listed}.get(key.strip().lower())
    if hit is None:
        raise NotFoundError("offer", key, [o.key for o in listed])
    return hit


def resolve_gpu_filter(names: Iterable[str], offers: Sequence[Offer]) -> tuple[str, ...]:
    """Canonical names for user-given GPU names; NotFoundError (closest names) when unknown."""
    raw = {normalize_name(o.gpu_name): o.gpu_name for o in offers}
    resolved: list[str] = []
    for name in names:
        name = name.strip()
        if not name:
            continue
        spec = find_gpu(name)
        if spec is not None:
            resolved.append(spec.name)
        elif normalize_name(name) in raw:
            resolved.append(raw[normalize_name(name)])
        else:
            raise NotFoundError("GPU", name, [*known_gpu_names(), *raw.values()])
    return tuple(resolved)


def _matches(offer: Offer, q: OfferQuery, gpu_keys: frozenset[str]) -> bool:
    if gpu_keys and normalize_name(offer.gpu_name) not in gpu_keys:
        return False
    if q.min_gpus is not None and offer.gpu_count < q.min_gpus:
        return False
    if q.providers and offer.provider not in q.providers:
        return False
    if q.region and q.region.lower() not in offer.region.lower():
        return False
    if q.spot_only and offer.spot_price_usd_per_hour is None:
        return False
    if q.min_gpu_memory_gib is not None and offer.gpu_memory_gib < q.min_gpu_memory_gib:
        return False
    if q.max_price_usd_per_hour is not None:
        price = offer.spot_price_usd_per_hour if q.spot_only else offer.price_usd_per_hour
        if price is None or price > q.max_price_usd_per_hour:
            return False
    return True


def _value(offer: Offer, sort: OfferSort) -> float | None:
    if sort is OfferSort.PRICE:
        return offer.price_usd_per_hour
    if sort is OfferSort.GPU_PRICE:
        return offer.price_usd_per_gpu_hour
    if sort is OfferSort.SPOT:
        return offer.spot_price_usd_per_hour
    if sort is OfferSort.GPUS:
        return float(offer.gpu_count)
    return offer.gpu_memory_gib * offer.gpu_count


def select_offers(
    offers: Iterable[Offer],
    query: OfferQuery,
    *,
    sort: OfferSort = OfferSort.PRICE,
    limit: int | None = None,
) -> tuple[Offer, ...]:
    """Offers meeting `query`, sorted by `sort` (ties: cheapest, then key), at most `limit`."""
    if query.min_gpus is not None and query.min_gpus < 1:
        raise InputError(f"--min-gpus must be >= 1, got {query.min_gpus}")
    if query.max_price_usd_per_hour is not None and not query.max_price_usd_per_hour > 0:
        raise InputError(f"--max-price must be > 0 $/h, got {query.max_price_usd_per_hour}")
    if limit is not None and limit < 0:
        raise InputError(f"--limit must be >= 0, got {limit}")
    gpu_keys = frozenset(normalize_name(g) for g in query.gpus)
    chosen = [o for o in offers if _matches(o, query, gpu_keys)]
    descending = sort in (OfferSort.GPUS, OfferSort.MEMORY)

    def key(o: Offer) -> tuple[bool, float, float, str]:
        value = _value(o, sort)
        missing = value is None
        v = 0.0 if value is None else (-value if descending else value)
        price = o.price_usd_per_hour if o.price_usd_per_hour is not None else math.inf
        return missing, v, price, o.key

    chosen.sort(key=key)
    return tuple(chosen[:limit] if limit else chosen)
