"""Health checks for a supervised job: GPUs, disk, network, the process, and progress.

Each check returns a `HealthResult` (ok / warn / fail with a one-line reason). The GPU
thresholds and the Xid table are `gpurent.nvml`'s, shared with the monitor's rules: uncorrected
volatile ECC errors must be 0; temperature above 84 C warns; clock-event reasons HwSlowdown,
SwThermal, HwThermal and HwPowerBrake warn; application Xids warn, any other Xid marks the GPU
unhealthy. Xids are read from kernel log lines `NVRM: Xid (...): N`.

NVML is reached only through `check_gpus(nvml, ...)`, which takes the module as a parameter so
tests and the monitor room's stand-in can pass a fake, and reads it through `gpurent.nvml`, the
seam the monitor's probe uses; `load_nvml()` imports pynvml lazily there and initialises it.
"""

from __future__ import annotations

import dataclasses
import enum
import os
import re
import shutil
import socket
import stat
import subprocess
import time
import urllib.parse
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from gpurent import nvml as seam
from gpurent.nvml import TEMP_WARN_C, THROTTLE_WARN_MASK

_XID_RE = re.compile(r"NVRM: Xid \([^)]*\): (\d+)")


class Status(enum.Enum):
    """Outcome of a health check: ok, warn or fail."""

    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


_RANK = {Status.OK: 0, Status.WARN: 1, Status.FAIL: 2}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class HealthResult:
    """One health check's name, status and reason in words."""

    check: str
    status: Status
    reason: str


def worst(results: Iterable[HealthResult]) -> Status:
    """The most severe status among `results` (OK when empty)."""
    return max((r.status for r in results), key=_RANK.__getitem__, default=Status.OK)


# ---- GPUs ---------------------------------------------------------------------------------


def load_nvml() -> Any | None:
    """pynvml, initialised, or None when NVML (driver or nvidia-ml-py) is absent."""
    try:
        pynvml = seam.import_pynvml()
        if pynvml is None:
            return None
        pynvml.nvmlInit()
    except Exception:  # NVMLError when no driver (or a broken install) means "no NVML"
        return None
    return pynvml


def parse_xids(kernel_log: str) -> list[int]:
    """Xid codes in kernel log text (`NVRM: Xid (PCI:0000:3b:00): 79, pid=...`)."""
    return [int(m.group(1)) for m in _XID_RE.finditer(kernel_log)]


