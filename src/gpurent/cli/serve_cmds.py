"""`gpurent serve`: the web API (FastAPI, the `server` extra) on 127.0.0.1 by default."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from gpurent.cli.common import cli_errors, err_console
from gpurent.errors import require
from gpurent.server.settings import (
    DEFAULT_HOST,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_PORT,
    TOKEN_ENV,
    ServerSettings,
    checked_settings,
    is_loopback,
)


@cli_errors
def serve(
    host: Annotated[
        str,
        typer.Option("--host", help="Address to bind; any but loopback needs a token."),
    ] = DEFAULT_HOST,
    port: Annotated[int, typer.Option("--port", help="TCP port (0: any free one).")] = DEFAULT_PORT,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar=TOKEN_ENV,
            show_envvar=True,
            show_default=False,
            help="Every request must send 'Authorization: Bearer TOKEN' (16 characters or more; "
            f"prefer ${TOKEN_ENV}: a flag shows in the process list).",
        ),
    ] = None,
    max_body_bytes: Annotated[
        int, typer.Option("--max-body-bytes", help="Larger request bodies get 413.")
    ] = DEFAULT_MAX_BODY_BYTES,
    *,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            show_default=False,
            help="The fleet store (machines, pushed samples, budgets): a SQLite file or a "
            "SQLAlchemy URL such as postgresql+psycopg://user@host/db [default: serve.db in "
            "the gpurent data directory].",
        ),
    ] = None,
    demo: Annotated[
        bool,
        typer.Option(
            "--demo", help="Run a stand-in GPU machine `demo` in-process that pushes every second."
        ),
    ] = False,
) -> None:
    """Serve gpurent's dashboard (http://127.0.0.1:8000/: plan, offers, spot, monitor, bench,
    vendors) and its JSON API: /api/gpus, /api/offers, /api/estimate, /api/plan, /api/spend,
    /api/budgets, /api/monitor/push, /api/health; the OpenAPI schema at /docs and /openapi.json
    (docs/serve.md).

    Example: `gpurent serve --demo`, then `curl -s localhost:8000/api/spend`.
    """
    settings = checked_settings(
        ServerSettings(
            host=host,
            port=port,
            token=token or None,
            max_body_bytes=max_body_bytes,
            db=db or None,
        )
    )
    uvicorn: Any = require("uvicorn", "server")
    require("fastapi", "server")
    from gpurent.server.app import create_app

    if demo and port == 0:  # the demo must know where to push
        port = _free_port(host)
    app = create_app(settings)
    app.app.state.fleet.engine  # noqa: B018 - opens the store now: a bad --db fails here, once
    where = f"[{host}]" if ":" in host else host
    guard = "token required" if settings.token else "no token"
    scope = "this machine only" if is_loopback(host) else "reachable from the network"
    err_console.print(
        f"gpurent serve: http://{where}:{port}/ (the dashboard; the API at /docs; {scope}, "
        f"{guard})",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    stop = None
    if demo:
        from gpurent.server.demo import start_demo

        wildcard = {"0.0.0.0": "127.0.0.1", "::": "[::1]", "": "127.0.0.1"}
        local = wildcard.get(host, f"[{host}]" if ":" in host else host)
        stop = start_demo(app, f"http://{local}:{port}")
        err_console.print(
            "demo: machine 'demo' pushes stand-in GPU samples every second (GET /api/spend)",
            highlight=False,
        )
    try:
        _run(uvicorn, app, host, port)
    finally:
        if stop is not None:
            stop.set()


def _free_port(host: str) -> int:
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


def _run(uvicorn: Any, app: Any, host: str, port: int) -> None:
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="info",
        server_header=False,
        h11_max_incomplete_event_size=64 * 1024,
    )


def register(app: typer.Typer) -> None:
    """Attach `serve` to the root app."""
    app.command("serve")(serve)
