"""Speed of the spot simulator: 300 starts over a 45-day trace, per policy.

Usage: python benchmarks/bench_spot_sim.py --trace-dir DIR [--zones 1] [--starts 300]
       python benchmarks/bench_spot_sim.py --synthetic-gap-minutes 10 --zones 3
Target (issue 7): <= 2 s per online policy; issue 16: the hindsight optimum (fractional
changeover) <= 30 s for 300 runs of a 48 h job on 3 zones with 10-minute ticks.
`--synthetic-gap-minutes G` makes seeded traces (60 days, alternating exponential spot
spells of mean 6 h and outages of mean 1.5 h) instead of reading files.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from gpurent.spot.io.trace import Trace, align_zones
from gpurent.spot.io.trace_io import load_trace
from gpurent.spot.sim.evaluate import run_policy
from gpurent.spot.sim.job_market import JobSpec, build_market, run_starts
from gpurent.spot.sim.policies import ONLINE_POLICIES, OPTIMAL


def _synthetic(gap_hours: float, zones: int, days: int = 60) -> list[Trace]:
    rng = np.random.default_rng(16)
    out = []
    for z in range(zones):
        values: list[int] = []
        up = True
        while len(values) * gap_hours < days * 24:
            mean = 6.0 if up else 1.5
            values.extend([int(up)] * max(1, round(rng.exponential(mean) / gap_hours)))
            up = not up
        out.append(Trace(name=f"synthetic-{z}", gap_hours=gap_hours, available=tuple(values)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trace-dir", type=Path)
    ap.add_argument("--synthetic-gap-minutes", type=float)
    ap.add_argument("--zones", type=int, default=1)
    ap.add_argument("--starts", type=int, default=300)
    ap.add_argument("--job-hours", type=float, default=38.4)
    ap.add_argument("--deadline-hours", type=float, default=48.0)
    ap.add_argument("--changeover-hours", type=float, default=0.2)
    args = ap.parse_args()
    if args.synthetic_gap_minutes:
        traces = _synthetic(args.synthetic_gap_minutes / 60, args.zones)
    elif args.trace_dir is not None:
        files = sorted(p for p in args.trace_dir.glob("*.csv") if "summary" not in p.name)
        traces = [load_trace(f)[0] for f in files[: args.zones]]
    else:
        ap.error("give --trace-dir DIR or --synthetic-gap-minutes G")
    market = build_market(align_zones(traces), price_ratio=3.0)
    job = JobSpec(
        job_hours=args.job_hours,
        deadline_hours=args.deadline_hours,
        changeover_hours=args.changeover_hours,
    )
    starts = run_starts(market, job, args.starts)
    days = market.ticks * market.gap_hours / 24
    print(f"{len(traces)} zone(s), {market.ticks} ticks ({days:.1f} days), {len(starts)} starts")
    for name in (*ONLINE_POLICIES, OPTIMAL):
        t0 = time.perf_counter()
        s = run_policy(name, market, job, starts)
        dt = time.perf_counter() - t0
        print(f"{name:18s} {dt:6.2f} s  mean cost {s.mean_cost_normalized:.3f}")


if __name__ == "__main__":
    main()
