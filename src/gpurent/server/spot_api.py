"""POST /api/spot/simulate: replay availability traces with a deadline policy, the document of
`gpurent spot simulate --json`. The traces come in the body (each a file name and its text, in
the formats `--trace` reads); they are written to a private temporary folder for the readers
and removed after. The body's size is bounded by the server's request limit."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from gpurent.errors import GpurentError, InputError
from gpurent.inputs import values as v
from gpurent.server.params import check, required

router = APIRouter(prefix="/api", tags=["spot"])
MAX_TRACES = 64
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}\.(csv|json)$"


class TraceFile(BaseModel):
    """One trace file: its name (the zone's name is its stem) and its content."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(..., pattern=NAME_PATTERN, description="e.g. us-east-1a.csv")
    content: str = Field(..., description="CBL JSON, date,availability CSV or probe CSV.")


class SimulateRequest(BaseModel):
    """What `gpurent spot simulate` takes as flags, by the same names (traces in the body)."""

    model_config = ConfigDict(extra="forbid")

    traces: list[TraceFile] = Field(..., min_length=1, max_length=MAX_TRACES)
    job_hours: float = Field(..., description="Compute hours the job needs (C).")
    deadline_hours: float = Field(..., description="Hours from start to deadline (R).")
    changeover_hours: float = Field(0.1, description="Hours lost per instance switch (d).")
    policy: str = Field("auto", max_length=100, description="auto, greedy, ..., optimal, all.")
    price_ratio: float | None = Field(None, description="On-demand / spot price k.")
    on_demand_price: float | None = Field(None, description="On-demand $/h (trace prices).")
    nodes: int = Field(1, description="Instances the job needs (all-or-none).")
    node_traces: bool = Field(False, description="The traces are one zone's per-node traces.")
    starts: int = Field(100, description="Runs, spread over the trace.")
    vs_optimal: bool = Field(False, description="Also the hindsight optimum and the gap.")


@router.post(
    "/spot/simulate",
    summary="Replay spot traces with a deadline policy (as `gpurent spot simulate --json`)",
)
def spot_simulate(req: SimulateRequest) -> Any:
    """The traces replayed under the policies: the document of `gpurent spot simulate --json`."""
    from gpurent.report.jsonable import to_jsonable
    from gpurent.spot.sim.evaluate import run_policy
    from gpurent.spot.sim.job_market import JobSpec, run_starts
    from gpurent.spot.sim.policies import resolve
    from gpurent.spot.sim.simulate_doc import (
        load_market,
        money_for,
        policy_names,
        simulate_document,
    )

    names = [t.name for t in req.traces]
    if len(set(names)) != len(names):
        raise InputError("traces: two traces have the same name; give each zone its own name")
    key = resolve(req.policy)
    job = JobSpec(
        job_hours=required(req.job_hours, "job_hours", v.bounded(v.positive, most=v.MAX_HOURS)),
        deadline_hours=required(
            req.deadline_hours, "deadline_hours", v.bounded(v.positive, most=v.MAX_HOURS)
        ),
        changeover_hours=required(
            req.changeover_hours, "changeover_hours", v.bounded(v.non_negative, most=v.MAX_HOURS)
        ),
        nodes=required(req.nodes, "nodes", v.bounded(v.positive_int, most=v.MAX_NODES)),
    )
    ratio = check(req.price_ratio, "price_ratio", v.bounded(v.positive, most=1e6))
    on_demand = check(req.on_demand_price, "on_demand_price", v.positive)
    starts = required(req.starts, "starts", v.bounded(v.positive_int, most=v.MAX_STARTS))
    with tempfile.TemporaryDirectory(prefix="gpurent-serve-") as folder:
        paths = [Path(folder) / t.name for t in req.traces]
        for path, t in zip(paths, req.traces, strict=True):
            path.write_text(t.content, encoding="utf-8")
        try:
            market, _ = load_market(
                paths, None, job.nodes, ratio, on_demand, node_traces=req.node_traces
            )
        except GpurentError as exc:  # the reader names the file: drop the private folder
            exc.message = exc.message.replace(folder + "/", "")
            raise
    start_ticks = run_starts(market, job, starts)
    summaries = {
        name: run_policy(name, market, job, start_ticks)
        for name in policy_names(key, vs_optimal=req.vs_optimal)
    }
    money = money_for(None, market, ratio)
    doc = simulate_document(summaries, market, job, money, key=key, vs_optimal=req.vs_optimal)
    return to_jsonable(doc)
