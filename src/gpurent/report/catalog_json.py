"""The `gpurent gpus --json` and `gpurent offers --json` documents (the API returns the same)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from gpurent.catalog.freshness import age_days, is_stale
from gpurent.catalog.gpu import GpuSpec
from gpurent.catalog.offer import Offer
from gpurent.catalog.offers import OfferTable
from gpurent.report.jsonable import to_jsonable


def gpu_row(g: GpuSpec) -> dict[str, Any]:
    """One GPU's datasheet facts, as `gpurent gpus show NAME --json` prints them."""
    return {**to_jsonable(g), "has_nvlink": g.has_nvlink}


def gpus_document(specs: Sequence[GpuSpec]) -> dict[str, Any]:
    """The GPU list as a JSON-ready dict: the count and one row per GPU."""
    return {"count": len(specs), "gpus": [gpu_row(g) for g in specs]}


def offer_row(o: Offer, now: datetime) -> dict[str, Any]:
    """One offer with its key, per-GPU prices and the age of its price on `now`."""
    return {
        **to_jsonable(o),
        "key": o.key,
        "price_usd_per_gpu_hour": o.price_usd_per_gpu_hour,
        "spot_price_usd_per_gpu_hour": o.spot_price_usd_per_gpu_hour,
        "price_age_days": age_days(o.as_of, now),
        "price_stale": is_stale(o.as_of, now),
    }


def offers_document(
    table: OfferTable, shown: Sequence[Offer], matching: int, now: datetime
) -> dict[str, Any]:
    """The offers shown (after the limit) out of `matching`, with where and how old prices are."""
    doc = {
        "age": table.age,
        "as_of": sorted({o.as_of for o in shown}),
        "source": table.source,
        "count": len(shown),
        "matching": matching,
        "offers": [offer_row(o, now) for o in shown],
    }
    return dict(to_jsonable(doc))
