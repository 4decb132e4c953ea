"""The app factory: `create_app(settings)` wires the routers, the error replies and the guard."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI

from gpurent import __version__
from gpurent.http import URLLIB_HTTP, Http
from gpurent.monitor.push import PUSH_PATH
from gpurent.server import (
    bench_api,
    budget_api,
    catalog_api,
    estimate_api,
    health_api,
    monitor_api,
    pages,
    pages_data,
    pages_monitor,
    plan_api,
    pricing_api,
    replies,
    serving_api,
    spot_api,
    spot_history_api,
    spot_zones_api,
    static_files,
    vendors_api,
)
from gpurent.server.fleet_state import Fleet
from gpurent.server.guard import Guard
from gpurent.server.settings import ServerSettings, checked_settings

DESCRIPTION = (
    "gpurent's JSON API: each endpoint calls the same core function as the CLI command of the "
    'same name and returns the document its `--json` prints. Errors are `{"error": one line}` '
    "(404 unknown name, 409 nothing meets the request, 413 body too large, 422 bad input, 401 "
    "missing token when the server was started with one)."
)


def create_app(
    settings: ServerSettings,
    *,
    webhook_http: Http = URLLIB_HTTP,
    clock: Callable[[], float] | None = None,
    webhook_backoff_s: float = 1.0,
) -> Any:
    """The ASGI app for `settings` (checked first: a non-loopback host needs a token). FastAPI
    inside, the token and size guard in front of every route, /docs and /openapi.json included
    (the push route checks each machine's own token instead). `webhook_http` sends the budget
    webhooks (retried after `webhook_backoff_s` x the attempt); `clock` (Unix seconds) dates
    spend and alerts."""
    settings = checked_settings(settings)
    api = FastAPI(title="gpurent", version=__version__, description=DESCRIPTION)
    replies.install(api)
    fleet_options: dict[str, Any] = {
        "webhook_http": webhook_http,
        "webhook_backoff_s": webhook_backoff_s,
    }
    if clock is not None:
        fleet_options["clock"] = clock
    api.state.fleet = Fleet(settings.db, **fleet_options)
    for router in (
        health_api.router,
        catalog_api.router,
        estimate_api.router,
        plan_api.router,
        pricing_api.router,
        spot_api.router,
        vendors_api.router,
        bench_api.router,
        spot_zones_api.router,
        spot_history_api.router,
        serving_api.router,
        static_files.router,
        pages.router,
        pages_data.router,
        pages_monitor.router,
        monitor_api.router,
        budget_api.router,
    ):
        api.include_router(router)
    return Guard(
        api,
        token=settings.token,
        max_body_bytes=settings.max_body_bytes,
        own_token_paths=(PUSH_PATH,),
    )
