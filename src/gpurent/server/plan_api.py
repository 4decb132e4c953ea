"""POST /api/plan: rank what to rent for a workload, the document of `gpurent plan --json`.

The request's fields are the plan flags of the same names (a subset for now: the workload, the
hard constraints, the objective); durations are numbers with their unit in the name.
`"scenario": "inference"` answers with the serving plan of `gpurent plan --scenario inference`
(server/serving_api.py; its own fields at POST /api/plan/serve). The stored
spot signals (`gpurent spot signals import`) give the interruption rates, as in `plan` without
--spot-interruptions-per-hour.
"""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum
from typing import Any, TypeVar

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from gpurent import workload as wl
from gpurent.catalog import get_gpu, parse_precision
from gpurent.catalog.links import Interconnect
from gpurent.catalog.sources import load_offers
from gpurent.errors import InputError
from gpurent.estimate.calibration_file import load_estimator
from gpurent.inputs import values as v
from gpurent.inputs.choices import parse_choice
from gpurent.plan.constraints import (
    DEFAULT_MAX_GPUS,
    DEFAULT_MAX_NODES,
    DEFAULT_TOP_N,
    Constraints,
    Objective,
    PricingModel,
    Risk,
)
from gpurent.plan.planner import make_plan
from gpurent.plan.result import Plan
from gpurent.plan.scenarios import Scenario, get_scenario
from gpurent.plan.signal_store import signal_rates_for
from gpurent.pricing.costs import DEFAULT_STORAGE_GB_PER_NODE, CostAssumptions
from gpurent.report.plan_json import plan_document, price_warnings
from gpurent.server.params import check, required
from gpurent.server.replies import error_reply
from gpurent.userdata import now_utc
from gpurent.workload.loader import FIELD_CHECKS
from gpurent.workload.models import default_precision
from gpurent.workload.spec import Task, Workload

router = APIRouter(prefix="/api", tags=["plan"])

E = TypeVar("E", bound=StrEnum)
NAME = 200  # longest name accepted (presets, models, GPUs, providers)


class PlanRequest(BaseModel):
    """What `gpurent plan` takes as flags, by the same names."""

    model_config = ConfigDict(extra="forbid")

    preset: str | None = Field(None, max_length=NAME, description="A workload preset.")
    model: str | None = Field(None, max_length=NAME, description="A model-zoo name.")
    scenario: str | None = Field(None, description="training | inference | cost-sensitive.")
    task: str | None = Field(None, description="training, finetune-lora, inference, ...")
    tokens: float | None = Field(None, description="Amount of work in tokens (LLMs).")
    epochs: float | None = Field(None, description="Epochs over the dataset.")
    batch_size: int | None = Field(None, description="Micro-batch per GPU.")
    precision: str | None = Field(None, description="fp32, tf32, amp, bf16, fp8, ...")
    deadline_hours: float | None = Field(None, description="Finish within this many hours.")
    budget_usd: float | None = Field(None, description="Most USD for the whole job.")
    providers: list[str] = Field([], max_length=100, description="Only these providers.")
    exclude_providers: list[str] = Field([], max_length=100, description="Never these.")
    gpus: list[str] = Field([], max_length=100, description="Only these GPUs.")
    max_gpus: int = Field(DEFAULT_MAX_GPUS, description="Most GPUs in total.")
    max_nodes: int = Field(DEFAULT_MAX_NODES, description="Most instances for one job.")
    min_gpu_memory_gib: float | None = Field(None, description="Least memory per GPU.")
    max_price_usd_per_hour: float | None = Field(None, description="Most USD/h per instance.")
    interconnect: str | None = Field(None, description="nvlink | pcie | infinity-fabric | any.")
    pricing: list[str] = Field(["on-demand", "spot"], max_length=3, description="Pricing models.")
    objective: str | None = Field(None, description="cheapest | fastest | deadline | ...")
    top: int = Field(DEFAULT_TOP_N, description="Rows in the ranked table.")
    risk: str = Field("median", description="median | p90.")


def _one(kind: type[E], text: str, where: str) -> E:
    """The CLI's enum parser (did-you-mean on a typo), named by the request's field."""
    return parse_choice(kind, text, what=where, where=where)


def _workload(req: PlanRequest, scenario: Scenario | None) -> Workload:
    """As `gpurent plan` resolves --preset/--model/--scenario and the overrides."""
    if req.preset is not None and req.model is not None:
        raise InputError("give one of preset, model, not both")
    if req.model is not None:
        base = Workload(
            model=req.model, name=req.model, precision=default_precision(wl.get_model(req.model))
        )
    else:
        name = req.preset or (scenario.default_preset if scenario else None)
        if name is None:
            raise InputError(
                'say what to run: "preset" (e.g. llama-lora), "model" or "scenario" '
                "(training, inference, cost-sensitive)"
            )
        base = wl.preset(name)
    changes: dict[str, Any] = {}
    if req.task is not None:
        changes["task"] = _one(Task, req.task, "task")
    if req.tokens is not None:
        changes["token_budget"] = check(req.tokens, "tokens", FIELD_CHECKS["token_budget"])
    if req.epochs is not None:
        changes["epochs"] = check(req.epochs, "epochs", FIELD_CHECKS["epochs"])
    if req.batch_size is not None:
        changes["batch_size_per_gpu"] = check(
            req.batch_size, "batch_size", FIELD_CHECKS["batch_size_per_gpu"]
        )
    if req.precision is not None:
        changes["precision"] = parse_precision(req.precision)
    return replace(base, **changes)


