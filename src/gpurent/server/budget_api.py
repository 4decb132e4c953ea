"""Budgets per job or project: POST/GET /api/budgets (with the spend, the state and the alerts
fired) and GET /api/budgets/rules (Prometheus alerting rules, YAML)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field

from gpurent.monitor import budget as b
from gpurent.monitor.spend import DEFAULT_WINDOW_S
from gpurent.server.fleet_state import Fleet
from gpurent.server.monitor_api import NAME, ErrorReply, SpendOut, fleet, spend_of_fleet

router = APIRouter(prefix="/api", tags=["budgets"])
RULES_SCHEMA = {  # the YAML document, as a Prometheus rules file holds it
    "type": "object",
    "required": ["groups"],
    "properties": {
        "groups": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "rules"],
                "properties": {"name": {"type": "string"}, "rules": {"type": "array"}},
            },
        }
    },
}


class BudgetIn(BaseModel):
    """A spending limit on a job's or a project's machines, with its alert thresholds."""

    model_config = ConfigDict(extra="forbid")

    scope: str = Field(max_length=16, description="job or project.")
    name: str = Field(max_length=NAME, description="The job's or project's name.")
    limit_usd: float = Field(description="The budget, USD.")
    thresholds: list[float] = Field(
        default_factory=lambda: list(b.DEFAULT_THRESHOLDS),
        max_length=b.MAX_THRESHOLDS,
        description="Shares of the limit that alert once each (1.0: the limit).",
    )
    webhook_url: str | None = Field(
        None, max_length=2048, description="POSTed a JSON alert at each threshold."
    )


class AlertOut(BaseModel):
    """A threshold crossed, and what became of its webhook."""

    threshold: float
    spend_usd: float
    limit_usd: float
    fired_s: float
    webhook_state: str
    webhook_attempts: int


class BudgetOut(BaseModel):
    """A budget with its current spend and state (ok, warning, exceeded)."""

    id: int
    scope: str
    name: str
    limit_usd: float
    thresholds: list[float]
    webhook: bool  # the URL itself is not shown: it often holds a secret
    spend_usd: float
    share: float
    state: str
    alerts: list[AlertOut]


class BudgetList(BaseModel):
    """Every budget."""

    budgets: list[BudgetOut]


def _out(budget: Any, spend_usd: float, alerts: list[Any]) -> BudgetOut:
    return BudgetOut(
        id=budget.id,
        scope=budget.scope,
        name=budget.name,
        limit_usd=budget.limit_usd,
        thresholds=list(budget.thresholds),
        webhook=bool(budget.webhook_url),
        spend_usd=spend_usd,
        share=spend_usd / budget.limit_usd,
        state=b.state(budget.thresholds, budget.limit_usd, spend_usd),
        alerts=[
            AlertOut(
                threshold=a.threshold,
                spend_usd=a.spend_usd,
                limit_usd=a.limit_usd,
                fired_s=a.fired_s,
                webhook_state=a.webhook_state,
                webhook_attempts=a.webhook_attempts,
            )
            for a in alerts
        ],
    )


def _spend_by_scope(f: Fleet, doc: SpendOut | None = None) -> dict[tuple[str, str], float]:
    doc = spend_of_fleet(f, DEFAULT_WINDOW_S) if doc is None else doc
    spent = {("job", g.name): g.spent_usd for g in doc.jobs}
    spent.update({("project", g.name): g.spent_usd for g in doc.projects})
    return spent


@router.post(
    "/budgets",
    summary="Add a budget on a job or project, with alert thresholds and an optional webhook",
    status_code=201,
    responses={409: {"model": ErrorReply}, 422: {"model": ErrorReply}},
)
def add_budget(req: BudgetIn, request: Request) -> BudgetOut:
    """Store a budget (409 when that job or project has one). Each threshold fires once, on the
    push that crosses it: an alert in the store and, with `webhook_url`, a JSON POST there."""
    stored = create_budget(
        fleet(request),
        scope=req.scope,
        name=req.name,
        limit_usd=req.limit_usd,
        thresholds=req.thresholds,
        webhook_url=req.webhook_url or "",
    )
    if stored is None:
        raise HTTPException(409, f"{req.scope} {req.name!r} has a budget already")
    return stored


def create_budget(
    f: Fleet,
    *,
    scope: str,
    name: str,
    limit_usd: float,
    thresholds: Sequence[float],
    webhook_url: str,
) -> BudgetOut | None:
    """Check and store a budget (the API's and the monitor page's form); None when that job or
    project has one already. InputError for a bad field."""
    from gpurent.store.fleet import add_budget as store_budget

    scope = b.check_scope(scope)
    name = b.check_name(name, "name")
    limit = b.check_limit(limit_usd)
    checked = b.check_thresholds(thresholds)
    url = b.check_webhook_url(webhook_url)
    with f.lock, f.engine.begin() as conn:
        stored = store_budget(
            conn,
            scope=scope,
            name=name,
            limit_usd=limit,
            thresholds=checked,
            webhook_url=url,
            created_s=f.clock(),
        )
    f.budgets_changed()
    if stored is None:
        return None
    return _out(stored, _spend_by_scope(f).get((scope, name), 0.0), [])


@router.get("/budgets", summary="Every budget with its spend, state and the alerts it fired")
def budgets(request: Request) -> BudgetList:
    """The budgets, each with the money its job's or project's machines spent so far."""
    return budget_list(fleet(request))


def budget_list(f: Fleet, spend: SpendOut | None = None) -> BudgetList:
    """Every budget with its spend, state and alerts (the endpoint's and the page's); `spend`:
    the fleet's spend already computed (at the default window), else computed here."""
    from gpurent.store.fleet import list_alerts, list_budgets

    spent = _spend_by_scope(f, spend)
    with f.engine.connect() as conn:
        items = [
            _out(x, spent.get((x.scope, x.name), 0.0), list_alerts(conn, x.id))
            for x in list_budgets(conn)
        ]
    return BudgetList(budgets=items)


@router.get(
    "/budgets/rules",
    summary="Prometheus alerting rules (YAML) for every budget threshold",
    response_class=PlainTextResponse,
    responses={200: {"content": {"application/yaml": {"schema": RULES_SCHEMA}}}},
)
def rules(request: Request) -> PlainTextResponse:
    """A rules file for Prometheus (`rule_files:`) over the exporter's `gpurent_cost_spent_usd`
    labelled by `gpurent monitor --job/--project`; Alertmanager routes what fires."""
    import yaml

    from gpurent.store.fleet import list_budgets

    with fleet(request).engine.connect() as conn:
        items = [
            b.BudgetRule(scope=x.scope, name=x.name, limit_usd=x.limit_usd, thresholds=x.thresholds)
            for x in list_budgets(conn)
        ]
    text = yaml.safe_dump(b.alert_rules(items), sort_keys=False, allow_unicode=False)
    return PlainTextResponse(text, media_type="application/yaml")
