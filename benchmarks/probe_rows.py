"""Sample rows for the ingest benchmarks: one probe read of the fake-NVML "busy" H100s (8 GPUs)
and the host, as the monitor writes them (`monitor.sample.to_rows`). Shared by
bench_monitor_recorder.py, bench_store_ingest.py and bench_push_ingest.py."""

from __future__ import annotations

from typing import Any

from gpurent.monitor.fake_nvml import FakeNvml
from gpurent.monitor.probes import HostProbe, NvmlProbe
from gpurent.monitor.sample import Sample, to_rows
from gpurent.monitor.scenarios import SCENARIOS


def template_rows() -> list[dict[str, Any]]:
    """One timestamp's rows (one per GPU), from the second read of a fake-clock probe (the
    first read only primes the energy and utilisation counters)."""
    t = [0.0]
    probe = NvmlProbe(FakeNvml(SCENARIOS["busy"], clock=lambda: t[0]), clock=lambda: t[0])
    probe.open()
    host = HostProbe()
    for _ in range(2):
        t[0] += 1.0
        gpus, _ = probe.read()
        h, _ = host.read()
    return to_rows(Sample(timestamp_s=0.0, host=h, gpus=gpus))
