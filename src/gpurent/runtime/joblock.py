"""One supervisor per checkpoint directory, its state across restarts, and no processes left behind.

`gpurent run --checkpoint-dir DIR` takes an exclusive `flock` on `DIR/.gpurent-run.lock` (the lock
dies with the supervisor, even on SIGKILL) and keeps `DIR/.gpurent-run.json`, written atomically:
the failure streak (so a restarted supervisor goes on counting) and the running child (PID,
process group, start time in clock ticks since boot from `/proc/PID/stat`, the boot id, and the
run id). A new supervisor stops a child its predecessor left behind only if that PID still has the
recorded start time in the same boot, so a reused PID is never signalled.

Every process of a job carries `GPURENT_RUN_ID=<id>` in its environment (inherited by children,
also by `setsid` grandchildren); `stop_marked` finds them by a scan of `/proc/*/environ`. On Linux
the supervisor also becomes a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`), so orphans of the
job reparent to it and it can reap them. cgroups are not used (v2 is often absent or read-only in
containers); the environment scan is the fallback the issue allows.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import errno
import fcntl
import json
import logging
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from gpurent.errors import GpurentError

log = logging.getLogger("gpurent.runtime")

LOCK_NAME = ".gpurent-run.lock"
STATE_NAME = ".gpurent-run.json"
ENV_RUN_ID = "GPURENT_RUN_ID"
_PR_SET_CHILD_SUBREAPER = 36
_PROC = Path("/proc")


class LockHeldError(GpurentError):
    """Another supervisor already watches this checkpoint directory."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ChildRecord:
    """The job a supervisor started: enough to find it again, and to know it is the same one."""

    pid: int
    pgid: int | None  # None: the child shares no group of its own (only the PID is signalled)
    start_ticks: int | None
    run_id: str
    boot_id: str | None = None  # the kernel's boot id: ticks since boot mean nothing after a reboot


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class AttemptRecord:
    """One failed attempt of the current streak."""

    exit_code: int | None
    runtime_s: float
    stopped_for: str | None  # None (exited by itself), "hang", "health"
    progress_lost: bool = False


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RunState:
    """What survives a supervisor restart."""

    streak: tuple[AttemptRecord, ...] = ()
    best_progress: int | None = None
    run_id: str | None = None  # written before the first child starts: its processes carry it
    child: ChildRecord | None = None


# ---- processes ------------------------------------------------------------------------------


def start_ticks(pid: int) -> int | None:
    """The start time of `pid` in clock ticks since boot (`/proc/PID/stat` field 22), or None."""
    try:
        raw = (_PROC / str(pid) / "stat").read_bytes()
    except OSError:
        return None
    fields = raw[raw.rfind(b")") + 2 :].split()
    try:
        return int(fields[19])  # fields after "(comm)": state is field 3, starttime field 22
    except (IndexError, ValueError):
        return None


