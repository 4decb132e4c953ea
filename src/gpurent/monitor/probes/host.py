"""The host probe: CPU, iowait, memory, per-device disk busy time and throughput, network.

On Linux it parses /proc itself (the root is injectable, so tests use a fake tree): /proc/stat
for CPU and iowait, /proc/meminfo, /proc/diskstats, /proc/net/dev. Disk %util is what iostat
shows: the delta of field 13 of /proc/diskstats (milliseconds spent doing I/O) over the wall time
between two reads. On NVMe and RAID a device can be "100% busy" and still take more work, so the
rules compare it with throughput too (RESEARCH.md §4). Without /proc (macOS) it falls back to
psutil when installed, without per-device %util. Rates need two reads: the first read returns
only memory.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpurent.monitor.sample import DiskSample, HostSample, Source

SECTOR_BYTES = 512
_PARTITION = re.compile(r"^((sd|vd|xvd|hd)[a-z]+\d+|(nvme\d+n\d+|mmcblk\d+)p\d+)$")
_SKIP_DISK = ("loop", "ram", "zram", "fd", "sr")


@dataclass(frozen=True, slots=True, kw_only=True)
class _Counters:
    t_s: float
    cpu_total: float
    cpu_idle: float
    cpu_iowait: float
    disks: dict[str, tuple[int, int, int]]  # sectors read, sectors written, ms busy
    net: tuple[int, int]  # rx bytes, tx bytes (all interfaces but lo)


def parse_cpu(text: str) -> tuple[float, float, float]:
    """(total, idle, iowait) jiffies from the aggregate `cpu` line of /proc/stat."""
    for line in text.splitlines():
        if line.startswith("cpu "):
            fields = [float(x) for x in line.split()[1:]]
            # user nice system idle iowait irq softirq steal guest guest_nice; guest is in user
            total = sum(fields[:8])
            return total, fields[3], fields[4] if len(fields) > 4 else 0.0
    raise ValueError("no aggregate cpu line in /proc/stat")


def is_whole_disk(name: str) -> bool:
    """Whether a /proc/diskstats device name is a whole disk (not a partition, loop or ram)."""
    return not name.startswith(_SKIP_DISK) and not _PARTITION.match(name)


def parse_diskstats(text: str) -> dict[str, tuple[int, int, int]]:
    """Whole devices only: name -> (sectors read, sectors written, ms doing I/O (field 13))."""
    out: dict[str, tuple[int, int, int]] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 14 or not is_whole_disk(parts[2]):
            continue
        # fields (1-based): 3 name, 6 sectors read, 10 sectors written, 13 ms doing I/O
        out[parts[2]] = (int(parts[5]), int(parts[9]), int(parts[12]))
    return out


def parse_meminfo(text: str) -> tuple[float, float]:
    """(used GiB, total GiB), used = MemTotal - MemAvailable like `free`."""
    kib: dict[str, int] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if rest.strip():
            kib[key] = int(rest.split()[0])
    total = kib["MemTotal"]
    available = kib.get("MemAvailable", kib.get("MemFree", 0))
    return (total - available) / 2**20, total / 2**20


def parse_net_dev(text: str) -> tuple[int, int]:
    """Bytes received and sent over all interfaces but lo, from /proc/net/dev text."""
    rx = tx = 0
    for line in text.splitlines()[2:]:
        name, _, rest = line.partition(":")
        fields = rest.split()
        if name.strip() == "lo" or len(fields) < 9:
            continue
        rx += int(fields[0])
        tx += int(fields[8])
    return rx, tx


class HostProbe:
    """Reads host counters; each `read()` reports rates over the time since the previous one."""

    def __init__(
        self,
        *,
        proc_root: Path = Path("/proc"),
        clock: Callable[[], float] = time.monotonic,
        psutil_module: Any = None,
    ) -> None:
        self._root = proc_root
        self._clock = clock
        self._psutil = psutil_module
        self._prev: _Counters | None = None
        self._reported: set[str] = set()
        self.use_proc = (proc_root / "stat").exists()

    def _read_text(self, name: str, notes: list[str]) -> str | None:
        try:
            return (self._root / name).read_text()
        except OSError as exc:
            if name not in self._reported:
                self._reported.add(name)
                notes.append(f"host: cannot read {self._root / name} ({exc.strerror or exc})")
            return None

    def read(self) -> tuple[HostSample, list[str]]:
        """The host's sample (rates since the previous read) and notes on what could not be read."""
        notes: list[str] = []
        if not self.use_proc:
            return self._read_psutil(notes), notes
        now = self._clock()
        values: dict[str, Any] = {}
        src = Source.PROCFS.value
        mem_text = self._read_text("meminfo", notes)
        if mem_text is not None:
            values["memory_used_gib"], values["memory_total_gib"] = parse_meminfo(mem_text)
        stat_text = self._read_text("stat", notes)
        disk_text = self._read_text("diskstats", notes)
        net_text = self._read_text("net/dev", notes)
        cpu = parse_cpu(stat_text) if stat_text is not None else (0.0, 0.0, 0.0)
        counters = _Counters(
            t_s=now,
            cpu_total=cpu[0],
            cpu_idle=cpu[1],
            cpu_iowait=cpu[2],
            disks=parse_diskstats(disk_text) if disk_text is not None else {},
            net=parse_net_dev(net_text) if net_text is not None else (0, 0),
        )
        prev, self._prev = self._prev, counters
        disks: tuple[DiskSample, ...] = ()
        if prev is not None and counters.t_s > prev.t_s:
            dt_s = counters.t_s - prev.t_s
            d_total = counters.cpu_total - prev.cpu_total
            if stat_text is not None and d_total > 0:
                d_idle = counters.cpu_idle - prev.cpu_idle
                d_iowait = counters.cpu_iowait - prev.cpu_iowait
                values["cpu_util_pct"] = 100.0 * (d_total - d_idle - d_iowait) / d_total
                values["iowait_pct"] = 100.0 * d_iowait / d_total
            if disk_text is not None:
                disks = _disk_rates(prev.disks, counters.disks, dt_s)
                values["disk_util_pct"] = max((d.util_pct for d in disks), default=0.0)
                values["disk_read_mb_per_s"] = sum(d.read_mb_per_s for d in disks)
                values["disk_write_mb_per_s"] = sum(d.write_mb_per_s for d in disks)
            if net_text is not None:
                values["net_rx_mb_per_s"] = max(0, counters.net[0] - prev.net[0]) / dt_s / 1e6
                values["net_tx_mb_per_s"] = max(0, counters.net[1] - prev.net[1]) / dt_s / 1e6
        return (
            HostSample(**values, disks=disks, sources=tuple((k, src) for k in sorted(values))),
            notes,
        )

    def _read_psutil(self, notes: list[str]) -> HostSample:
        ps = self._psutil
        if ps is None:
            if "psutil" not in self._reported:
                self._reported.add("psutil")
                notes.append(f"host: no {self._root}/stat and no psutil: host metrics unavailable")
            return HostSample()
        src = Source.PSUTIL.value
        vm = ps.virtual_memory()
        times = ps.cpu_times_percent(interval=None)
        values: dict[str, Any] = {
            "cpu_util_pct": float(ps.cpu_percent(interval=None)),
            "iowait_pct": float(getattr(times, "iowait", 0.0)),
            "memory_used_gib": (vm.total - vm.available) / 2**30,
            "memory_total_gib": vm.total / 2**30,
        }
        return HostSample(**values, sources=tuple((k, src) for k in sorted(values)))


def _disk_rates(
    before: dict[str, tuple[int, int, int]], after: dict[str, tuple[int, int, int]], dt_s: float
) -> tuple[DiskSample, ...]:
    out: list[DiskSample] = []
    for name, (r1, w1, busy1) in sorted(after.items()):
        if name not in before:
            continue
        r0, w0, busy0 = before[name]
        util = min(100.0, max(0.0, (busy1 - busy0) / (dt_s * 1000.0) * 100.0))
        out.append(
            DiskSample(
                device=name,
                util_pct=util,
                read_mb_per_s=max(0, r1 - r0) * SECTOR_BYTES / dt_s / 1e6,
                write_mb_per_s=max(0, w1 - w0) * SECTOR_BYTES / dt_s / 1e6,
            )
        )
    return tuple(out)
