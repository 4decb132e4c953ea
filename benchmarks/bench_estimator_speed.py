"""Speed of the estimator: one CLI call (start-up included; also one with `--layout auto`),
10,000 CSV rows, API calls.

    PYTHONPATH=src python benchmarks/bench_estimator_speed.py

Wall times via subprocess (a fresh interpreter each run, as a user sees it); best and median of
several runs. The API loops time, on a mix of models and GPUs, `Estimator.estimate` with its memo
off (each call computes, as a planner's first call per configuration does) and the one-shot
`estimate()` (a fresh `Estimator` per call, bundled constants passed in).
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpurent.catalog import Precision, all_gpus
from gpurent.estimate import Estimator, estimate, load_constants
from gpurent.workload import Workload

ONE = [
    "estimate",
    "--model",
    "bert-large-squad",
    "--gpu",
    "H100",
    "--gpus",
    "8",
    "--precision",
    "amp",
    "--batch-size",
    "32",
    "--json",
]
# a 70B LoRA that does not fit as given on 16 GPUs: `--layout auto` searches the planner's
# layouts (`gpurent.plan.layouts.lay_out`) before it estimates
AUTO = [
    "estimate",
    "--model",
    "llama2-70b",
    "--gpu",
    "H100",
    "--gpus",
    "16",
    "--nodes",
    "2",
    "--task",
    "finetune-lora",
    "--layout",
    "auto",
    "--json",
]
MODELS = ["resnet50", "bert-large-squad", "gnmt", "mpt-7b", "llama3-8b", "ssd", "waveglow"]


def cli(args: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "gpurent", *args], check=True, env=env, stdout=subprocess.DEVNULL
    )
    return time.perf_counter() - t0


def main() -> None:
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        env["GPURENT_HOME"] = tmp
        cli(ONE, env)  # warm the OS file cache
        one = [cli(ONE, env) for _ in range(7)]
        print(
            f"one `gpurent estimate` call: best {min(one):.3f} s, median "
            f"{statistics.median(one):.3f} s (start-up included)"
        )
        auto = [cli(AUTO, env) for _ in range(7)]
        print(
            f"one `gpurent estimate --layout auto` call (70B LoRA, 16 GPUs): best "
            f"{min(auto):.3f} s, median {statistics.median(auto):.3f} s (start-up included)"
        )
        rng = random.Random(0)
        gpus = [g.name for g in all_gpus() if g.vendor == "nvidia"]
        path = Path(tmp) / "rows.csv"
        lines = ["model,gpu,num_gpus,precision,batch_size,seq_len"]
        for _ in range(10_000):
            m = rng.choice(MODELS)
            seq = "2048" if m in ("mpt-7b", "llama3-8b") else ""
            lines.append(
                f"{m},{rng.choice(gpus)},{rng.choice([1, 2, 4, 8])},"
                f"{rng.choice(['amp', 'bf16', 'fp32'])},{rng.choice([1, 4, 16, 64])},{seq}"
            )
        path.write_text("\n".join(lines) + "\n")
        rows = [cli(["estimate", "--from-csv", str(path), "--json"], env) for _ in range(3)]
        print(f"10,000 CSV rows: best {min(rows):.2f} s, median {statistics.median(rows):.2f} s")
    wls = [
        Workload(
            model=m,
            precision=Precision.BF16 if "-" in m and m[0] in "ml" else Precision.AMP,
            batch_size_per_gpu=8,
            seq_len=2048 if m[0] in "ml" else None,
        )
        for m in MODELS
    ]
    gpu_specs = [g for g in all_gpus() if g.vendor == "nvidia"]
    calls = [(w, g, n) for w in wls for g in gpu_specs for n in (1, 8)]
    k = load_constants()
    engine = Estimator(constants=k, gpus=all_gpus(), max_cached=0)
    for w, g, n in calls:
        engine.estimate(w, g, n)
    reps = 20
    t0 = time.perf_counter()
    for _ in range(reps):
        for w, g, n in calls:
            engine.estimate(w, g, n)
    n_calls = reps * len(calls)
    dt = (time.perf_counter() - t0) / n_calls
    print(f"Estimator.estimate API, memo off: {dt * 1e6:.1f} us per call (mean of {n_calls} calls)")
    t0 = time.perf_counter()
    for _ in range(reps):
        for w, g, n in calls:
            estimate(w, g, n, constants=k)
    dt = (time.perf_counter() - t0) / n_calls
    print(f"estimate() one-shot API: {dt * 1e6:.1f} us per call (mean of {n_calls} calls)")


if __name__ == "__main__":
    main()
