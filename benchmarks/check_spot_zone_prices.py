"""Does taking the cheapest zone with spot ever cost more than failover UP? (docs/benchmarks.md)

Usage: PYTHONPATH=src python benchmarks/check_spot_zone_prices.py [--starts 20]
[--policies "uniform-progress;lifetime-up"]

`lifetime-up` takes the zone whose spot price is lowest now; failover UP the first zone in the
order given. That can only hurt where cheap zones are the flaky ones, so this check gives the
four synthetic 9-zone sets of `tune_spot_policy.py` (fixed seed) flat per-zone prices, either
running against availability ("anti": the most available zone is the dearest, spot from 0.25
to 0.5 of on-demand) or drawn at random (uniform 0.2-0.5, `random.Random(3)`), and compares
the policies on 4 zone triples per set (`random.Random(7)`), d in {0.05, 0.2} h, C/R in
{0.6, 0.95}, R = 48 h. Prints the mean, worst and best relative change vs the first policy and
how many cells are worse by more than 0.2%, overall and per price mode; and deadline misses.
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tune_spot_policy import synthetic_sets

from gpurent.spot.io.trace import align_zones
from gpurent.spot.sim.evaluate import run_policy
from gpurent.spot.sim.job_market import JobSpec, build_market, run_starts


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--starts", type=int, default=20)
    ap.add_argument("--policies", default="uniform-progress;lifetime-up")
    args = ap.parse_args()
    policies = args.policies.split(";")
    rng = random.Random(3)
    rows: list[tuple[str, list[float], int]] = []
    for kind, traces in synthetic_sets().items():
        share = [float(np.mean(t.available)) for t in traces]
        rank = np.argsort(np.argsort(share))  # 0 = least available
        modes = {
            "anti": [0.25 + 0.25 * int(r) / 8 for r in rank],
            "random": [rng.uniform(0.2, 0.5) for _ in traces],
        }
        for mode, prices in modes.items():
            priced = [
                replace(t, price_usd_per_hour=(p,) * t.ticks)
                for t, p in zip(traces, prices, strict=True)
            ]
            triples = random.Random(7).sample(list(itertools.combinations(range(9), 3)), 4)
            for d, frac in itertools.product((0.05, 0.2), (0.6, 0.95)):
                job = JobSpec(job_hours=frac * 48, deadline_hours=48, changeover_hours=d)
                for tri in triples:
                    m = build_market(
                        align_zones([priced[i] for i in tri]), on_demand_usd_per_hour=1.0
                    )
                    starts = run_starts(m, job, args.starts)
                    res = [run_policy(p, m, job, starts) for p in policies]
                    rows.append(
                        (
                            mode,
                            [r.mean_cost_normalized for r in res],
                            sum(r.deadline_misses for r in res),
                        )
                    )
        print(f"{kind}: done", file=sys.stderr, flush=True)
    costs = np.array([r[1] for r in rows])
    for j, name in enumerate(policies[1:], start=1):
        rel = costs[:, j] / costs[:, 0] - 1
        print(
            f"{name} vs {policies[0]}: cells {len(rel)} mean {rel.mean():+.2%} "
            f"worst {rel.max():+.2%} best {rel.min():+.2%} worse>0.2% {int((rel > 0.002).sum())}"
        )
        for mode in ("anti", "random"):
            sel = np.array([r[0] == mode for r in rows])
            print(f"    {mode}: mean {rel[sel].mean():+.2%} worst {rel[sel].max():+.2%}")
    print(f"deadline misses: {sum(r[2] for r in rows)}")


if __name__ == "__main__":
    main()
