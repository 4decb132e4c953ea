"""POST /api/spot/history: hour-of-week price profiles, the forecast back-test and "is spot
cheapest on weekday evenings?", the document of `gpurent spot history --json`. The price
history files (AWS describe-spot-price-history JSON or archive TSV; not .zst, which is binary)
and the availability traces come in the body; the traces' per-tick prices as `prices` (the
JSON text of the `--prices` file)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from gpurent.inputs import values as v
from gpurent.server.params import required
from gpurent.server.spot_api import MAX_TRACES, TraceFile
from gpurent.server.uploads import MAX_FILES, SentFile, unfoldered, written

router = APIRouter(prefix="/api", tags=["spot"])
PRICES_FILE = "prices.json"  # where the `prices` text is written beside the traces
HISTORY_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}\.(json|tsv)$"


class HistoryFile(BaseModel):
    """One price history file: its name and its text."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(..., pattern=HISTORY_NAME, description="e.g. 2022-05.tsv or aws.json")
    content: str = Field(..., description="AWS describe-spot-price-history JSON or archive TSV.")


class HistoryRequest(BaseModel):
    """What `gpurent spot history` takes, by the same names (files in the body)."""

    model_config = ConfigDict(extra="forbid")

    files: list[HistoryFile] = Field([], max_length=MAX_FILES, description="Price histories.")
    trace: list[TraceFile] = Field(
        [], max_length=MAX_TRACES, description="Availability traces (add the profile)."
    )
    prices: str | None = Field(None, description="JSON zone -> per-tick prices for the traces.")
    zone: list[str] = Field([], max_length=100, description="Keep only these zones.")
    instance_type: list[str] = Field([], max_length=100, description="Keep only these types.")
    product: str = Field("Linux/UNIX", max_length=200, description="Product to keep, or 'all'.")
    utc_offset: int = Field(0, description="Local time = UTC + this many hours.")
    evening: str = Field("17-22", max_length=20, description="Evening hours START-END, local.")
    horizon: int = Field(1, description="Forecast horizon, hours.")


@router.post(
    "/spot/history",
    summary="Spot price history: profiles, back-test, evenings (as `gpurent spot history --json`)",
)
def spot_history(req: HistoryRequest) -> Any:
    """The history report of the files and traces sent."""
    from gpurent.errors import InputError
    from gpurent.report.jsonable import to_jsonable
    from gpurent.spot.history_report import history_from_files
    from gpurent.spot.io.trace_io import attach_prices, load_traces

    utc_offset = required(req.utc_offset, "utc_offset", v.bounded(v.integer, least=-12, most=14))
    horizon = required(req.horizon, "horizon", v.bounded(v.positive_int, most=24 * 365))
    if req.prices is not None and not req.trace:
        raise InputError("prices are the traces' per-tick prices: give trace files with them")
    sent = [SentFile(name=f.name, content=f.content) for f in req.files]
    sent += [SentFile(name=f"trace/{t.name}", content=t.content) for t in req.trace]
    if req.prices is not None:
        sent.append(SentFile(name=PRICES_FILE, content=req.prices))
    with written(sent) as folder:
        traces, _ = load_traces([folder / "trace" / t.name for t in req.trace])
        if req.prices is not None:
            traces = attach_prices(traces, folder / PRICES_FILE)
        report = history_from_files(
            [folder / f.name for f in req.files],
            traces,
            zones=tuple(req.zone),
            instance_types=tuple(req.instance_type),
            product=req.product,
            utc_offset_hours=utc_offset,
            evening=req.evening,
            horizon_h=horizon,
        )
        return unfoldered(to_jsonable(report), folder)
