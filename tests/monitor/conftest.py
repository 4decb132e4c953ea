"""Fixtures of the monitor room: a manual clock, a fake /proc tree, probe helpers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpurent.monitor.fake_nvml import FakeNvml
from gpurent.monitor.probes import HostProbe, NvmlProbe
from gpurent.monitor.sample import Sample
from tests.store_targets import store_target

__all__ = ["store_target"]  # the recorder's store tests run on SQLite and PostgreSQL


class Clock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture()
def clock() -> Clock:
    return Clock()


def write_proc(root: Path, *, cpu: tuple[int, ...], disk_ms: int, sectors: int, rx: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "net").mkdir(exist_ok=True)
    (root / "stat").write_text("cpu  " + " ".join(str(x) for x in cpu) + "\ncpu0 1 2 3\n")
    (root / "meminfo").write_text(
        "MemTotal: 16777216 kB\nMemFree: 1000 kB\nMemAvailable: 8388608 kB\n"
    )
    (root / "diskstats").write_text(
        f"   8       0 sda 100 0 {sectors} 0 50 0 {sectors} 0 0 {disk_ms} 0\n"
        f"   8       1 sda1 100 0 {sectors} 0 50 0 {sectors} 0 0 {disk_ms} 0\n"
        f"   7       0 loop0 1 0 1 0 0 0 0 0 0 999999 0\n"
        f" 259       0 nvme0n1 1 0 0 0 0 0 0 0 0 0 0\n"
    )
    (root / "net" / "dev").write_text(
        "Inter-|   Receive\n face |bytes packets\n"
        f"    lo: 999999 1 0 0 0 0 0 0 999999 1 0 0 0 0 0 0\n"
        f"  eth0: {rx} 1 0 0 0 0 0 0 {rx // 2} 1 0 0 0 0 0 0\n"
    )


def run_probe(
    scenario: dict[str, Any], clock: Clock, steps: int, dt_s: float = 1.0
) -> tuple[list[Sample], list[str]]:
    """Open an NVML probe on the stand-in and take `steps` samples, `dt_s` apart."""
    nv = FakeNvml(scenario, clock=clock)
    probe = NvmlProbe(nv, clock=clock)
    notes = probe.open()
    samples: list[Sample] = []
    for _ in range(steps):
        gpus, more = probe.read()
        notes += more
        samples.append(Sample(timestamp_s=clock.t, gpus=gpus))
        clock.t += dt_s
    probe.close()
    return samples, notes


def host_probe(root: Path, clock: Clock) -> HostProbe:
    return HostProbe(proc_root=root, clock=clock)
