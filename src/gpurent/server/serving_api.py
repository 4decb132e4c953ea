"""Serving over HTTP: POST /api/estimate/serve (one model on one GPU layout, the document of
`gpurent estimate --serve NAME --json`) and POST /api/plan/serve (the cheapest fleet meeting
the SLOs, the document of `gpurent plan --serve --json`; `POST /api/plan` with
`"scenario": "inference"` answers with it too, as `plan --scenario inference` does). The
serving workload is a preset or a zoo model, with the CLI's `--set KEY=VALUE` fields; nothing
names a file on the server (a length `histogram FILE` is refused; the traffic profile is sent
as its CSV text)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from gpurent.errors import InputError
from gpurent.inputs import values as v
from gpurent.plan.constraints import DEFAULT_TOP_N
from gpurent.server.params import check, items, required
from gpurent.server.replies import error_reply

router = APIRouter(prefix="/api", tags=["serving"])
NAME = 200
LENGTH_FIELDS = ("prompt_tokens", "output_tokens")


class ServeEstimateRequest(BaseModel):
    """`gpurent estimate --serve NAME`'s flags, by the same names."""

    model_config = ConfigDict(extra="forbid")

    serve: str = Field(..., max_length=NAME, description="A serving preset or a zoo model.")
    gpu: str = Field(..., max_length=NAME, description="A GPU name or alias, e.g. H100.")
    gpus: int = Field(1, description="GPUs in all: replicas = gpus / tp.")
    tp: int | None = Field(None, description="GPUs per replica (tensor parallel) [gpus].")
    set: list[str] = Field([], max_length=100, description="Serving fields KEY=VALUE.")


class ServePlanRequest(BaseModel):
    """`gpurent plan --serve`'s flags, by the same names (lists for the comma lists)."""

    model_config = ConfigDict(extra="forbid")

    preset: str | None = Field(None, max_length=NAME, description="A serving preset.")
    model: str | None = Field(None, max_length=NAME, description="A zoo model.")
    scenario: str | None = Field(None, max_length=NAME, description="inference (or none).")
    rate: float | None = Field(None, description="Requests per second to serve.")
    prompt_tokens: str | None = Field(None, max_length=NAME, description="512 or uniform LO-HI")
    output_tokens: str | None = Field(None, max_length=NAME, description="As prompt_tokens.")
    ttft_p50_ms: float | None = Field(None, description="SLO: median time to first token.")
    ttft_p99_ms: float | None = Field(None, description="SLO: p99 time to first token.")
    tpot_ms: float | None = Field(None, description="SLO: p99 time per output token.")
    e2e_p99_s: float | None = Field(None, description="SLO: p99 end-to-end latency.")
    engine: str | None = Field(None, max_length=NAME, description="vllm, sglang, ...")
    quantization: str | None = Field(None, max_length=NAME, description="bf16, fp8, ...")
    set: list[str] = Field([], max_length=100, description="Serving fields KEY=VALUE.")
    traffic_profile: str | None = Field(
        None, max_length=100_000, description="CSV text: 24 rows hour,share or hour,req_s."
    )
    spot: bool = Field(False, description="Also price replicas at spot.")
    headroom: float | None = Field(None, description="Share of each replica's load kept spare.")
    providers: list[str] = Field([], max_length=100, description="Only these providers.")
    exclude_providers: list[str] = Field([], max_length=100, description="Never these.")
    gpus: list[str] = Field([], max_length=100, description="Only these GPUs.")
    regions: list[str] = Field([], max_length=100, description="Only these regions/prefixes.")
    exclude_regions: list[str] = Field([], max_length=100, description="Never these regions.")
    min_gpu_memory_gib: float | None = Field(None, description="Least memory per GPU.")
    max_price_usd_per_hour: float | None = Field(None, description="Most USD/h per instance.")
    top: int = Field(DEFAULT_TOP_N, description="Rows in the ranked table.")
    spot_interruptions_per_hour: float | None = Field(None, description="Per instance-hour.")
    restart_s: float | None = Field(None, description="Seconds to resume after interruption.")


def _no_files(values: dict[str, str], where: str) -> None:
    """Refuse a length `histogram FILE`: over HTTP nothing names a file on the server."""
    for key in LENGTH_FIELDS:
        text = values.get(key)
        if text is not None and text.strip().lower().startswith("histogram"):
            raise InputError(
                f"{where}: {key} 'histogram FILE' reads a file, which the API does not; give a "
                "number or 'uniform LO-HI'"
            )


def _overrides(sets: list[str]) -> dict[str, str]:
    from gpurent.workload.serving import parse_overrides

    raw = parse_overrides(sets) if sets else {}
    _no_files(raw, "set")
    return raw


