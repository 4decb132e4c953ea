"""Cost of one cost-meter reading in a long `gpurent monitor` session (live view and exporter read
it every refresh).

    PYTHONPATH=src python benchmarks/bench_monitor_cost_meter.py [--hours 24] [--gpus 8]

Builds a session of 1 Hz samples (mixed idle, busy and under-used GPUs), feeds them to the
running meter (`CostMeter.add`, what `MonitorSession.step` does), then times one reading
(`CostMeter.report`) against recomputing the meter over every sample (`meter(samples)`, what
the session did before it kept a running meter).
"""

from __future__ import annotations

import argparse
import statistics
import time

from gpurent.monitor.cost import CostMeter, InstancePrice, meter
from gpurent.monitor.sample import GpuSample, Sample


def session(hours: float, gpus: int) -> list[Sample]:
    n = int(hours * 3600)
    return [
        Sample(
            timestamp_s=float(i),
            gpus=tuple(
                GpuSample(index=g, sm_util_pct=float((i * 7 + g * 13) % 101)) for g in range(gpus)
            ),
        )
        for i in range(n)
    ]


def timed(fn: object, repeats: int) -> float:
    """Median seconds of `repeats` calls."""
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--hours", type=float, default=24.0)
    ap.add_argument("--gpus", type=int, default=8)
    args = ap.parse_args()
    samples = session(args.hours, args.gpus)
    price = InstancePrice.given(98.32)
    m = CostMeter(price)
    t0 = time.perf_counter()
    for s in samples:
        m.add(s)
    add_us = (time.perf_counter() - t0) / len(samples) * 1e6
    read_s = timed(m.report, 200)
    full_s = timed(lambda: meter(samples, price), 3)
    assert m.report() == meter(samples, price)
    print(f"{len(samples):,} samples x {args.gpus} GPUs ({args.hours:g} h at 1 Hz)")
    print(f"running meter: add {add_us:.1f} us per sample, one reading {read_s * 1e3:.3f} ms")
    print(f"recomputed over every sample (before): {full_s * 1e3:.0f} ms per reading")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
