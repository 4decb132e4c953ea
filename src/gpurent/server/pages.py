"""The dashboard's planner pages: GET / and /plan (the form), POST /plan (the form again with
the ranked table, the Pareto chart and the explanation). The form's fields become the same
`PlanRequest` as POST /api/plan and go through the same `plan_for` (the CLI's core call); bad
input shows the form again with one line and a 4xx, never a 500."""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from gpurent.errors import GpurentError, InputError
from gpurent.plan.constraints import Objective, PricingModel
from gpurent.report.pages import planner_page
from gpurent.server.page_common import checked_form, first, html_reply, page_info
from gpurent.server.plan_api import PlanRequest, plan_for
from gpurent.server.replies import one_line, status_for
from gpurent.workload.presets import list_presets
from gpurent.workload.spec import Task

router = APIRouter(include_in_schema=False)

DEFAULT_FORM: Mapping[str, str] = {
    "preset": "llama-lora",
    "model": "",
    "task": "",
    "tokens": "",
    "gpus": "",
    "pricing": "on-demand,spot",
    "objective": "",
    "deadline_hours": "",
    "budget_usd": "",
}
"""The untouched form: the llama-lora preset on the bundled catalog, on-demand or spot."""


def _choices() -> dict[str, list[tuple[str, str]]]:
    return {
        "preset": [("", "(none: give a model)"), *((p, p) for p in list_presets())],
        "task": [("", "(the preset's)"), *((t.value, t.value) for t in Task)],
        "pricing": [(p.value, p.value) for p in PricingModel],
        "objective": [("", "(automatic)"), *((o.value, o.value) for o in Objective)],
    }


def _number(form: Mapping[str, str], name: str) -> float | None:
    text = form[name].replace("_", "").replace(",", "")
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{name}: {form[name]!r} is not a number") from None


def plan_request(form: Mapping[str, str]) -> PlanRequest:
    """The form's values as the API's request (the same checks follow in `plan_for`)."""
    pricing = [p for p in form["pricing"].split(",") if p]
    if not pricing:
        raise InputError("pricing: tick at least one pricing model")
    try:
        return PlanRequest.model_validate(
            {
                "preset": form["preset"] or None,
                "model": form["model"] or None,
                "task": form["task"] or None,
                "tokens": _number(form, "tokens"),
                "gpus": [g.strip() for g in form["gpus"].split(",") if g.strip()],
                "pricing": pricing,
                "objective": form["objective"] or None,
                "deadline_hours": _number(form, "deadline_hours"),
                "budget_usd": _number(form, "budget_usd"),
            }
        )
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem.get("loc", ()))
        raise InputError(f"{where}: {problem.get('msg', 'invalid')}") from None


@router.get("/", response_class=HTMLResponse)
@router.get("/plan", response_class=HTMLResponse)
async def plan_form(request: Request) -> HTMLResponse:
    """The planner form with its defaults."""
    info = page_info(request)
    return html_reply(planner_page(info, form=DEFAULT_FORM, choices=_choices()), info)


@router.post("/plan", response_class=HTMLResponse)
async def plan_submit(request: Request) -> HTMLResponse:
    """The submitted form: the plan, or the form again with one line saying what is wrong."""
    info = page_info(request)
    raw = await checked_form(request, info, active="plan", title="Plan", page_name="planner")
    if isinstance(raw, HTMLResponse):
        return raw
    form = {name: first(raw, name) for name in DEFAULT_FORM}
    form["pricing"] = ",".join(v.strip() for v in raw.get("pricing", []) if v.strip())
    try:
        # the planner takes ~0.4 s of CPU: in the thread pool, not in the event loop
        result, _ = await run_in_threadpool(plan_for, plan_request(form))
    except GpurentError as exc:
        body = planner_page(info, form=form, choices=_choices(), error=one_line(exc.message))
        return html_reply(body, info, status=status_for(exc))
    body = planner_page(info, form=form, choices=_choices(), plan=result)
    return html_reply(body, info, status=200 if result.feasible else 409)