@router.post(
    "/estimate/serve",
    summary="A serving estimate (as `gpurent estimate --serve NAME --json`)",
    responses={409: {"description": "The model does not fit or misses its SLOs: the estimate"}},
)
def estimate_serve(req: ServeEstimateRequest) -> Any:
    """The serving estimate; 409 with it when not even a vanishing load meets the SLOs."""
    from gpurent.catalog import get_gpu
    from gpurent.estimate.serving import estimate_serving
    from gpurent.report import serving_report as rep
    from gpurent.workload.serving import serving_from_mapping
    from gpurent.workload.serving_named import FILE_SUFFIXES, named_serving

    if req.serve.strip().lower().endswith(FILE_SUFFIXES):
        raise InputError("serve: a workload file is not read over HTTP; give a preset or model")
    gpus = required(req.gpus, "gpus", v.bounded(v.positive_int, most=v.MAX_GPUS))
    tp = check(req.tp, "tp", v.bounded(v.positive_int, most=v.MAX_PARALLEL)) or gpus
    raw = _overrides(req.set)
    wl = named_serving(req.serve)
    if raw:
        wl = serving_from_mapping(raw, "--set", base=wl)
    if gpus % tp:
        raise InputError(f"gpus {gpus} is not a multiple of tp {tp} (replicas = gpus / tp)")
    est = estimate_serving(wl, get_gpu(req.gpu), tp, replicas=gpus // tp)
    doc = rep.serving_json(est)
    if not est.load.met:
        return error_reply(409, rep.unmet_line(est, wl, gpus, tp), estimate=doc)
    return doc


@router.post(
    "/plan/serve",
    summary="The cheapest serving fleet meeting the SLOs (as `gpurent plan --serve --json`)",
    responses={409: {"description": "No configuration meets the SLOs: the error and the plan"}},
)
def plan_serve(req: ServePlanRequest) -> Any:
    """The serving plan; 409 with it when no configuration meets the SLOs."""
    from gpurent.catalog import get_gpu
    from gpurent.catalog.sources import load_offers
    from gpurent.plan.constraints import parse_regions
    from gpurent.plan.scenarios import get_scenario
    from gpurent.plan.serve_request import OfferFilter, ServeFlags, serve_plan
    from gpurent.report.jsonable import to_jsonable
    from gpurent.report.serve_plan_json import serve_plan_to_dict
    from gpurent.userdata import now_utc

    given = {k: getattr(req, k) for k in LENGTH_FIELDS if getattr(req, k) is not None}
    _no_files(given, "request")
    sets = _overrides(req.set)
    scenario = get_scenario(req.scenario) if req.scenario else None
    flags = ServeFlags(
        preset=req.preset,
        model=req.model,
        rate=check(req.rate, "rate", v.positive),
        prompt_tokens=req.prompt_tokens,
        output_tokens=req.output_tokens,
        ttft_p50_ms=check(req.ttft_p50_ms, "ttft_p50_ms", v.positive),
        ttft_p99_ms=check(req.ttft_p99_ms, "ttft_p99_ms", v.positive),
        tpot_ms=check(req.tpot_ms, "tpot_ms", v.positive),
        e2e_p99_s=check(req.e2e_p99_s, "e2e_p99_s", v.positive),
        engine=req.engine,
        quantization=req.quantization,
        sets=tuple(f"{k}={x}" for k, x in sets.items()),
        traffic_profile_csv=req.traffic_profile,
        spot=req.spot,
        headroom=check(req.headroom, "headroom", v.fraction),
    )
    offers = load_offers(None).offers
    names = {o.gpu_name for o in offers}
    known = {o.region for o in offers}
    min_memory = check(req.min_gpu_memory_gib, "min_gpu_memory_gib", v.non_negative)
    offer_filter = OfferFilter(
        providers=tuple(p.lower() for p in items(req.providers)),
        exclude_providers=tuple(p.lower() for p in items(req.exclude_providers)),
        gpus=tuple(get_gpu(n, names).name for n in items(req.gpus)),
        regions=parse_regions(req.regions, known),
        exclude_regions=parse_regions(req.exclude_regions, known),
        min_gpu_memory_gib=(
            min_memory
            if min_memory is not None
            else (scenario.min_gpu_memory_gib if scenario else None)
        ),
        max_price_usd_per_hour=check(
            req.max_price_usd_per_hour, "max_price_usd_per_hour", v.positive
        ),
    )
    plan = serve_plan(
        flags,
        scenario=scenario,
        offers=offers,
        offer_filter=offer_filter,
        top=required(req.top, "top", v.bounded(v.positive_int, most=v.MAX_TOP)),
        spot_rate=check(
            req.spot_interruptions_per_hour, "spot_interruptions_per_hour", v.non_negative
        ),
        restart_s=check(req.restart_s, "restart_s", v.bounded(v.non_negative, most=v.MAX_SECONDS)),
    )
    doc = to_jsonable(serve_plan_to_dict(plan, now_utc()))
    if not plan.feasible:
        return error_reply(409, plan.infeasible_line(), plan=doc)
    return doc