def boot_id() -> str | None:
    """This boot's id (`/proc/sys/kernel/random/boot_id`), or None where there is none."""
    try:
        return (_PROC / "sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def same_process(record: ChildRecord) -> bool:
    """Whether `record.pid` is still the process that was recorded (same boot, same start)."""
    return (
        record.start_ticks is not None
        and record.boot_id == boot_id()
        and start_ticks(record.pid) == record.start_ticks
    )


def _is_zombie(pid: int) -> bool:
    try:
        raw = (_PROC / str(pid) / "stat").read_bytes()
    except OSError:
        return True
    return raw[raw.rfind(b")") + 2 : raw.rfind(b")") + 3] in {b"Z", b"X"}


def marked_pids(run_id: str) -> list[int]:
    """Live processes (not zombies) whose environment holds `GPURENT_RUN_ID=run_id`."""
    needle = f"{ENV_RUN_ID}={run_id}".encode()
    me = os.getpid()
    found: list[int] = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(_PROC):
            if not entry.name.isdigit() or int(entry.name) == me:
                continue
            try:
                environ = Path(entry.path, "environ").read_bytes()
            except OSError:
                continue  # gone, or another user's
            if needle in environ.split(b"\0") and not _is_zombie(int(entry.name)):
                found.append(int(entry.name))
    return found


def _signal_pid(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _reap(pids: Iterator[int] | list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)


def stop_marked(
    run_id: str,
    *,
    grace_s: float,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> list[int]:
    """SIGTERM every process marked with `run_id`, SIGKILL those left after `grace_s`; the PIDs."""
    pids = marked_pids(run_id)
    if not pids:
        return []
    for pid in pids:
        _signal_pid(pid, signal.SIGTERM)
    deadline = clock() + grace_s
    while clock() < deadline:
        _reap(pids)
        if not marked_pids(run_id):
            break
        sleep(0.05)
    for _ in range(50):  # processes may fork while we look; a few rounds catch them
        left = marked_pids(run_id)
        if not left:
            break
        for pid in left:
            _signal_pid(pid, signal.SIGKILL)
        _reap(left)
        sleep(0.02)
    _reap(pids)
    return pids


def _signal_group(record: ChildRecord, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if record.pgid is None:
            os.kill(record.pid, sig)
        else:
            os.killpg(record.pgid, sig)


def stop_left_behind(
    record: ChildRecord,
    *,
    grace_s: float,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> list[int]:
    """Stop the job of a supervisor that died: its process group if the PID is still the same
    process (same start time), then every process marked with its run id. The PIDs stopped."""
    stopped: list[int] = []
    same = same_process(record)
    if same:
        _signal_group(record, signal.SIGTERM)
        stopped.append(record.pid)
    stopped += stop_marked(record.run_id, grace_s=grace_s, sleep=sleep, clock=clock)
    if same:
        deadline = clock() + 5.0
        while same_process(record) and not _is_zombie(record.pid):
            _signal_group(record, signal.SIGKILL)
            if clock() > deadline:
                break
            sleep(0.02)
    return sorted(set(stopped))


def become_subreaper(on: bool = True) -> bool:
    """Make orphaned descendants reparent to this process (Linux), or stop that (`on=False`);
    False where unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def reap_any() -> None:
    """Collect every exited child (orphans adopted as subreaper); only safe where this process
    has no other child whose exit status someone else waits for."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


# ---- the lock and the state file ------------------------------------------------------------


def _state_from_json(data: Any) -> RunState:
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    streak = tuple(
        AttemptRecord(
            exit_code=None if a["exit_code"] is None else int(a["exit_code"]),
            runtime_s=float(a["runtime_s"]),
            stopped_for=None if a["stopped_for"] is None else str(a["stopped_for"]),
            progress_lost=bool(a.get("progress_lost", False)),
        )
        for a in data.get("streak", [])
    )
    best = data.get("best_progress")
    child_data = data.get("child")
    child = None
    if child_data is not None:
        ticks = child_data.get("start_ticks")
        child = ChildRecord(
            pid=int(child_data["pid"]),
            pgid=None if child_data.get("pgid") is None else int(child_data["pgid"]),
            start_ticks=None if ticks is None else int(ticks),
            run_id=str(child_data["run_id"]),
            boot_id=None if child_data.get("boot_id") is None else str(child_data["boot_id"]),
        )
    if best is not None and (isinstance(best, bool) or not isinstance(best, int)):
        raise ValueError("best_progress is not an integer")
    run_id = data.get("run_id")
    return RunState(
        streak=streak,
        best_progress=best,
        run_id=None if run_id is None else str(run_id),
        child=child,
    )


class RunLock:
    """The exclusive lock and state file of one checkpoint directory (local paths only)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.lock_path = self.directory / LOCK_NAME
        self.state_path = self.directory / STATE_NAME
        self._fd: int | None = None

    def acquire(self) -> RunLock:
        """Take the lock or raise `LockHeldError` naming the PID that holds it."""
        self.directory.mkdir(parents=True, exist_ok=True)
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(self.lock_path, flags, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.pread(fd, 64, 0).decode("ascii", errors="replace").strip() or "unknown"
            os.close(fd)
            if exc.errno not in {errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES}:
                raise
            raise LockHeldError(
                f"checkpoint directory {self.directory} is already supervised by gpurent run "
                f"(pid {holder}); stop that one first or use another --checkpoint-dir"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        """Drop the lock (closing its descriptor); do nothing if not held."""
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

    def read_state(self) -> RunState:
        """The saved state; a missing or unreadable file is a fresh start (logged)."""
        try:
            raw = self.state_path.read_bytes()
        except FileNotFoundError:
            return RunState()
        except OSError as exc:
            log.warning("cannot read %s (%s); starting a fresh failure count", self.state_path, exc)
            return RunState()
        try:
            return _state_from_json(json.loads(raw))
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
            log.warning("%s is damaged (%s); starting a fresh failure count", self.state_path, exc)
            return RunState()

    def write_state(self, state: RunState) -> None:
        """Write the state atomically: a temporary file, fsync, rename."""
        tmp = self.state_path.with_name(f"{STATE_NAME}.{os.getpid()}.tmp")
        data = json.dumps(dataclasses.asdict(state), separators=(",", ":")).encode()
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(tmp, flags, 0o600)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.state_path)
