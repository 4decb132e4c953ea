"""All-reduce bus bandwidth across the node's GPUs (gloo between CPU processes without GPUs).

Definitions from nccl-tests (PERFORMANCE.md): algbw = bytes / time; for all-reduce
busbw = algbw x 2(n-1)/n, the traffic each link carries in a ring, comparable with the link's
bandwidth whatever n is. Large messages are used so latency does not dominate; the best message
size is reported, with every size in the detail. The time of one all-reduce is the maximum over
ranks of the median per-call time (the slowest rank sets the pace).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpurent.bench.result import Measurement
from gpurent.bench.spawn import process_group, run_spawned
from gpurent.bench.timing import spread, throttle, throttle_factor
from gpurent.units import BYTES_PER_GB


def bus_bandwidth_gbps(size_bytes: int, seconds: float, world_size: int) -> float:
    """nccl-tests busbw for all-reduce, GB/s."""
    algbw = size_bytes / seconds / BYTES_PER_GB
    return algbw * 2 * (world_size - 1) / world_size


def time_allreduce(
    torch: Any, dist: Any, *, device: str, sizes_mib: list[float], repeats: int
) -> dict[str, float]:
    """Median seconds of one fp32 all-reduce per message size (keys: the size in MiB as text),
    in a process group this process has joined. The throttle test hook applies (timing.py)."""
    slow = throttle_factor()
    medians: dict[str, float] = {}
    for size_mib in sizes_mib:
        n = int(size_mib * 2**20) // 4
        buf = torch.ones(n, dtype=torch.float32, device=device)
        for _ in range(2):
            dist.all_reduce(buf)
        durations = []
        for _ in range(repeats):
            if device == "cuda":
                torch.cuda.synchronize()
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(buf)
            if device == "cuda":
                torch.cuda.synchronize()
            throttle(time.perf_counter() - t0, slow)
            durations.append(time.perf_counter() - t0)
        medians[str(size_mib)] = spread(durations).median_s
    return medians


def _worker(rank: int, world_size: int, args: dict[str, Any]) -> dict[str, float]:
    import torch.distributed as dist

    device = args["device"]
    with process_group(rank, world_size, device) as torch:
        return time_allreduce(
            torch, dist, device=device, sizes_mib=args["sizes_mib"], repeats=args["repeats"]
        )


def allreduce_rank(
    rank: int,
    world_size: int,
    *,
    init_method: str,
    device: str,
    sizes_mib: list[float],
    repeats: int,
    timeout_s: float,
) -> dict[str, float]:
    """One rank of an all-reduce across machines (one process per node, started by a launcher
    such as Ray): joins the group at `init_method` (`tcp://HOST:PORT` of rank 0), NCCL on this
    process's first visible GPU or gloo on the CPU, times it, and leaves the group."""
    import datetime

    import torch
    import torch.distributed as dist

    if device == "cuda":
        torch.cuda.set_device(0)  # the launcher makes one GPU visible to this process
    else:
        torch.set_num_threads(1)
    dist.init_process_group(
        backend="nccl" if device == "cuda" else "gloo",
        init_method=init_method,
        rank=rank,
        world_size=world_size,
        timeout=datetime.timedelta(seconds=timeout_s),
    )
    try:
        return time_allreduce(torch, dist, device=device, sizes_mib=sizes_mib, repeats=repeats)
    finally:
        dist.destroy_process_group()


@dataclass(frozen=True, slots=True, kw_only=True)
class SizeBandwidth:
    """One message size: the slowest rank's median time, algbw and busbw (nccl-tests terms)."""

    size_mib: float
    time_s: float
    algbw_gbps: float
    busbw_gbps: float


def size_bandwidths(
    per_rank: Sequence[Mapping[str, float]], sizes_mib: Sequence[float], world_size: int
) -> list[SizeBandwidth]:
    """algbw and busbw per size from every rank's medians (the slowest rank sets the pace)."""
    rows = []
    for size in sizes_mib:
        slowest = max(r[str(size)] for r in per_rank)
        size_bytes = int(size * 2**20) // 4 * 4
        rows.append(
            SizeBandwidth(
                size_mib=size,
                time_s=slowest,
                algbw_gbps=size_bytes / slowest / BYTES_PER_GB,
                busbw_gbps=bus_bandwidth_gbps(size_bytes, slowest, world_size),
            )
        )
    return rows


def run_allreduce(
    *, device: str, world_size: int, sizes_mib: list[float], repeats: int, timeout_s: float
) -> list[Measurement]:
    """busbw over `world_size` processes (one per GPU, or CPU processes with gloo)."""
    if world_size < 2:
        return [
            Measurement(
                key="allreduce.busbw",
                benchmark="allreduce",
                value=None,
                unit="GB/s",
                detail="not applicable: one GPU, nothing to all-reduce with",
            )
        ]
    per_rank = run_spawned(
        _worker,
        world_size,
        {"device": device, "sizes_mib": sizes_mib, "repeats": repeats},
        timeout_s,
    )
    by_size = {
        row.size_mib: row.busbw_gbps for row in size_bandwidths(per_rank, sizes_mib, world_size)
    }
    best = max(by_size, key=lambda s: by_size[s])
    backend = (
        f"NCCL over {world_size} GPUs"
        if device == "cuda"
        else (f"gloo over {world_size} CPU processes on 127.0.0.1 (not a GPU interconnect figure)")
    )
    swept = ", ".join(f"{s:g} MiB: {v:.3g}" for s, v in by_size.items())
    return [
        Measurement(
            key="allreduce.busbw",
            benchmark="allreduce",
            value=by_size[best],
            unit="GB/s",
            detail=f"{backend}; best at {best:g} MiB fp32; busbw GB/s {{{swept}}}",
        )
    ]
