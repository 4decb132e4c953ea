"""The first request of `gpurent bench serve`: does the URL answer like OpenAI's streaming API?

Edge module (network). What it is not becomes one line: a host that cannot be reached, a refused
key, a missing route, a page that is not an OpenAI stream (`InputError`, exit 2); a server that
fails the request (`DeviceError`, exit 1). Without `--model`, asks `/v1/models` for one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from gpurent.bench.serve_config import ServeConfig, models_url
from gpurent.bench.serve_request import body, stream
from gpurent.bench.serve_result import RequestRecord, shown_url
from gpurent.errors import DeviceError, InputError
from gpurent.textsafe import clean

if TYPE_CHECKING:
    import aiohttp


async def probe(
    session: aiohttp.ClientSession,
    cfg: ServeConfig,
    headers: dict[str, str],
    api_key: str | None,
) -> str:
    """One short request: the endpoint must answer like OpenAI's streaming API. Returns the
    model name (asked from /v1/models when `cfg.model` is empty)."""
    import aiohttp as aio

    where = shown_url(cfg.url)
    model = cfg.model
    try:
        async with asyncio.timeout(min(cfg.timeout_s, 60.0)):
            if not model:
                model = await _first_model(session, cfg, headers)
                cfg = replace(cfg, model=model)
            async with session.post(
                cfg.url, data=body(cfg, random.Random(cfg.seed), max_tokens=2), headers=headers
            ) as resp:
                if resp.status != 200:
                    text = " ".join(clean(await resp.text(errors="replace")).split())
                    if api_key:
                        text = text.replace(api_key, "***")
                    _refuse(resp.status, text[:160], where, cfg)
                rec = RequestRecord()
                await stream(resp, rec, time.perf_counter())
                if rec.error == "bad_response" or (not rec.ok and rec.error is None):
                    kind = resp.headers.get("Content-Type", "no content type")
                    raise InputError(
                        f"{where} answered HTTP 200 but not an OpenAI stream ({clean(kind)}); "
                        "check --url and --endpoint"
                    )
                if rec.error == "stream_error":
                    raise DeviceError(f"{where} sent an error in its first stream; see its log")
    except TimeoutError:
        raise DeviceError(
            f"{where} did not answer a first request within {min(cfg.timeout_s, 60.0):g} s "
            f"(or sent nothing for --stall-timeout {cfg.stall_timeout_s:g} s); see its log"
        ) from None
    except aio.ClientConnectorError as exc:
        raise InputError(
            f"cannot reach {where} ({clean(str(exc.os_error) or type(exc).__name__)}); "
            "check --url and that the server is running"
        ) from None
    except aio.ClientError as exc:
        raise InputError(
            f"{where} did not answer like an OpenAI endpoint ({type(exc).__name__}); check --url"
        ) from None
    return model


def _refuse(status: int, text: str, where: str, cfg: ServeConfig) -> None:
    if status in (401, 403):
        raise InputError(
            f"{where} refused the request (HTTP {status}): check --api-key or $GPURENT_API_KEY"
        )
    if status in (404, 405):
        raise InputError(
            f"{where} has no OpenAI {cfg.endpoint} route (HTTP {status}); check --url and "
            "--endpoint"
        )
    if 400 <= status < 500:
        raise InputError(f"{where} rejected the request (HTTP {status}: {text}); check --model")
    raise DeviceError(f"{where} failed a first request (HTTP {status}: {text}); see its log")


async def _first_model(
    session: aiohttp.ClientSession, cfg: ServeConfig, headers: dict[str, str]
) -> str:
    url = models_url(cfg.url)
    async with session.get(url, headers=headers) as resp:
        doc: Any = None
        if resp.status in (401, 403):
            _refuse(resp.status, "", shown_url(url), cfg)
        if resp.status == 200:
            with contextlib.suppress(ValueError):
                doc = json.loads(await resp.read())
    data = doc.get("data") if isinstance(doc, dict) else None
    if isinstance(data, list) and data and isinstance(data[0], dict):
        name = data[0].get("id")
        if isinstance(name, str) and name:
            return name
    raise InputError(f"{shown_url(url)} lists no model; give --model NAME")
