"""Timing helpers: CUDA events on the GPU, perf_counter on the CPU, and robust statistics.

On CUDA, kernels run asynchronously: a host clock would time the launch, not the work. So a GPU
timing records a `torch.cuda.Event` before and after each call and synchronizes before reading
them (elapsed_time is in milliseconds). On the CPU the work is synchronous and perf_counter is
exact enough for calls of more than ~100 us.

Test hook: when `GPURENT_BENCH_THROTTLE` is a number f > 1, every timed CPU call (and every
timed all-reduce) sleeps (f - 1) times its own duration inside the timed region, so the process
really delivers 1/f of its work per second, like a node whose cores are shared or throttled. The
fleet tests set it on one Ray node to make that node an honest outlier; the bench result says so
in its notes. Nobody sets it in production.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gpurent.errors import InputError

THROTTLE_ENV = "GPURENT_BENCH_THROTTLE"


def throttle_factor() -> float:
    """The test hook's slow-down factor (1.0 when `GPURENT_BENCH_THROTTLE` is unset)."""
    raw = os.environ.get(THROTTLE_ENV, "").strip()
    if not raw:
        return 1.0
    try:
        factor = float(raw)
    except ValueError:
        factor = float("nan")
    if not 1.0 <= factor <= 1000.0:
        raise InputError(
            f"{THROTTLE_ENV}={raw!r}: expected a number from 1 to 1000 (a test hook; unset it)"
        )
    return factor


def throttle(elapsed_s: float, factor: float) -> None:
    """Sleep so that a call of `elapsed_s` takes `factor` times as long (the test hook)."""
    if factor > 1.0:
        time.sleep(elapsed_s * (factor - 1.0))


@dataclass(frozen=True, slots=True, kw_only=True)
class Spread:
    """Median and 10th/90th percentiles of a sample of durations, in seconds."""

    median_s: float
    p10_s: float
    p90_s: float
    min_s: float


def spread(durations_s: Sequence[float]) -> Spread:
    """Median, p10, p90 and min of `durations_s` (needs at least one value)."""
    if not durations_s:
        raise ValueError("no durations to summarise")
    values = sorted(durations_s)
    if len(values) == 1:
        v = values[0]
        return Spread(median_s=v, p10_s=v, p90_s=v, min_s=v)
    q = statistics.quantiles(values, n=10, method="inclusive")
    return Spread(median_s=statistics.median(values), p10_s=q[0], p90_s=q[-1], min_s=values[0])


def synchronize(torch: Any, device: str) -> None:
    """Wait for the device's queued work to finish (CUDA only)."""
    if device == "cuda":
        torch.cuda.synchronize()


def time_calls(
    torch: Any,
    fn: Callable[[], object],
    *,
    device: str,
    warmup: int,
    repeats: int,
    deadline: float | None = None,
) -> list[float]:
    """Seconds per call of `fn`, `repeats` times after `warmup` untimed calls.

    Stops early (after at least 2 timed calls) when `time.monotonic()` passes `deadline`.
    """
    for _ in range(warmup):
        fn()
    synchronize(torch, device)
    slow = throttle_factor() if device != "cuda" else 1.0
    durations: list[float] = []
    for _ in range(repeats):
        if device == "cuda":
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            durations.append(start.elapsed_time(end) / 1e3)
        else:
            t0 = time.perf_counter()
            fn()
            throttle(time.perf_counter() - t0, slow)
            durations.append(time.perf_counter() - t0)
        if deadline is not None and len(durations) >= 2 and time.monotonic() > deadline:
            break
    return durations
