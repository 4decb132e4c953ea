"""The dashboard's monitor page: GET /monitor (a machine's GPUs, findings, the money per
machine and the budgets; then live from the JSON endpoints) and POST /monitor/budgets (the
form that adds a budget: CSRF-checked, then a redirect back; bad input is the page again with
one line and a 4xx). It calls the functions the JSON endpoints call, never HTTP to itself."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from gpurent.errors import GpurentError, InputError
from gpurent.monitor.spend import DEFAULT_WINDOW_S
from gpurent.report.pages import PageInfo, message_page
from gpurent.report.pages_monitor import BUDGET_DEFAULTS, MonitorView, monitor_page
from gpurent.server.budget_api import budget_list, create_budget
from gpurent.server.fleet_state import Fleet
from gpurent.server.monitor_api import (
    diagnosis_of,
    fleet,
    series_of,
    spend_of_fleet,
)
from gpurent.server.page_common import checked_form, first, html_reply, page_info
from gpurent.server.replies import one_line, status_for

router = APIRouter(include_in_schema=False)
SERIES_POINTS = 600
# The page's content per (machine, fleet version): a view computed at a version stays true
# until the next push, budget, machine or webhook state bumps it, so 50 browsers opening the
# page between two pushes cost one computation (docs/benchmarks.md, the monitor page).
_VIEWS: weakref.WeakKeyDictionary[Fleet, OrderedDict[tuple[str, int], MonitorView]] = (
    weakref.WeakKeyDictionary()
)
_COMPUTING: weakref.WeakKeyDictionary[Fleet, threading.Lock] = weakref.WeakKeyDictionary()
_VIEWS_LOCK = threading.Lock()
VIEWS_KEPT = 32


def cached_view(f: Fleet, machine: str) -> MonitorView:
    """`monitor_view` with the default budget form, computed once per fleet version: requests
    that arrive while it is computed wait for it rather than computing it again."""
    key = (machine, f.version)  # the version is read before the view is computed
    with _VIEWS_LOCK:
        views = _VIEWS.setdefault(f, OrderedDict())
        computing = _COMPUTING.setdefault(f, threading.Lock())
        view = views.get(key)
        if view is not None:
            views.move_to_end(key)
            return view
    with computing:
        with _VIEWS_LOCK:
            view = views.get(key)
        if view is None:
            view = monitor_view(f, machine, dict(BUDGET_DEFAULTS))
            with _VIEWS_LOCK:
                views[key] = view
                while len(views) > VIEWS_KEPT:
                    views.popitem(last=False)
    return view


def monitor_view(f: Fleet, machine: str, budget_form: dict[str, str]) -> MonitorView:
    """The page's content for `machine` (default: the first registered one)."""
    from gpurent.store.fleet import list_machines

    with f.engine.connect() as conn:
        names = [m.name for m in list_machines(conn)]
    spent = spend_of_fleet(f, DEFAULT_WINDOW_S)
    spend = spent.model_dump()
    budgets = budget_list(f, spent).model_dump()["budgets"]
    if not names:
        return MonitorView(
            machines=(),
            shown="",
            series=None,
            findings=(),
            diagnosis_window_s=DEFAULT_WINDOW_S,
            spend=spend,
            budgets=budgets,
            budget_form=budget_form,
        )
    shown = machine or names[0]
    if shown not in names:
        raise InputError(f"machine: no machine {shown[:128]!r} here; pick one of the list")
    series = series_of(f, shown, None, None, SERIES_POINTS).model_dump()
    _, diagnosis = diagnosis_of(f, shown, DEFAULT_WINDOW_S)
    return MonitorView(
        machines=names,
        shown=shown,
        series=series,
        findings=diagnosis.findings if diagnosis is not None else (),
        diagnosis_window_s=DEFAULT_WINDOW_S,
        spend=spend,
        budgets=budgets,
        budget_form=budget_form,
    )


def _page(
    info: PageInfo, f: Fleet, machine: str, form: dict[str, str], error: str | None = None
) -> str:
    try:
        return monitor_page(info, monitor_view(f, machine, form), error=error)
    except InputError as exc:  # an unknown machine: the first one, with the line
        return monitor_page(info, monitor_view(f, "", form), error=one_line(exc.message))


@router.get("/monitor", response_class=HTMLResponse)
async def monitor(request: Request) -> HTMLResponse:
    """The monitor page (server-rendered first, then live)."""
    info = page_info(request)
    f = fleet(request)
    machine = request.query_params.get("machine", "").strip()[:200]
    try:
        view = await run_in_threadpool(cached_view, f, machine)
    except InputError as exc:
        body = await run_in_threadpool(
            _page, info, f, "", dict(BUDGET_DEFAULTS), one_line(exc.message)
        )
        return html_reply(body, info, status=404)
    except GpurentError as exc:  # the store cannot be opened
        body = message_page(info, active="monitor", title="Monitor", error=one_line(exc.message))
        return html_reply(body, info, status=status_for(exc))
    return html_reply(monitor_page(info, view), info)


def _thresholds(text: str) -> list[float]:
    parts = [p.strip() for p in text.replace(";", ",").split(",") if p.strip()]
    try:
        return [float(p) for p in parts]
    except ValueError:
        raise InputError(
            f"thresholds: {text[:60]!r} is not a comma list of numbers, e.g. 0.5, 0.8, 1"
        ) from None


def _limit(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise InputError(f"limit_usd: {text[:40]!r} is not a number") from None


@router.post("/monitor/budgets", response_class=HTMLResponse)
async def add_budget(request: Request) -> Response:
    """The budget form: the budget stored and a redirect to the monitor page (303), or the page
    again with the form as typed and one line (403 without the CSRF token, 409 for a job or
    project that has a budget, 422 for a bad field)."""
    info = page_info(request)
    f = fleet(request)
    raw = await checked_form(
        request, info, active="monitor", title="Monitor", page_name="monitor page"
    )
    if isinstance(raw, HTMLResponse):
        return raw
    form = {name: first(raw, name)[:2048] for name in BUDGET_DEFAULTS}
    machine = first(raw, "machine")[:200]
    try:
        stored = await run_in_threadpool(
            lambda: create_budget(
                f,
                scope=form["scope"],
                name=form["name"],
                limit_usd=_limit(form["limit_usd"]),
                thresholds=_thresholds(form["thresholds"]),
                webhook_url=form["webhook_url"],
            )
        )
    except GpurentError as exc:
        body = await run_in_threadpool(_page, info, f, machine, form, one_line(exc.message))
        return html_reply(body, info, status=status_for(exc))
    if stored is None:
        line = f"{form['scope']} {form['name']!r} has a budget already"
        body = await run_in_threadpool(_page, info, f, machine, form, line)
        return html_reply(body, info, status=409)
    target = "/monitor" + (f"?machine={quote(machine, safe='')}" if machine else "")
    return RedirectResponse(target, status_code=303)
