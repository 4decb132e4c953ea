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
import random
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from gpurent.bench import serve_request as rq
from gpurent.bench.serve_config import ServeConfig
from gpurent.bench.serve_probe import probe
from gpurent.bench.serve_result import (
    LevelResult,
    RequestRecord,
    ServeResult,
    StoppedBy,
    make_result,
    summarise_level,
)
from gpurent.errors import require

if TYPE_CHECKING:
    import aiohttp

# level label, requests finished, requests to send (None: bounded by time only)
Progress = Callable[[str, int, int | None], None]
PROGRESS_EVERY_S = 0.1


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
            records.append(await rq.request(session, cfg, rq.body(cfg, rng), headers))
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
            records.append(await rq.request(session, cfg, body, headers))
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
            slot = asyncio.ensure_future(inflight.acquire())
            if await _until_done_or_stop([slot], stop):  # Ctrl-C while every slot is busy
                break
        else:
            await inflight.acquire()
        tasks.append(asyncio.ensure_future(one(rq.body(cfg, rng))))
    stopped = stop.is_set() or await _until_done_or_stop(tasks, stop)
    if stopped:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        why = "interrupted"
    elapsed = time.perf_counter() - start
    return records, len(tasks) - len(records), elapsed, why, held_back


async def _run(
    cfg: ServeConfig, api_key: str | None, progress: Progress | None, stop: asyncio.Event
) -> tuple[ServeConfig, list[LevelResult], list[str]]:
    import aiohttp as aio

    hdrs = rq.headers(api_key)
    top = int(max(cfg.levels)) if cfg.mode == "concurrency" else cfg.max_inflight
    connector = aio.TCPConnector(limit=top + 1, limit_per_host=0, ttl_dns_cache=300)
    timeout = aio.ClientTimeout(
        total=None, sock_connect=min(cfg.timeout_s, 10.0), sock_read=cfg.stall_timeout_s
    )
    levels: list[LevelResult] = []
    notes: list[str] = []
    async with aio.ClientSession(connector=connector, timeout=timeout) as session:
        first = asyncio.ensure_future(probe(session, cfg, hdrs, api_key))
        if await _until_done_or_stop([first], stop):
            return cfg, levels, ["interrupted before the first level"]
        cfg = replace(cfg, model=first.result())
        for i, level in enumerate(cfg.levels):
            if stop.is_set():
                notes.append(f"interrupted: levels from {level:g} on were not run")
                break
            unit = "concurrency" if cfg.mode == "concurrency" else "req/s"
            ticker = _Ticker(progress, f"{unit} {level:g}", cfg.max_requests)
            ticker.flush()
            if cfg.mode == "concurrency":
                recs, cancelled, wall, why = await _concurrency_level(
                    session, cfg, i, stop=stop, headers=hdrs, ticker=ticker
                )
            else:
                recs, cancelled, wall, why, held = await _rate_level(
                    session, cfg, i, stop=stop, headers=hdrs, ticker=ticker
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
