"""Run every benchmark that needs no reference data, one after another (`make bench`).

The accuracy and spot-policy benchmarks read the project's reference data (GPU throughput and
spot traces), which a user's clone does not have; pass its folder with `--reference DIR` (the
folder holding `throughput/` and `spot/`) to run those too. Each script prints its own figures;
docs/benchmarks.md records them with the command.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

STANDALONE: list[list[str]] = [
    ["bench_catalog.py"],
    ["bench_estimator_speed.py"],
    ["bench_estimator_validation.py"],
    ["bench_estimator_fp8_moe.py"],
    ["bench_plan.py", "--runs", "3"],
    ["bench_monitor_overhead.py", "--seconds", "10"],
    ["bench_monitor_recorder.py", "--rows", "200000"],
    ["bench_monitor_cost_meter.py"],
    ["bench_runtime_kill.py", "--kills", "200"],
    ["bench_reliability_checkpoint.py"],
    ["bench_reliability_fuzz.py", "--examples", "300", "--seed", "13"],
    ["bench_runtime_ckpt.py", "--repeats", "3"],
    ["bench_bench_quick.py", "--runs", "1"],
    ["bench_slack_value.py"],
    ["check_spot_zone_prices.py"],  # synthetic zones only: needs no reference data
]


def with_reference(ref: Path) -> list[list[str]]:
    spot = ref / "spot" / "aws-v100-2023"
    prices = spot / "v100_spot_prices.json"
    history = ref / "spot" / "aws-price-history-sample" / "2022-05.tsv.zst"
    return [
        ["bench_estimator_accuracy.py", "--data-dir", str(ref / "throughput")],
        ["compare_estimator_variants.py", "--data-dir", str(ref / "throughput")],
        ["bench_spot_sim.py", "--trace-dir", str(spot)],
        ["bench_spot_sim.py", "--trace-dir", str(spot), "--zones", "3"],
        ["bench_spot_analytics.py", "--trace-dir", str(spot), "--prices", str(prices),
         "--history", str(history)],
        ["report_spot_policies.py", "--trace-dir", str(spot), "--prices", str(prices),
         "--on-demand-price", "3.06"],
    ]  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reference", type=Path, help="reference data folder (throughput/, spot/)")
    args = ap.parse_args()
    runs = STANDALONE + (with_reference(args.reference) if args.reference else [])
    failed: list[str] = []
    for argv in runs:
        title = " ".join(argv)
        print(f"\n=== {title}", flush=True)
        start = time.perf_counter()
        code = subprocess.call([sys.executable, str(HERE / argv[0]), *argv[1:]])
        print(f"=== {title}: exit {code} in {time.perf_counter() - start:.1f} s", flush=True)
        if code != 0:
            failed.append(title)
    if failed:
        print(f"\n{len(failed)} benchmark(s) failed: {', '.join(failed)}")
        return 1
    print(f"\nall {len(runs)} benchmarks ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
