"""CPU overhead of the monitor loop: 1 Hz, 8 stand-in H100s (fake NVML), real host probe.

Measures process CPU time / wall time over the run -> % of one core. The stand-in NVML costs
Python time where the real library costs C time, so this is an estimate of our own code's cost.
Run: PYTHONPATH=src python benchmarks/bench_monitor_overhead.py [--seconds 30]
"""

from __future__ import annotations

import argparse
import time

from gpurent.monitor.fake_nvml import FakeNvml
from gpurent.monitor.probes import HostProbe, NvmlProbe
from gpurent.monitor.rules import Thresholds
from gpurent.monitor.scenarios import SCENARIOS
from gpurent.monitor.session import MonitorSession


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    session = MonitorSession(
        nvml=NvmlProbe(FakeNvml(SCENARIOS["busy"])), host=HostProbe(), thresholds=Thresholds()
    )
    session.open()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    session.run(interval_s=1.0, duration_s=args.seconds)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    session.close()
    print(
        f"samples={session.state.samples_taken} gpus=8 wall_s={wall:.1f} cpu_s={cpu:.3f} "
        f"core_pct={100 * cpu / wall:.3f}% "
        f"cpu_ms_per_sample={1000 * cpu / session.state.samples_taken:.2f}"
    )


if __name__ == "__main__":
    main()
