"""All-reduce bus bandwidth across the node's GPUs (gloo between CPU processes without GPUs).

Definitions from nccl-tests (PERFORMANCE.md): algbw = bytes / time; for all-reduce
busbw = algbw x 2(n-1)/n, the traffic each link carries in a ring, comparable with the link's
bandwidth whatever n is. Large messages are used so latency does not dominate; the best message
size is reported, with every size in the detail. The time of one all-reduce is the maximum over
ranks of the median per-call time (the slowest rank sets the pace).
"""

from __future__ import annotations

import time
from typing import Any

from gpurent.bench.result import Measurement
from gpurent.bench.spawn import process_group, run_spawned
from gpurent.bench.timing import spread
from gpurent.units import BYTES_PER_GB


def bus_bandwidth_gbps(size_bytes: int, seconds: float, world_size: int) -> float:
    """nccl-tests busbw for all-reduce, GB/s."""
    algbw = size_bytes / seconds / BYTES_PER_GB
    return algbw * 2 * (world_size - 1) / world_size


def _worker(rank: int, world_size: int, args: dict[str, Any]) -> dict[str, float]:
    import torch.distributed as dist

    device = args["device"]
    with process_group(rank, world_size, device) as torch:
        medians: dict[str, float] = {}
        for size_mib in args["sizes_mib"]:
            n = int(size_mib * 2**20) // 4
            buf = torch.ones(n, dtype=torch.float32, device=device)
            for _ in range(2):
                dist.all_reduce(buf)
            durations = []
            for _ in range(args["repeats"]):
                if device == "cuda":
                    torch.cuda.synchronize()
                dist.barrier()
                t0 = time.perf_counter()
                dist.all_reduce(buf)
                if device == "cuda":
                    torch.cuda.synchronize()
                durations.append(time.perf_counter() - t0)
            medians[str(size_mib)] = spread(durations).median_s
        return medians


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
    by_size = {}
    for size in sizes_mib:
        slowest = max(r[str(size)] for r in per_rank)
        by_size[size] = bus_bandwidth_gbps(int(size * 2**20) // 4 * 4, slowest, world_size)
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
