"""Checkpoint speed: sync save of a 1 GiB state vs the disk's sequential write speed, and the
training loop's blocking time with `save_async` vs a sync save.

The disk speed is measured dd-like on the same directory: 1 GiB in 8 MiB writes, then fsync.
Targets (runtime issue): sync save >= 80% of the disk speed; save_async blocking <= 10% of a
sync save. The disk and the save are measured in `--repeats` interleaved pairs (alternating
which goes first), reported as medians and as per-pair ratios, because a virtual disk's
speed drifts between runs. Run:

    PYTHONPATH=src python benchmarks/bench_runtime_ckpt.py --dir /path/on/the/checkpoint/disk
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

from gpurent.runtime import CheckpointManager

GIB = 2**30


def disk_write_gbps(root: Path, size_bytes: int = GIB, block_bytes: int = 8 * 2**20) -> float:
    """Sequential write speed with fsync, GB/s (10**9 bytes/s), like `dd ... conv=fsync`."""
    block = os.urandom(block_bytes)
    path = root / "dd.bin"
    t0 = time.perf_counter()
    with open(path, "wb") as fh:
        for _ in range(size_bytes // block_bytes):
            fh.write(block)
        fh.flush()
        os.fsync(fh.fileno())
    elapsed = time.perf_counter() - t0
    path.unlink()
    return size_bytes / elapsed / 1e9


def make_state() -> dict[str, object]:
    """1 GiB of float32 in four 256 MiB tensors, plus plain data."""
    gen = torch.Generator().manual_seed(0)
    tensors = {f"layer{i}": torch.rand(GIB // 16, generator=gen) for i in range(4)}
    return {"model": tensors, "epoch": 3, "lr": 1e-4}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", default=None, help="directory on the disk to measure")
    parser.add_argument("--repeats", type=int, default=5, help="interleaved disk/save pairs")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="gpurent-ckpt-bench-", dir=args.dir))
    try:
        state = make_state()
        disk, sync_s, block_s, async_total_s = [], [], [], []
        mgr = CheckpointManager(root / "ckpt", keep_last=1, interval=None)
        for i in range(args.repeats):
            # A noisy (virtual) disk drifts between runs: measure each save next to its own dd
            # run, alternating which goes first, and compare within the pair.
            if i % 2 == 0:
                disk.append(disk_write_gbps(root))
            t0 = time.perf_counter()
            mgr.save(state, 2 * i)
            sync_s.append(time.perf_counter() - t0)
            if i % 2 == 1:
                disk.append(disk_write_gbps(root))
            t0 = time.perf_counter()
            future = mgr.save_async(state, 2 * i + 1)
            block_s.append(time.perf_counter() - t0)
            future.result()
            async_total_s.append(time.perf_counter() - t0)
        mgr.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    disk_gbps = statistics.median(disk)
    sync_med = statistics.median(sync_s)
    save_gbps = GIB / sync_med / 1e9
    ratios = [GIB / s / 1e9 / d for s, d in zip(sync_s, disk, strict=True)]
    block_med = statistics.median(block_s)
    block_warm = statistics.median(block_s[1:]) if len(block_s) > 1 else block_med
    print(
        f"disk sequential write (fsync): median {disk_gbps:.2f} GB/s  "
        f"runs={[round(d, 2) for d in disk]}"
    )
    print(
        f"sync save of 1 GiB: median {sync_med:.2f} s = {save_gbps:.2f} GB/s "
        f"= {100 * save_gbps / disk_gbps:.0f}% of the median disk  "
        f"runs_s={[round(s, 2) for s in sync_s]}"
    )
    print(
        f"sync save / disk, per interleaved pair: median {100 * statistics.median(ratios):.0f}%  "
        f"pairs={[f'{100 * r:.0f}%' for r in ratios]}"
    )
    print(
        f"save_async blocking: first {block_s[0]:.3f} s, warm median {block_warm:.3f} s "
        f"= {100 * block_warm / sync_med:.1f}% of a sync save; "
        f"background total {statistics.median(async_total_s):.2f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
