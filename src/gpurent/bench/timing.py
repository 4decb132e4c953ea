"""Timing helpers: CUDA events on the GPU, perf_counter on the CPU, and robust statistics.

On CUDA, kernels run asynchronously: a host clock would time the launch, not the work. So a GPU
timing records a `torch.cuda.Event` before and after each call and synchronizes before reading
them (elapsed_time is in milliseconds). On the CPU the work is synchronous and perf_counter is
exact enough for calls of more than ~100 us.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


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
            durations.append(time.perf_counter() - t0)
        if deadline is not None and len(durations) >= 2 and time.monotonic() > deadline:
            break
    return durations
