"""Checkpoint crash suite: SIGKILLs mid-save and mid-rotation, bit flips and truncations in every
file of a checkpoint, full disk and inode exhaustion, two writers on one directory.

What must hold in every case: `load_latest` raises nothing, never returns a corrupt state (every
tensor element and the plain `step` equal the checkpoint's step), and never loses a committed
step (after a crash the newest commit a writer reported, or a newer one, is what loads; a damaged
checkpoint is moved aside, not deleted). Steps start at 10^12, as token counts do.

Each scenario returns a `Tally` (cases tried, cases held, what failed). The test suite runs the
same functions with small counts (`tests/runtime/test_checkpoint_crash.py`); this script runs the
big version. Run (as root for the tmpfs scenarios; they are skipped with a reason otherwise):

    PYTHONPATH=src python benchmarks/bench_reliability_checkpoint.py
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch

from gpurent.errors import DeviceError
from gpurent.runtime import CheckpointManager
from gpurent.runtime.storage import MANIFEST_NAME, MOVED_ASIDE_DIR

BASE_STEP = 10**12
KILL_ELEMENTS = 1 << 16  # 256 KiB of float32: a save takes milliseconds, so kills land everywhere


@dataclasses.dataclass
class Tally:
    scenario: str
    tried: int = 0
    held: int = 0
    skipped: str | None = None
    failures: list[str] = dataclasses.field(default_factory=list)
    counts: dict[str, int] = dataclasses.field(default_factory=dict)

    def count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    def case(self, problem: str | None) -> None:
        self.tried += 1
        if problem is None:
            self.held += 1
        elif len(self.failures) < 20:
            self.failures.append(problem)

    def line(self) -> str:
        if self.skipped:
            return f"{self.scenario}: skipped ({self.skipped})"
        extra = "".join(f" {k}={v}" for k, v in sorted(self.counts.items()))
        return f"{self.scenario}: tried={self.tried} held={self.held}{extra}"


def _state(step: int, elements: int) -> dict[str, Any]:
    return {"w": torch.full((elements,), float(step % 2**24)), "step": step}


def _check(loaded: tuple[int, dict[str, Any]] | None, at_least: int | None) -> str | None:
    """Why a `load_latest` result is wrong (None when it is right)."""
    if loaded is None:
        return None if at_least is None else f"nothing loaded, step {at_least} was committed"
    step, state = loaded
    if state.get("step") != step or not bool(torch.all(state["w"] == float(step % 2**24))):
        return f"corrupt state loaded for step {step}"
    if at_least is not None and step < at_least:
        return f"loaded step {step}, but step {at_least} was committed"
    return None


def _load(root: Path) -> tuple[tuple[int, dict[str, Any]] | None, str | None]:
    try:
        return CheckpointManager(root, interval=None).load_latest(), None
    except Exception as exc:
        return None, f"load_latest raised {type(exc).__name__}: {exc}"


def _fork_writer(
    root: Path, steps: Iterator[int] | None, keep_last: int, elements: int
) -> tuple[int, int]:
    """Fork a process that resumes from `root` and saves until killed (or until `steps` ends),
    writing each committed step to a pipe. Returns (pid, read end of the pipe)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        code = 1
        try:
            os.close(read_fd)
            mgr = CheckpointManager(root, keep_last=keep_last, interval=None)
            if steps is None:
                loaded = mgr.load_latest()
                start = loaded[0] if loaded else BASE_STEP
                steps = iter(range(start + 1, start + 10**9))
            for step in steps:
                mgr.save(_state(step, elements), step)
                os.write(write_fd, f"{step}\n".encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    return pid, read_fd


def _reported(read_fd: int) -> list[int]:
    chunks = []
    while chunk := os.read(read_fd, 65536):
        chunks.append(chunk)
    os.close(read_fd)
    return [int(line) for line in b"".join(chunks).split()]


def _damage_newest(root: Path, rng: random.Random) -> str | None:
    dirs = sorted((p for p in root.iterdir() if p.name.startswith("step-")), key=lambda p: p.name)
    if not dirs:
        return None
    target = dirs[-1] / rng.choice(["torch.pt", "data.json", MANIFEST_NAME])
    data = bytearray(target.read_bytes())
    data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    target.write_bytes(bytes(data))
    return dirs[-1].name


def _still_kept(root: Path, name: str) -> bool:
    aside = root / MOVED_ASIDE_DIR
    return (root / name).is_dir() or (
        aside.is_dir() and any(p.name.startswith(name) and p.is_dir() for p in aside.iterdir())
    )


def kill_trials(root: Path, kills: int, seed: int = 0) -> Tally:
    """SIGKILL a saving process at random times: half before its first commit, half after (the
    time to a first commit is tracked as the directory changes). Every third trial first damages
    the newest checkpoint, so the writer resumes from an older one and its rotation moves the
    damaged one aside while it may be killed."""
    tally = Tally("sigkill during save and rotation")
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    with CheckpointManager(root / "probe", keep_last=2, interval=None) as probe:
        times = []
        for step in range(5):
            t0 = time.perf_counter()
            probe.save(_state(step, KILL_ELEMENTS), step)
            times.append(time.perf_counter() - t0)
        save_s = sorted(times)[2]
    t0 = time.perf_counter()  # a writer's start: fork, resume (load_latest), first save
    pid, read_fd = _fork_writer(root / "probe", None, keep_last=2, elements=KILL_ELEMENTS)
    os.read(read_fd, 64)
    first_commit_s = time.perf_counter() - t0
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    _reported(read_fd)
    shutil.rmtree(root / "probe")
    ckpt = root / "ckpt"
    ckpt.mkdir()
    for trial in range(kills):
        damaged = _damage_newest(ckpt, rng) if trial % 3 == 2 else None
        before, problem = _load(ckpt)
        floor = before[0] if before else None
        t0 = time.perf_counter()
        pid, read_fd = _fork_writer(ckpt, None, keep_last=2, elements=KILL_ELEMENTS)
        if trial % 2:  # before the first commit: in the resume, the first save or its rotation
            time.sleep(rng.uniform(0.0, first_commit_s))
        else:  # after the first commit, in a later save (or its rotation)
            if select.select([read_fd], [], [], 10.0)[0]:
                first_commit_s = 0.7 * first_commit_s + 0.3 * (time.perf_counter() - t0)
            time.sleep(rng.uniform(0.0, 6.0 * save_s))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        steps = _reported(read_fd)
        if steps:
            floor = max(steps)
        loaded, raised = _load(ckpt)
        problem = problem or raised or _check(loaded, floor)
        if damaged is not None:
            tally.count("damaged_first")
            if not _still_kept(ckpt, damaged):
                problem = problem or f"damaged checkpoint {damaged} was deleted, not moved aside"
            elif not (ckpt / damaged).exists():
                tally.count("moved_aside")
        if not steps:
            tally.count("killed_before_a_commit")
        tally.case(problem)
    return tally


def _flip_cases(size: int, limit: int | None, rng: random.Random) -> list[int]:
    bits = range(size * 8)
    return list(bits) if limit is None or limit >= size * 8 else rng.sample(bits, limit)


def bitflip_trials(root: Path, per_file: int | None, seed: int = 0) -> Tally:
    """Flip one bit (every bit, or `per_file` random bits per file) and truncate at several
    lengths in every file of the newest checkpoint, manifest included; load after each."""
    tally = Tally("bit flips and truncations in every file")
    rng = random.Random(seed)
    older, newest = BASE_STEP + 1, BASE_STEP + 2
    with CheckpointManager(root, keep_last=3, interval=None) as mgr:
        mgr.save(_state(older, 64), older)
        info = mgr.save(_state(newest, 64), newest)
    for filename in ("data.json", "torch.pt", MANIFEST_NAME):
        path = root / info.name / filename
        original = path.read_bytes()
        for bit in _flip_cases(len(original), per_file, rng):
            data = bytearray(original)
            data[bit // 8] ^= 1 << (bit % 8)
            path.write_bytes(bytes(data))
            loaded, raised = _load(root)
            tally.case(raised or _check(loaded, older))
            tally.count(f"{filename}_bits")
            tally.count("loaded_newest_intact" if loaded and loaded[0] == newest else "fell_back")
        cuts = sorted(
            {0, 1, len(original) // 2, len(original) - 1}
            | {rng.randrange(len(original)) for _ in range(4)}
        )
        for cut in cuts:
            path.write_bytes(original[:cut])
            loaded, raised = _load(root)
            tally.case(raised or _check(loaded, older))
            tally.count("truncations")
        path.write_bytes(original)
    return tally


@contextlib.contextmanager
def small_tmpfs(where: Path, size: str, inodes: int) -> Iterator[Path | str]:
    """A tmpfs of `size` bytes and `inodes` inodes at `where`, or the reason it cannot be."""
    where.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size},nr_inodes={inodes}", "tmpfs", str(where)],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        yield f"mount failed: {exc}"
        return
    if proc.returncode != 0:
        yield f"cannot mount a tmpfs here: {proc.stderr.strip() or proc.returncode}"
        return
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False, timeout=30)


def _fill(mount: Path, rng: random.Random, free_bytes: int, free_inodes: int) -> None:
    """Leave about `free_bytes` and `free_inodes` free on `mount`."""
    filler = mount / "filler"
    filler.mkdir(exist_ok=True)
    with contextlib.suppress(OSError), open(filler / "bytes", "wb") as fh:
        stats = os.statvfs(mount)
        to_fill = max(0, stats.f_bavail * stats.f_frsize - free_bytes)
        fh.write(b"\0" * to_fill)
    with contextlib.suppress(OSError):
        stats = os.statvfs(mount)
        for i in range(max(0, stats.f_favail - free_inodes)):
            (filler / f"i{i}").touch()


def full_disk_trials(root: Path, points: int, seed: int = 0) -> Tally:
    """Save on a 2 MiB, 64-inode tmpfs filled to a random level of bytes or inodes: each save
    commits or raises a one-line DeviceError; the newest commit always loads."""
    tally = Tally("full disk and inode exhaustion (tmpfs)")
    rng = random.Random(seed)
    with small_tmpfs(root / "tmpfs", "2m", 64) as mount:
        if isinstance(mount, str):
            tally.skipped = mount
            return tally
        ckpt = mount / "ckpt"
        committed: int | None = None
        step = BASE_STEP
        for point in range(points):
            elements = rng.choice([1 << 12, 1 << 15, 1 << 17])  # 16 KiB to 512 KiB
            if point % 2:
                _fill(mount, rng, free_bytes=rng.randrange(0, 1 << 20), free_inodes=1 << 20)
            else:
                _fill(mount, rng, free_bytes=1 << 30, free_inodes=rng.randrange(0, 12))
            step += 1
            problem: str | None = None
            try:
                with CheckpointManager(ckpt, keep_last=2, interval=None) as mgr:
                    mgr.save(_state(step, elements), step)
                committed = step
            except DeviceError as exc:
                tally.count("no_space_errors")
                if "\n" in str(exc) or "no space left" not in str(exc):
                    problem = f"not a one-line no-space error: {exc!r}"
            except Exception as exc:
                problem = f"save raised {type(exc).__name__}: {exc}"
            shutil.rmtree(mount / "filler", ignore_errors=True)
            loaded, raised = _load(ckpt)
            tally.case(problem or raised or _check(loaded, committed))
    return tally


def two_writers_trials(root: Path, rounds: int, saves_each: int, seed: int = 0) -> Tally:
    """Two processes save interleaved steps into one directory while this one loads: every
    load is consistent, neither writer raises, and the newest step either committed loads."""
    tally = Tally("two writers on one directory")
    rng = random.Random(seed)
    for r in range(rounds):
        ckpt = root / f"two-{r}"
        start = BASE_STEP + 2 * saves_each * r
        a = _fork_writer(ckpt, iter(range(start, start + 2 * saves_each, 2)), 2, 1 << 12)
        b = _fork_writer(ckpt, iter(range(start + 1, start + 2 * saves_each, 2)), 2, 1 << 12)
        codes: dict[int, int] = {}
        problem: str | None = None
        while len(codes) < 2:
            for pid, _ in (a, b):
                if pid not in codes:
                    done, status = os.waitpid(pid, os.WNOHANG)
                    if done:
                        codes[pid] = os.waitstatus_to_exitcode(status)
            loaded, raised = _load(ckpt)
            problem = problem or raised or _check(loaded, None)
            tally.count("loads_during_writes")
            time.sleep(rng.uniform(0.0, 0.01))
        steps = _reported(a[1]) + _reported(b[1])
        if any(codes.values()):
            problem = problem or f"a writer raised (exit codes {sorted(codes.values())})"
        loaded, raised = _load(ckpt)
        problem = problem or raised or _check(loaded, max(steps, default=None))
        if problem is None and loaded is not None and loaded[0] != max(steps):
            problem = f"loaded {loaded[0]}, newest committed is {max(steps)}"
        tally.case(problem)
    return tally


def run_all(
    root: Path,
    *,
    kills: int,
    flips_per_file: int | None,
    disk_points: int,
    writer_rounds: int,
    saves_each: int,
    seed: int = 0,
) -> list[Tally]:
    torch.set_num_threads(1)  # an OpenMP pool started before fork() deadlocks the child
    steps: list[Callable[[], Tally]] = [
        lambda: kill_trials(root / "kill", kills, seed),
        lambda: bitflip_trials(root / "flip", flips_per_file, seed),
        lambda: full_disk_trials(root / "disk", disk_points, seed),
        lambda: two_writers_trials(root / "two", writer_rounds, saves_each, seed),
    ]
    return [step() for step in steps]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--flips-per-file", type=int, default=None, help="default: every bit")
    parser.add_argument("--disk-points", type=int, default=150)
    parser.add_argument("--writer-rounds", type=int, default=20)
    parser.add_argument("--saves-each", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dir", default=None, help="where to write (default: a temp dir)")
    args = parser.parse_args()
    logging.getLogger("gpurent.runtime").setLevel(logging.ERROR)  # skips are the point here
    root = Path(tempfile.mkdtemp(prefix="gpurent-crash-", dir=args.dir))
    try:
        t0 = time.perf_counter()
        tallies = run_all(
            root,
            kills=args.kills,
            flips_per_file=args.flips_per_file,
            disk_points=args.disk_points,
            writer_rounds=args.writer_rounds,
            saves_each=args.saves_each,
            seed=args.seed,
        )
        wall_s = time.perf_counter() - t0
    finally:
        shutil.rmtree(root, ignore_errors=True)
    for tally in tallies:
        print(tally.line())
        for failure in tally.failures:
            print(f"  FAILED: {failure}")
    tried = sum(t.tried for t in tallies)
    held = sum(t.held for t in tallies)
    print(f"total: tried={tried} held={held} wall_s={wall_s:.1f}")
    return 0 if tried == held else 1


if __name__ == "__main__":
    sys.exit(main())
