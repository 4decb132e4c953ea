"""`gpurent bench serve`: load an OpenAI-compatible endpoint and time every streamed token.

Edge module (network I/O, clock): asyncio + aiohttp (`bench` extra, imported lazily). One
probe request first (not counted) checks the URL answers like OpenAI's streaming API and turns
what it is not into one line (`InputError`, exit 2). Then each level runs in turn:

- concurrency c: c workers, each sending its next request when the last one ended;
- rate r: Poisson arrivals (exponential gaps, seeded), at most `max_inflight` in flight.

A level stops issuing after `max_requests` or `duration_s`; requests in flight then finish,
each bounded by `timeout_s` (and by `stall_timeout_s` without a byte). `stop` (Ctrl-C) ends the
run at once: requests in flight are cancelled and counted as such, what finished is kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import signal
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from gpurent.bench.serve_config import ServeConfig, models_url
from gpurent.bench.serve_result import (
    LevelResult,
    RequestRecord,
    ServeResult,
    StoppedBy,
    make_result,
    shown_url,
    summarise_level,
)
from gpurent.bench.serve_sse import parse_line
from gpurent.errors import DeviceError, InputError, require
from gpurent.textsafe import clean

if TYPE_CHECKING:
    import aiohttp

# level label, requests finished, requests to send (None: bounded by time only)
Progress = Callable[[str, int, int | None], None]
PROGRESS_EVERY_S = 0.1

# Words that are one token in the common BPE vocabularies (GPT-2/cl100k/Llama-3): a prompt of
# N of them is about N tokens (a chat template adds its own few).
_WORDS = (
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "was",
    "for",
    "on",
    "that",
    "with",
    "as",
    "by",
    "at",
    "from",
    "his",
    "her",
    "it",
    "an",
    "are",
    "were",
    "which",
    "this",
    "be",
    "or",
    "had",
    "not",
    "but",
    "have",
    "one",
    "all",
    "they",
    "you",
    "their",
    "has",
    "been",
    "its",
    "new",
    "more",
    "who",
    "first",
    "after",
    "also",
    "two",
    "time",
    "only",
    "other",
    "many",
    "some",
    "would",
    "when",
    "there",
    "over",
    "most",
    "city",
    "may",
    "year",
)


def _prompt(rng: random.Random, tokens: int) -> str:
    return " ".join(rng.choices(_WORDS, k=tokens))


def _body(cfg: ServeConfig, rng: random.Random, *, max_tokens: int | None = None) -> bytes:
    prompt = _prompt(rng, rng.randint(cfg.prompt_tokens.lo, cfg.prompt_tokens.hi))
    out = max_tokens or rng.randint(cfg.output_tokens.lo, cfg.output_tokens.hi)
    doc: dict[str, Any] = {
        "model": cfg.model,
        "max_tokens": out,
        "stream": True,
        "stream_options": {"include_usage": True},
        "temperature": 0.0,
    }
    if cfg.ignore_eos:
        doc["ignore_eos"] = True
    if cfg.endpoint == "chat":
        doc["messages"] = [{"role": "user", "content": prompt}]
    else:
        doc["prompt"] = prompt
    return json.dumps(doc).encode()


def _headers(api_key: str | None) -> dict[str, str]:
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


def _error_kind(exc: BaseException, aio: Any) -> str:
    if isinstance(exc, aio.ConnectionTimeoutError):
        return "connect"
    if isinstance(exc, aio.ServerTimeoutError):
        return "stall"
    if isinstance(exc, aio.ClientConnectorError):
        return "connect"
    if isinstance(exc, aio.ClientPayloadError | aio.ServerDisconnectedError | aio.ClientOSError):
        return "disconnect"
    if isinstance(exc, aio.ClientResponseError):
        return "bad_response"
    if isinstance(exc, aio.ClientError):
        return "disconnect"
    return "bad_response"


class _Reader:
    """Fills a `RequestRecord` from the stream's lines. Lines that arrived in one read share
    its arrival time (tokens that came together have no gap between them)."""

    __slots__ = ("chunks", "done", "last", "rec", "t0", "usage")

    def __init__(self, rec: RequestRecord, t0: float) -> None:
        self.rec, self.t0 = rec, t0
        self.last: float | None = None
        self.chunks = 0
        self.usage: int | None = None
        self.done = False

    def feed(self, line: bytes, now: float) -> bool:
        """False when the stream turned out to be broken (the record says how)."""
        chunk = parse_line(line)
        if chunk is None:
            return True
        if chunk.done:
            self.done = True
        elif chunk.bad:
            self.rec.error = "bad_response"
            return False
        elif chunk.error is not None:
            self.rec.error = "stream_error"
            return False
        if chunk.text:
            if self.last is None:
                self.rec.ttft_s = now - self.t0
            else:
                self.rec.itl_s.append(now - self.last)
            self.last = now
            self.chunks += 1
        if chunk.completion_tokens is not None:
            self.usage = chunk.completion_tokens
            self.rec.prompt_tokens = chunk.prompt_tokens
        return True

    def finish(self) -> None:
        rec = self.rec
        if not self.done:
            rec.error = "disconnect"
            return
        rec.e2e_s = time.perf_counter() - self.t0
        rec.output_tokens = self.usage if self.usage is not None else self.chunks
        rec.tokens_from_usage = self.usage is not None
        rec.ok = True


async def _stream(resp: aiohttp.ClientResponse, rec: RequestRecord, t0: float) -> None:
    """Read one 200 response's SSE lines into `rec`: whatever bytes have arrived at each
    wake-up, split into lines (far fewer awaits than a line at a time)."""
    reader = _Reader(rec, t0)
    pending = b""
    async for data in resp.content.iter_any():
        now = time.perf_counter()
        lines = (pending + data).split(b"\n")
        pending = lines.pop()
        for line in lines:
            if not reader.feed(line, now):
                return
    if pending and not reader.feed(pending, time.perf_counter()):
        return
    reader.finish()


async def _request(
    session: aiohttp.ClientSession, cfg: ServeConfig, body: bytes, headers: dict[str, str]
) -> RequestRecord:
    import aiohttp as aio

    rec = RequestRecord()
    t0 = time.perf_counter()
    try:
        async with asyncio.timeout(cfg.timeout_s) as deadline:
            try:
                async with session.post(cfg.url, data=body, headers=headers) as resp:
                    if resp.status != 200:
                        rec.error = f"http_{resp.status}"
                        await resp.read()
                        return rec
                    await _stream(resp, rec, t0)
            except TimeoutError as exc:
                if deadline.expired():
                    raise
                rec.error = _error_kind(exc, aio)
            except aio.ClientError as exc:
                rec.error = _error_kind(exc, aio)
    except TimeoutError:
        rec.error = "timeout"
    return rec


class _Ticker:
    """Calls `progress` at most every PROGRESS_EVERY_S (and always on `flush`)."""

    def __init__(self, progress: Progress | None, label: str, total: int | None) -> None:
        self.progress, self.label, self.total = progress, label, total
        self.done = 0
        self.next_s = 0.0

    def tick(self) -> None:
        self.done += 1
        now = time.monotonic()
        if self.progress is not None and now >= self.next_s:
            self.next_s = now + PROGRESS_EVERY_S
            self.progress(self.label, self.done, self.total)

    def flush(self) -> None:
        if self.progress is not None:
            self.progress(self.label, self.done, self.total)


async def _until_done_or_stop(tasks: Sequence[asyncio.Future[Any]], stop: asyncio.Event) -> bool:
    """Wait for every task; on `stop`, cancel them. True when stopped."""
    stopper = asyncio.ensure_future(stop.wait())
    pending: set[asyncio.Future[Any]] = {*tasks, stopper}
    try:
        while any(not t.done() for t in tasks):
            _, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            if stopper.done():
                for t in tasks:
                    t.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                return True
        for t in tasks:  # a bug in a worker surfaces instead of shrinking the level
            exc = None if t.cancelled() else t.exception()
            if exc is not None:
                raise exc
        return False
    finally:
        stopper.cancel()


async def _concurrency_level(
    session: aiohttp.ClientSession,
    cfg: ServeConfig,
    index: int,
    *,
    stop: asyncio.Event,
    headers: dict[str, str],
    ticker: _Ticker,
) -> tuple[list[RequestRecord], int, float, StoppedBy]:
    level = int(cfg.levels[index])
    rng = random.Random(cfg.seed * 1_000_003 + index)
    records: list[RequestRecord] = []
    issued = 0
    start = time.perf_counter()
    deadline = start + cfg.duration_s
    by_time = False

    async def worker() -> None:
        nonlocal issued, by_time
        while issued < cfg.max_requests:
            if time.perf_counter() >= deadline:
                by_time = True
                return
            issued += 1
            records.append(await _request(session, cfg, _body(cfg, rng), headers))
            ticker.tick()

    tasks = [asyncio.ensure_future(worker()) for _ in range(level)]
    stopped = await _until_done_or_stop(tasks, stop)
    elapsed = time.perf_counter() - start
    why: StoppedBy = "interrupted" if stopped else "duration" if by_time else "max_requests"
    return records, issued - len(records), elapsed, why


async def _rate_level(
    session: aiohttp.ClientSession,
    cfg: ServeConfig,
    index: int,
    *,
    stop: asyncio.Event,
    headers: dict[str, str],
    ticker: _Ticker,
) -> tuple[list[RequestRecord], int, float, StoppedBy, int]:
    rate = cfg.levels[index]
    rng = random.Random(cfg.seed * 1_000_003 + index)
    arrivals = random.Random(cfg.seed * 1_000_003 + index + 500_000)
    records: list[RequestRecord] = []
    tasks: list[asyncio.Task[None]] = []
    inflight = asyncio.Semaphore(cfg.max_inflight)
    held_back = 0
    start = time.perf_counter()
    deadline = start + cfg.duration_s
    next_s = start
    why: StoppedBy = "max_requests"

    async def one(body: bytes) -> None:
        try:
            records.append(await _request(session, cfg, body, headers))
            ticker.tick()
        finally:
            inflight.release()

    while len(tasks) < cfg.max_requests:
        next_s += arrivals.expovariate(rate)
        if next_s >= deadline:
            why = "duration"
            break
        delay = next_s - time.perf_counter()
        if delay > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)
        if stop.is_set():
            break
        if inflight.locked():
            held_back += 1
        await inflight.acquire()
        tasks.append(asyncio.ensure_future(one(_body(cfg, rng))))
    stopped = stop.is_set() or await _until_done_or_stop(tasks, stop)
    if stopped:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        why = "interrupted"
    elapsed = time.perf_counter() - start
    return records, len(tasks) - len(records), elapsed, why, held_back


async def _probe(
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
                cfg = _with_model(cfg, model)
            async with session.post(
                cfg.url, data=_body(cfg, random.Random(cfg.seed), max_tokens=2), headers=headers
            ) as resp:
                if resp.status != 200:
                    text = clean(await resp.text(errors="replace"))
                    if api_key:
                        text = text.replace(api_key, "***")
                    _refuse(resp.status, text[:160], where, cfg)
                rec = RequestRecord()
                await _stream(resp, rec, time.perf_counter())
                if rec.error == "bad_response" or (not rec.ok and rec.error is None):
                    kind = resp.headers.get("Content-Type", "no content type")
                    raise InputError(
                        f"{where} answered HTTP 200 but not an OpenAI stream ({clean(kind)}); "
                        "check --url and --endpoint"
                    )
                if rec.error == "stream_error":
                    raise DeviceError(f"{where} sent an error in its first stream; see its log")
    except TimeoutError:
        raise DeviceError(f"{where} did not answer a first request within 60 s") from None
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
        if resp.status == 200:
            with contextlib.suppress(ValueError):
                doc = json.loads(await resp.read())
    data = doc.get("data") if isinstance(doc, dict) else None
    if isinstance(data, list) and data and isinstance(data[0], dict):
        name = data[0].get("id")
        if isinstance(name, str) and name:
            return name
    raise InputError(f"{shown_url(url)} lists no model; give --model NAME")


def _with_model(cfg: ServeConfig, model: str) -> ServeConfig:
    from dataclasses import replace

    return replace(cfg, model=model)


async def _run(
    cfg: ServeConfig, api_key: str | None, progress: Progress | None, stop: asyncio.Event
) -> tuple[ServeConfig, list[LevelResult], list[str]]:
    import aiohttp as aio

    headers = _headers(api_key)
    top = int(max(cfg.levels)) if cfg.mode == "concurrency" else cfg.max_inflight
    connector = aio.TCPConnector(limit=top + 1, limit_per_host=0, ttl_dns_cache=300)
    timeout = aio.ClientTimeout(
        total=None, sock_connect=min(cfg.timeout_s, 10.0), sock_read=cfg.stall_timeout_s
    )
    levels: list[LevelResult] = []
    notes: list[str] = []
    async with aio.ClientSession(connector=connector, timeout=timeout) as session:
        probe = asyncio.ensure_future(_probe(session, cfg, headers, api_key))
        if await _until_done_or_stop([probe], stop):
            return cfg, levels, ["interrupted before the first level"]
        cfg = _with_model(cfg, probe.result())
        for i, level in enumerate(cfg.levels):
            if stop.is_set():
                notes.append(f"interrupted: levels from {level:g} on were not run")
                break
            unit = "concurrency" if cfg.mode == "concurrency" else "req/s"
            ticker = _Ticker(progress, f"{unit} {level:g}", cfg.max_requests)
            ticker.flush()
            if cfg.mode == "concurrency":
                recs, cancelled, wall, why = await _concurrency_level(
                    session, cfg, i, stop=stop, headers=headers, ticker=ticker
                )
            else:
                recs, cancelled, wall, why, held = await _rate_level(
                    session, cfg, i, stop=stop, headers=headers, ticker=ticker
                )
                if held:
                    notes.append(
                        f"rate {level:g}: {held} arrivals waited for a free slot "
                        f"(--max-inflight {cfg.max_inflight}); the offered rate was not met"
                    )
            ticker.flush()
            levels.append(
                summarise_level(
                    level, cfg.mode, recs, duration_s=wall, cancelled=cancelled, stopped_by=why
                )
            )
    return cfg, levels, notes


async def _watch(stop: threading.Event, event: asyncio.Event) -> None:
    while not stop.is_set():
        await asyncio.sleep(0.05)
    event.set()


def run_serve(
    cfg: ServeConfig,
    *,
    created_at: str,
    api_key: str | None = None,
    progress: Progress | None = None,
    stop: threading.Event | None = None,
) -> ServeResult:
    """Run every level and summarise. SIGINT (Ctrl-C, in the main thread) or `stop` ends the
    run early with what was measured (`interrupted: true`)."""
    require("aiohttp", "bench")
    cpu0, wall0 = time.process_time(), time.perf_counter()

    async def main() -> tuple[ServeConfig, list[LevelResult], list[str], bool]:
        loop = asyncio.get_running_loop()
        event = asyncio.Event()
        handled = False
        if threading.current_thread() is threading.main_thread():
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signal.SIGINT, event.set)
                handled = True
        watcher = asyncio.ensure_future(_watch(stop, event)) if stop is not None else None
        try:
            done_cfg, levels, notes = await _run(cfg, api_key, progress, event)
        finally:
            if handled:
                loop.remove_signal_handler(signal.SIGINT)
            if watcher is not None:
                watcher.cancel()
                await asyncio.gather(watcher, return_exceptions=True)
        return done_cfg, levels, notes, event.is_set()

    done_cfg, levels, notes, interrupted = asyncio.run(main())
    return make_result(
        done_cfg,
        levels,
        created_at=created_at,
        interrupted=interrupted,
        wall_s=time.perf_counter() - wall0,
        client_cpu_s=time.process_time() - cpu0,
        notes=notes,
    )
