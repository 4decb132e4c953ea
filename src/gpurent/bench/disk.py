"""Disk: sequential write and read, and random 4 KiB read IOPS, on the checkpoint path.

- Sequential write: 4 MiB chunks then fsync; the time includes the fsync, so the figure is what
  reaches the device, not the page cache (a checkpoint is not safe before its fsync).
- Sequential read: the page cache would answer from RAM, and dropping caches needs root. So the
  file is read with O_DIRECT where the filesystem supports it (bypasses the cache); otherwise
  after `posix_fadvise(DONTNEED)` on the freshly fsynced file, which evicts its clean pages on
  Linux without root. The detail says which; other filesystems (tmpfs, some network and overlay
  filesystems) may still serve from memory: that is stated as a caveat, not hidden.
- Random read: 4 KiB reads at random 4 KiB-aligned offsets (seeded), one at a time (queue depth
  1, like a data loader reading small files), with O_DIRECT or after DONTNEED + FADV_RANDOM.

The scratch file lives in a fresh private directory (`tempfile.mkdtemp`, mode 0700) inside the
given path and is created with `tempfile.mkstemp` (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600), so a
file or symlink planted in the path is never opened, followed or overwritten, even as root; the
directory is removed afterwards.
"""

from __future__ import annotations

import errno
import mmap
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

from gpurent.bench.result import Measurement
from gpurent.errors import InputError
from gpurent.units import BYTES_PER_GB

CHUNK_BYTES = 4 * 2**20
BLOCK_BYTES = 4096


def _open_direct(path: Path) -> tuple[int, str]:
    """An fd for reading `path`, with O_DIRECT when supported; and the method's name."""
    flag = getattr(os, "O_DIRECT", 0)
    if flag:
        try:
            return os.open(path, os.O_RDONLY | flag), "O_DIRECT"
        except OSError as exc:
            if exc.errno not in (errno.EINVAL, errno.EOPNOTSUPP):
                raise
    fd = os.open(path, os.O_RDONLY)
    if hasattr(os, "posix_fadvise"):
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        return fd, "page cache dropped with posix_fadvise(DONTNEED)"
    return fd, "buffered (page cache may answer: figure may be RAM speed)"


def _read_all(fd: int, size_bytes: int) -> int:
    buf = mmap.mmap(-1, CHUNK_BYTES)  # page-aligned, as O_DIRECT needs
    try:
        total = 0
        while total < size_bytes:
            got = os.preadv(fd, [buf], total)
            if got <= 0:
                break
            total += got
        return total
    finally:
        buf.close()


def run_disk(
    directory: Path,
    *,
    file_mib: int,
    random_reads: int,
    seed: int = 0,
    deadline: float | None = None,
) -> list[Measurement]:
    """Sequential write/read GB/s and random 4 KiB read IOPS in `directory` (file removed after)."""
    if not directory.is_dir():
        raise InputError(f"--path {directory}: not an existing directory")
    size_bytes = max(1, file_mib) * 2**20
    chunk = os.urandom(CHUNK_BYTES)  # incompressible, so a compressing filesystem cannot cheat
    scratch = Path(tempfile.mkdtemp(prefix=".gpurent-bench-", dir=directory))
    try:
        fd, name = tempfile.mkstemp(prefix="seq-", suffix=".tmp", dir=scratch)
        path = Path(name)
        try:
            t0 = time.perf_counter()
            written = 0
            while written < size_bytes:
                written += os.write(fd, chunk)
            os.fsync(fd)
            write_s = time.perf_counter() - t0
        finally:
            os.close(fd)

        fd, method = _open_direct(path)
        try:
            t0 = time.perf_counter()
            read = _read_all(fd, written)
            read_s = time.perf_counter() - t0
        finally:
            os.close(fd)

        fd, rand_method = _open_direct(path)
        if hasattr(os, "posix_fadvise"):
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        rng = random.Random(seed)
        blocks = written // BLOCK_BYTES
        buf = mmap.mmap(-1, BLOCK_BYTES)
        try:
            done = 0
            t0 = time.perf_counter()
            for _ in range(random_reads):
                os.preadv(fd, [buf], rng.randrange(blocks) * BLOCK_BYTES)
                done += 1
                if deadline is not None and done >= 100 and time.monotonic() > deadline:
                    break
            rand_s = time.perf_counter() - t0
        finally:
            buf.close()
            os.close(fd)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    where = f"{directory} ({file_mib} MiB file)"
    return [
        Measurement(
            key="disk.seq-write",
            benchmark="disk",
            value=written / write_s / BYTES_PER_GB,
            unit="GB/s",
            detail=f"4 MiB writes + fsync, {where}",
        ),
        Measurement(
            key="disk.seq-read",
            benchmark="disk",
            value=read / read_s / BYTES_PER_GB,
            unit="GB/s",
            detail=f"4 MiB reads, {method}, {where}",
        ),
        Measurement(
            key="disk.rand-read",
            benchmark="disk",
            value=done / rand_s,
            unit="IOPS",
            detail=f"{done} random 4 KiB reads at queue depth 1, {rand_method}, {where}",
        ),
    ]
