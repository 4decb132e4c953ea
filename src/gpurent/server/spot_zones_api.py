"""POST /api/spot/zones: which zones to spread a spot job over, the document of
`gpurent spot zones --json`: from availability traces sent in the body (one per zone, as the
command's trace files), or, without traces, the zones of one instance type ranked by the spot
signals stored with `gpurent spot signals import`."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from gpurent.inputs import values as v
from gpurent.server.params import check, items, required
from gpurent.server.spot_api import MAX_TRACES, TraceFile
from gpurent.server.uploads import SentFile, written

router = APIRouter(prefix="/api", tags=["spot"])


class ZonesRequest(BaseModel):
    """What `gpurent spot zones` takes, by the same names (trace files in the body)."""

    model_config = ConfigDict(extra="forbid")

    traces: list[TraceFile] = Field(
        [], max_length=MAX_TRACES, description="One trace per zone; none: rank stored signals."
    )
    size: int | None = Field(None, description="Zones to spread over [min(3, zones given)].")
    nodes: int = Field(1, description="Instances needed at once (all-or-none).")
    top: int = Field(5, description="How many best subsets to list.")
    instance: str | None = Field(None, max_length=200, description="Without traces: the type.")
    provider: str | None = Field(None, max_length=200, description="Without traces: only its.")
    regions: list[str] = Field([], max_length=100, description="Without traces: only these.")
    offer: str | None = Field(None, max_length=300, description="provider/instance/region $/h.")
    prices: str | None = Field(None, max_length=200, description="spot=USD,ondemand=USD.")


@router.post(
    "/spot/zones",
    summary="Zones to spread a spot job over (as `gpurent spot zones --json`)",
)
def spot_zones(req: ZonesRequest) -> Any:
    """The zone report and try order from traces, or the stored signals' ranking."""
    from gpurent.plan.signal_store import rank_stored_zones
    from gpurent.plan.spot_prices import choose_prices
    from gpurent.report.jsonable import to_jsonable
    from gpurent.report.spot_zones import signal_zones_document, zones_document
    from gpurent.spot.analytics.zones import analyse_zones
    from gpurent.spot.io.trace_io import load_traces
    from gpurent.userdata import now_utc

    size = check(req.size, "size", v.bounded(v.positive_int, most=64))
    nodes = required(req.nodes, "nodes", v.bounded(v.positive_int, most=v.MAX_NODES))
    top = required(req.top, "top", v.bounded(v.positive_int, most=v.MAX_TOP))
    prices = choose_prices(req.offer, req.prices)
    if not req.traces:
        ranking = rank_stored_zones(req.instance, req.offer, req.provider, items(req.regions))
        return to_jsonable(signal_zones_document(ranking, prices, now_utc()))
    sent = [SentFile(name=t.name, content=t.content) for t in req.traces]
    with written(sent) as folder:
        traces, _ = load_traces([folder / t.name for t in req.traces])
        report = analyse_zones(traces, set_size=size, nodes=nodes, top=top)
    return to_jsonable(zones_document(report, prices))
