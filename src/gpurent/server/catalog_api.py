"""GET /api/gpus and GET /api/offers: the documents of `gpurent gpus --json` and `offers --json`."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

from gpurent.catalog import all_gpus
from gpurent.catalog.query import (
    GpuQuery,
    OfferQuery,
    OfferSort,
    resolve_gpu_filter,
    select_gpus,
    select_offers,
)
from gpurent.catalog.sources import load_offers
from gpurent.inputs import values as v
from gpurent.report.catalog_json import gpus_document, offers_document
from gpurent.server.params import check, items
from gpurent.userdata import now_utc

router = APIRouter(prefix="/api", tags=["catalog"])


@lru_cache(maxsize=256)
def _gpus_body(
    min_memory_gib: float | None, arch: str | None, vendor: str | None, name: str | None
) -> bytes:
    """The encoded document for these filters: the GPU table is bundled and never changes while
    the server runs, so each answer is built once (the 50-client load test, docs/benchmarks.md)."""
    query = GpuQuery(min_memory_gib=min_memory_gib, architecture=arch, vendor=vendor, name=name)
    specs = select_gpus(all_gpus(), query)
    return json.dumps(gpus_document(specs), allow_nan=False, separators=(",", ":")).encode()


@router.get(
    "/gpus",
    summary="GPU datasheet facts (as `gpurent gpus --json`)",
    response_class=Response,
    responses={200: {"content": {"application/json": {"schema": {"type": "object"}}}}},
)
async def gpus(
    min_memory: Annotated[float | None, Query(description="At least this many GiB.")] = None,
    arch: Annotated[str | None, Query(description="Architecture, e.g. Hopper.")] = None,
    vendor: Annotated[str | None, Query(description="nvidia or amd.")] = None,
    name: Annotated[str | None, Query(description="Substring of the name or an alias.")] = None,
) -> Response:
    """The GPU table filtered by the query, as `gpurent gpus --json` prints it."""
    body = _gpus_body(check(min_memory, "min_memory", v.non_negative), arch, vendor, name)
    return Response(body, media_type="application/json")


@router.get("/offers", summary="Rentable GPU instances with prices (as `gpurent offers --json`)")
def offers(  # noqa: PLR0917 - FastAPI maps parameters to query parameters
    gpu: Annotated[list[str] | None, Query(description="GPU names or aliases.")] = None,
    min_gpus: Annotated[int | None, Query(description="At least N GPUs.")] = None,
    provider: Annotated[list[str] | None, Query(description="aws, gcp, lambda, ...")] = None,
    region: Annotated[str | None, Query(description="Region substring.")] = None,
    max_price: Annotated[float | None, Query(description="Max $/h (spot $/h with spot).")] = None,
    spot: Annotated[bool, Query(description="Only offers with a spot price.")] = False,
    min_gpu_memory: Annotated[float | None, Query(description="At least GiB per GPU.")] = None,
    sort: Annotated[OfferSort, Query(description="Sort order.")] = OfferSort.PRICE,
    limit: Annotated[int, Query(description="Rows to return; 0 = all.")] = 25,
) -> dict[str, Any]:
    """The catalog's offers filtered and sorted by the query, as `gpurent offers --json`."""
    now = now_utc()
    table = load_offers(None, now=now)
    query = OfferQuery(
        gpus=resolve_gpu_filter(items(gpu), table.offers),
        min_gpus=check(min_gpus, "min_gpus", v.bounded(v.positive_int, most=v.MAX_GPUS)),
        providers=tuple(p.lower() for p in items(provider)),
        region=region,
        max_price_usd_per_hour=check(max_price, "max_price", v.non_negative),
        spot_only=spot,
        min_gpu_memory_gib=check(min_gpu_memory, "min_gpu_memory", v.non_negative),
    )
    row_limit = int(v.non_negative_int(limit, "limit"))
    matching = select_offers(table.offers, query, sort=sort)
    shown = select_offers(matching, OfferQuery(), sort=sort, limit=row_limit)
    return offers_document(table, shown, len(matching), now)
