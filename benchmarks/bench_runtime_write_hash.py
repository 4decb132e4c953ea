"""What the overlapped sha256 costs a 1 GiB write on this machine: plain `write` of a tensor's
memory in 16 MiB chunks + fsync, alternated with the same write while a second thread hashes
each chunk (what `serialize.HashingWriter` does). Run:

    PYTHONPATH=src python benchmarks/bench_runtime_write_hash.py --dir /work --repeats 3
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import torch

GIB = 2**30
CHUNK_BYTES = 16 * 2**20


def write_gbps(path: Path, data: memoryview, pool: ThreadPoolExecutor | None) -> float:
    digest = hashlib.sha256()
    pending: Future[None] | None = None
    t0 = time.perf_counter()
    with open(path, "wb") as fh:
        for offset in range(0, len(data), CHUNK_BYTES):
            chunk = data[offset : offset + CHUNK_BYTES]
            if pool is not None:
                if pending is not None:
                    pending.result()
                pending = pool.submit(digest.update, chunk)
            fh.write(chunk)
        if pending is not None:
            pending.result()
        fh.flush()
        os.fsync(fh.fileno())
    elapsed = time.perf_counter() - t0
    path.unlink()
    return len(data) / elapsed / 1e9


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", default=None)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    tensor = torch.rand(GIB // 4, generator=torch.Generator().manual_seed(0))
    data = memoryview(tensor.numpy()).cast("B")
    path = Path(tempfile.mkdtemp(dir=args.dir)) / "write.bin"
    with ThreadPoolExecutor(1) as pool:
        for _ in range(args.repeats):
            plain = write_gbps(path, data, None)
            hashed = write_gbps(path, data, pool)
            print(f"write {plain:.2f} GB/s, write + overlapped sha256 {hashed:.2f} GB/s")
    path.parent.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())