def _objective(
    req: PlanRequest, deadline_s: float | None, scenario: Scenario | None, work: Workload
) -> Objective:
    if req.objective:
        return _one(Objective, req.objective, "objective")
    if deadline_s is not None:
        return Objective.DEADLINE
    if scenario is not None:
        return scenario.objective
    if not (work.token_budget or work.dataset_samples):
        return Objective.THROUGHPUT_PER_DOLLAR
    return Objective.CHEAPEST


SERVING_FIELDS = (
    "preset",
    "model",
    "scenario",
    "providers",
    "exclude_providers",
    "gpus",
    "min_gpu_memory_gib",
    "max_price_usd_per_hour",
    "top",
)


def _serving_plan(req: PlanRequest) -> Any:
    """`scenario: inference` plans a service (POST /api/plan/serve) from the fields the two
    requests share; a field that only a job plan reads is refused rather than dropped."""
    from gpurent.server.serving_api import ServePlanRequest, plan_serve

    job_only = sorted(req.model_fields_set - set(SERVING_FIELDS))
    if job_only:
        raise InputError(
            f"scenario inference plans a service: {', '.join(job_only)} do not apply; "
            "POST /api/plan/serve takes the serving fields (rate, SLOs, engine, ...)"
        )
    shared = {k: getattr(req, k) for k in SERVING_FIELDS if k in req.model_fields_set}
    return plan_serve(ServePlanRequest(**shared))


@router.post(
    "/plan",
    summary="What to rent, ranked (as `gpurent plan --json`); a service for scenario inference",
    responses={409: {"description": "Nothing meets the request: the error and the plan"}},
)
def plan(req: PlanRequest) -> Any:
    """The ranked plan, the document `gpurent plan --json` prints (409 with it if nothing fits)."""
    scenario = get_scenario(req.scenario) if req.scenario else None
    if scenario is not None and scenario.name == "inference":
        return _serving_plan(req)  # as `gpurent plan --scenario inference`: a serving plan
    result, doc = plan_for(req)
    if not result.feasible:
        reason = result.infeasible_reasons[0] if result.infeasible_reasons else "no candidate"
        return error_reply(409, f"nothing meets the request: {reason}", plan=doc)
    return doc


def plan_for(req: PlanRequest) -> tuple[Plan, dict[str, Any]]:
    """The plan for `req` and its `gpurent plan --json` document: what /api/plan answers and the
    planner page renders (the same core call as the CLI). A job plan: `scenario: inference` (a
    serving plan, which `plan` answers through POST /api/plan/serve's core) is refused here."""
    scenario = get_scenario(req.scenario) if req.scenario else None
    if scenario is not None and scenario.name == "inference":
        raise InputError(
            'scenario "inference" plans a service, not a job: POST /api/plan/serve (or /api/plan)'
        )
    work = _workload(req, scenario)
    hours = check(req.deadline_hours, "deadline_hours", v.bounded(v.positive, most=v.MAX_HOURS))
    deadline_s = None if hours is None else hours * 3600.0
    offers = load_offers(None).offers
    names = {o.gpu_name for o in offers}
    min_memory = check(req.min_gpu_memory_gib, "min_gpu_memory_gib", v.non_negative)
    constraints = Constraints(
        deadline_s=deadline_s,
        budget_usd=check(req.budget_usd, "budget_usd", v.positive),
        providers=tuple(p.lower() for p in req.providers),
        exclude_providers=tuple(p.lower() for p in req.exclude_providers),
        gpus=tuple(get_gpu(name, names).name for name in req.gpus),
        max_gpus=required(req.max_gpus, "max_gpus", v.bounded(v.positive_int, most=v.MAX_GPUS)),
        max_nodes=required(req.max_nodes, "max_nodes", v.bounded(v.positive_int, most=v.MAX_NODES)),
        min_gpu_memory_gib=(
            min_memory
            if min_memory is not None
            else (scenario.min_gpu_memory_gib if scenario else None)
        ),
        interconnect=(
            _one(Interconnect, req.interconnect, "interconnect")
            if req.interconnect
            else (scenario.interconnect if scenario else Interconnect.ANY)
        ),
        pricing=tuple(_one(PricingModel, p, "pricing") for p in req.pricing),
        objective=_objective(req, deadline_s, scenario, work),
        top_n=required(req.top, "top", v.bounded(v.positive_int, most=v.MAX_TOP)),
        risk=_one(Risk, req.risk, "risk"),
        max_price_usd_per_hour=check(
            req.max_price_usd_per_hour, "max_price_usd_per_hour", v.positive
        ),
    )
    assumptions = CostAssumptions(
        storage_gb_per_node=(
            scenario.storage_gb_per_node if scenario else DEFAULT_STORAGE_GB_PER_NODE
        ),
        signal_rates=signal_rates_for(offers),
    )
    result = make_plan(work, offers, constraints, assumptions, load_estimator(), scenario=scenario)
    doc = plan_document(result, assumptions.storage_gb_per_node, price_warnings(result, now_utc()))
    return result, doc
