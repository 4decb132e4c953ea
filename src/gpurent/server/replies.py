"""Every failure as a 4xx JSON reply `{"error": one line}`: gpurent's errors by kind, FastAPI's
validation errors and unknown routes; a bug is a 500 with one line (its type in the log)."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from gpurent.errors import GpurentError, InfeasibleError, InputError, NotFoundError

LOG = logging.getLogger("gpurent.server")


def status_for(exc: GpurentError) -> int:
    """404 for a name that is not known, 409 for a request nothing meets, 422 for other bad
    input, 400 for any other gpurent error (an unusable data file, a missing extra)."""
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, InfeasibleError):
        return 409
    if isinstance(exc, InputError):
        return 422
    return 400


def one_line(text: str) -> str:
    """`text` with every run of white space, newlines included, folded into one space."""
    return " ".join(text.split())


def error_reply(status: int, message: str, **extra: Any) -> JSONResponse:
    """The JSON error reply: `{"error": one line}` plus any extra fields, with `status`."""
    return JSONResponse({"error": one_line(message), **extra}, status_code=status)


def _validation_line(exc: RequestValidationError) -> str:
    errors = list(exc.errors())
    if not errors:
        return "the request is not valid; see /docs"
    first = errors[0]
    where = ".".join(str(part) for part in first.get("loc", ()))
    more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
    return f"{where}: {first.get('msg', 'invalid')}{more}; see /docs for the fields"


def install(app: FastAPI) -> None:
    """Attach the handlers to `app`."""

    async def gpurent_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, GpurentError)
        return error_reply(status_for(exc), exc.message)

    async def validation_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return error_reply(422, _validation_line(exc))

    async def http_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        return JSONResponse(
            {"error": one_line(str(exc.detail))},
            status_code=exc.status_code,
            headers=dict(exc.headers or {}),
        )

    async def bug(request: Request, exc: Exception) -> JSONResponse:
        LOG.error("%s %s failed: %s", request.method, request.url.path, type(exc).__name__)
        return error_reply(500, "internal error; please report it with the request you sent")

    app.add_exception_handler(GpurentError, gpurent_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, bug)
