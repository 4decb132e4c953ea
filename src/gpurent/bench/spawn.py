"""Run a function in `world_size` fresh processes joined by torch.distributed, on one node.

This does what `torchrun --nproc-per-node N` does for a single node: it sets MASTER_ADDR
(127.0.0.1), MASTER_PORT (a free port), RANK, LOCAL_RANK and WORLD_SIZE, and starts processes
with the "spawn" method (CUDA cannot be used in forked children). Each worker returns a
JSON-able value through a queue; any worker error becomes one DeviceError line.
"""

from __future__ import annotations

import contextlib
import os
import queue
import socket
import traceback
from collections.abc import Callable, Iterator
from typing import Any

from gpurent.errors import DeviceError

Worker = Callable[[int, int, dict[str, Any]], Any]


@contextlib.contextmanager
def process_group(rank: int, world_size: int, device: str) -> Iterator[Any]:
    """Join this worker to the job's process group (NCCL on GPU `rank`, or gloo with one thread
    per CPU process) and leave it on exit; yields `torch`."""
    import torch
    import torch.distributed as dist

    if device == "cuda":
        torch.cuda.set_device(rank)
    else:
        torch.set_num_threads(1)
    dist.init_process_group(
        backend="nccl" if device == "cuda" else "gloo",
        rank=rank,
        world_size=world_size,
        device_id=torch.device("cuda", rank) if device == "cuda" else None,
    )
    try:
        yield torch
    finally:
        dist.destroy_process_group()


def free_port() -> int:
    """A TCP port free on 127.0.0.1 at the time of asking."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _entry(rank: int, spec: tuple[int, int, Worker, dict[str, Any], Any]) -> None:
    world_size, port, worker, args, out = spec
    os.environ.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE=str(world_size),
    )
    try:
        out.put((rank, "ok", worker(rank, world_size, args)))
    except BaseException as exc:  # reported to the parent, which raises one clear error
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        out.put((rank, "error", last))


def run_spawned(
    worker: Worker, world_size: int, args: dict[str, Any], timeout_s: float
) -> list[Any]:
    """Results of `worker(rank, world_size, args)` for every rank, in rank order."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    results: Any = ctx.Queue()
    port = free_port()
    procs = [
        ctx.Process(target=_entry, args=(r, (world_size, port, worker, args, results)), daemon=True)
        for r in range(world_size)
    ]
    for p in procs:
        p.start()
    got: dict[int, Any] = {}
    try:
        for _ in range(world_size):
            rank, status, value = results.get(timeout=timeout_s)
            if status != "ok":
                raise DeviceError(f"distributed benchmark failed on rank {rank}: {value}")
            got[rank] = value
    except queue.Empty:
        raise DeviceError(
            f"distributed benchmark: no answer from {world_size - len(got)} of {world_size} "
            f"processes within {timeout_s:.0f} s (check the GPUs and the NCCL/gloo setup)"
        ) from None
    finally:
        for p in procs:
            p.join(timeout=10)
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)
        results.close()
        results.join_thread()
    return [got[r] for r in range(world_size)]