def read_kernel_log() -> str | None:
    """The kernel ring buffer via `dmesg`, or None when it cannot be read (no permission)."""
    try:
        proc = subprocess.run(["dmesg"], capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout if proc.returncode == 0 else None


def check_gpus(
    nvml: Any | None,
    *,
    expected_count: int | None = None,
    temp_warn_c: float = TEMP_WARN_C,
    new_xids: Sequence[int] = (),
) -> HealthResult:
    """Device count, uncorrected ECC, temperature, throttling, and Xids seen since the start."""
    if nvml is None:
        return HealthResult(check="gpu", status=Status.OK, reason="no NVML: skipped")
    fails: list[str] = []
    warns: list[str] = []
    count = int(nvml.nvmlDeviceGetCount())
    if expected_count is not None and count != expected_count:
        fails.append(f"{count} GPUs visible, expected {expected_count}")
    for index in range(count):
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        temp_c = seam.temperature_c(nvml, handle)
        if temp_c > temp_warn_c:
            warns.append(f"GPU {index} at {temp_c:.0f} C (> {temp_warn_c:.0f} C)")
        try:
            ecc = seam.ecc_errors(nvml, handle)
        except nvml.NVMLError:  # ECC unsupported (GeForce) or disabled
            ecc = 0
        if ecc > 0:
            fails.append(f"GPU {index} has {ecc} uncorrected ECC errors")
        try:
            reasons = seam.clock_event_reasons(nvml, handle)
        except nvml.NVMLError:
            reasons = 0
        if reasons & THROTTLE_WARN_MASK:
            warns.append(f"GPU {index} throttled (clock event reasons {reasons:#x})")
    for xid in new_xids:
        (warns if seam.is_application_xid(xid) else fails).append(f"Xid {xid}")
    if fails:
        return HealthResult(check="gpu", status=Status.FAIL, reason="; ".join(fails + warns))
    if warns:
        return HealthResult(check="gpu", status=Status.WARN, reason="; ".join(warns))
    return HealthResult(check="gpu", status=Status.OK, reason=f"{count} GPUs healthy")


class XidTracker:
    """Reports only the Xids that appeared since the previous call (old ones are history)."""

    def __init__(self, read_log: Callable[[], str | None] = read_kernel_log) -> None:
        self._read_log = read_log
        self._seen = self._count()

    def _count(self) -> int:
        text = self._read_log()
        return len(parse_xids(text)) if text is not None else 0

    def new_xids(self) -> list[int]:
        """The Xids logged since the previous call."""
        text = self._read_log()
        if text is None:
            return []
        xids = parse_xids(text)
        new = xids[self._seen :] if len(xids) >= self._seen else xids  # ring buffer wrapped
        self._seen = len(xids)
        return new


# ---- disk, network ------------------------------------------------------------------------


def check_disk(
    path: str | Path, *, fail_below_bytes: int, warn_below_bytes: int | None = None
) -> HealthResult:
    """Free space where checkpoints go (the nearest existing parent of `path`)."""
    target = Path(path)
    while not target.exists() and target != target.parent:
        target = target.parent
    free = shutil.disk_usage(target).free
    gib = free / 2**30
    if free < fail_below_bytes:
        return HealthResult(
            check="disk", status=Status.FAIL, reason=f"{gib:.2f} GiB free at {target}"
        )
    if warn_below_bytes is not None and free < warn_below_bytes:
        return HealthResult(
            check="disk", status=Status.WARN, reason=f"{gib:.2f} GiB free at {target}"
        )
    return HealthResult(check="disk", status=Status.OK, reason=f"{gib:.1f} GiB free at {target}")


def _host_port(endpoint: str) -> tuple[str, int]:
    if "://" in endpoint:
        parsed = urllib.parse.urlsplit(endpoint)
        default = 443 if parsed.scheme == "https" else 80
        return parsed.hostname or "", parsed.port or default
    host, _, port = endpoint.rpartition(":")
    return host, int(port)


class Connect(Protocol):
    """Opens a TCP connection to (host, port) in timeout seconds, like socket.create_connection."""

    def __call__(self, address: tuple[str, int], timeout: float) -> Any:
        """Connect to address within timeout seconds; return the socket (it is closed at once)."""


def check_endpoints(
    endpoints: Sequence[str],
    *,
    timeout_s: float = 3.0,
    connect: Connect = socket.create_connection,
) -> HealthResult:
    """TCP reachability of `host:port` or URL endpoints (storage, W&B, a NCCL master...)."""
    if not endpoints:
        return HealthResult(check="network", status=Status.OK, reason="no endpoints configured")
    down: list[str] = []
    for endpoint in endpoints:
        try:
            connect(_host_port(endpoint), timeout_s).close()
        except (OSError, ValueError) as exc:
            down.append(f"{endpoint} ({exc.__class__.__name__})")
    if down:
        return HealthResult(
            check="network", status=Status.FAIL, reason="unreachable: " + ", ".join(down)
        )
    return HealthResult(
        check="network", status=Status.OK, reason=f"{len(endpoints)} endpoints reachable"
    )


# ---- process, progress --------------------------------------------------------------------


class Polls(Protocol):
    """A process that can be polled for its exit code, like subprocess.Popen."""

    pid: int

    def poll(self) -> int | None:
        """The exit code, or None while the process runs."""


def check_process(proc: Polls) -> HealthResult:
    """OK while the process runs or after it exited 0; FAIL once it exited non-zero."""
    code = proc.poll()
    if code is None:
        return HealthResult(check="process", status=Status.OK, reason=f"pid {proc.pid} running")
    status = Status.OK if code == 0 else Status.FAIL
    return HealthResult(check="process", status=status, reason=f"pid {proc.pid} exited {code}")


def _parse_step(text: str) -> int | None:
    try:
        return int(text.split(maxsplit=1)[0]) if text.strip() else None
    except ValueError:
        return None


HEARTBEAT_MAX_BYTES = 4096


def _read_heartbeat(path: str | Path) -> str:
    """The text of a heartbeat file: a regular file only (a FIFO would block the supervisor),
    its first 4 KiB, bytes that are not UTF-8 replaced (a torn write is "no step", not a crash).
    Raises OSError when it cannot be read."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return os.read(fd, HEARTBEAT_MAX_BYTES).decode("utf-8", errors="replace")
    finally:
        os.close(fd)


def read_step(heartbeat_file: str | Path) -> int | None:
    """The step a job last wrote to its heartbeat file, if the file holds an integer."""
    try:
        return _parse_step(_read_heartbeat(heartbeat_file))
    except OSError:
        return None


class ProgressTracker:
    """Detects a hung job: the heartbeat file's content (a step) or mtime stops advancing.

    The job writes its step to the file (or just touches it); if neither changes for
    `hang_timeout_s` seconds of `clock`, the job is hung. Before the first heartbeat the
    timeout counts from `reset()`, so a slow start up to `hang_timeout_s` is tolerated.
    """

    def __init__(
        self,
        heartbeat_file: str | Path,
        *,
        hang_timeout_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = Path(heartbeat_file)
        self.hang_timeout_s = hang_timeout_s
        self._clock = clock
        self._last_mark: tuple[str, float] | None = None
        self._last_change = clock()
        self.best_step: int | None = None

    def reset(self) -> None:
        """Start a new attempt: the hang timer restarts."""
        self._last_change = self._clock()

    def step(self) -> int | None:
        """The step last written to the heartbeat file, if it holds an integer."""
        return read_step(self.path)

    def check(self) -> HealthResult:
        """FAIL once the heartbeat has not advanced for too long; else OK."""
        now = self._clock()
        try:
            mark = (_read_heartbeat(self.path).strip(), self.path.stat().st_mtime)
        except OSError:
            mark = None
        if mark is not None and mark != self._last_mark:
            self._last_mark = mark
            self._last_change = now
            step = _parse_step(mark[0])  # the text just read, not a second read
            if step is not None and (self.best_step is None or step > self.best_step):
                self.best_step = step
        idle_s = now - self._last_change
        if idle_s >= self.hang_timeout_s:
            return HealthResult(
                check="progress",
                status=Status.FAIL,
                reason=f"no heartbeat for {idle_s:.0f} s (timeout {self.hang_timeout_s:.0f} s)",
            )
        return HealthResult(
            check="progress", status=Status.OK, reason=f"heartbeat {idle_s:.0f} s ago"
        )
