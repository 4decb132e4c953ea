"""Steady-state training throughput of 8-GPU MLPerf Training systems, from their result logs.

Reads a git clone of mlcommons/training_results_v5.0 or _v5.1 (never v4.0: held out) and prints
CSV rows for `benchmarks/data/mlperf_training_8gpu.csv`:

    python benchmarks/extract_mlperf_training.py REPO_GIT_DIR v5.0 >> rows.csv

Per system and benchmark (llama2_70b_lora, llama31_8b): the steady samples per second of each
of the 10 runs (`run_rate`: evaluation and warm-up excluded), median over runs. Only
systems of 8 accelerators in total, of a GPU the catalog has, are kept; Lambda's submissions are
skipped (the issue holds Lambda's Hopper and Blackwell rows out).
"""

from __future__ import annotations

import csv
import itertools
import json
import re
import statistics
import subprocess
import sys

BENCHMARKS = {"llama2_70b_lora": 8192, "llama31_8b": 8192}  # sequence length of each
GPU_PATTERNS = [  # accelerator_model_name -> catalog name
    (r"GB300", "GB300"),
    (r"GB200", "GB200"),
    (r"B300", "B300-288GB"),
    (r"B200", "B200-180GB"),
    (r"H200.*NVL", ""),  # not kept: PCIe cards with bridges
    (r"H200", "H200-SXM-141GB"),
    (r"H100", "H100-SXM5-80GB"),
    (r"MI355X", "MI355X"),
    (r"MI325X", "MI325X"),
    (r"MI300X", "MI300X"),
]
SKIPPED_SUBMITTERS = {"Lambda"}


def git(repo: str, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", repo, *args], check=True, capture_output=True, text=True
    ).stdout


def catalog_name(accelerator: str) -> str:
    for pattern, name in GPU_PATTERNS:
        if re.search(pattern, accelerator):
            return name
    return ""


def run_rate(log: str, gbs: int) -> float | None:
    """Steady samples/s of one run: global batch / median `train_step_time` where the log has
    it (NeMo pretraining logs); else the median rate between consecutive `train_loss` records
    (newer mlperf_common logs, every 10 steps; an evaluation between two records is an outlier
    the median ignores); else the median rate of the blocks after the first (older logs)."""
    points = []
    step_times = [
        float(rec["value"]["train_step_time"])
        for rec in _records(log)
        if rec.get("key") == "tracked_stats"
        and isinstance(rec.get("value"), dict)
        and "train_step_time" in rec["value"]
    ]
    if len(step_times) >= 5 and gbs > 0:
        return gbs / statistics.median(step_times)
    for rec in _records(log):
        meta = rec.get("metadata") or {}
        value = rec.get("value")
        if (
            rec.get("key") == "tracked_stats"
            and isinstance(value, dict)
            and "train_loss" in value
            and meta.get("samples_count") is not None
        ):
            points.append((int(rec["time_ms"]), int(meta["samples_count"])))
    pairs = [
        (s1 - s0) / ((t1 - t0) / 1000.0)
        for (t0, s0), (t1, s1) in itertools.pairwise(points)
        if t1 > t0 and s1 > s0
    ]
    if len(pairs) >= 5:
        return statistics.median(pairs)
    rates = block_rates(log)
    steady = rates[1:] or rates
    return statistics.median(steady) if steady else None


def _records(log: str) -> list[dict]:
    out = []
    for line in log.splitlines():
        i = line.find(":::MLLOG ")
        if i < 0:
            continue
        try:
            out.append(json.loads(line[i + 9 :]))
        except json.JSONDecodeError:
            continue
    return out


def block_rates(log: str) -> list[float]:
    """samples/s of each block_start..block_stop interval, in order."""
    rates: list[float] = []
    start: tuple[int, int] | None = None
    for rec in _records(log):
        key = rec.get("key")
        samples = (rec.get("metadata") or {}).get("samples_count")
        if key == "block_start" and samples is not None:
            start = (int(rec["time_ms"]), int(samples))
        elif key == "block_stop" and samples is not None and start is not None:
            dt = (int(rec["time_ms"]) - start[0]) / 1000.0
            ds = int(samples) - start[1]
            if dt > 0 and ds > 0:
                rates.append(ds / dt)
            start = None
    return rates


def main() -> None:
    repo, round_name = sys.argv[1], sys.argv[2]
    if round_name == "v4.0":
        raise SystemExit("MLPerf Training v4.0 is held out: not read")
    commit = git(repo, "rev-parse", "HEAD").strip()
    files = git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    out = csv.writer(sys.stdout, lineterminator="\n")
    for bench, seq in BENCHMARKS.items():
        dirs = sorted(
            {
                f.rsplit("/", 1)[0]
                for f in files
                if re.search(rf"/results/[^/]+/{bench}/result_\d+\.txt$", f)
            }
        )
        for d in dirs:
            org, _, system, _ = d.split("/", 3)
            if org in SKIPPED_SUBMITTERS:
                continue
            try:
                sysd = json.loads(git(repo, "show", f"HEAD:{org}/systems/{system}.json"))
            except subprocess.CalledProcessError:
                continue
            n = int(sysd["accelerators_per_node"]) * int(sysd["number_of_nodes"])
            gpu = catalog_name(sysd["accelerator_model_name"])
            if n != 8 or not gpu:
                continue
            per_run = []
            gbs = ""
            for f in files:
                if f.startswith(d + "/result_") and f.endswith(".txt"):
                    log = git(repo, "show", f"HEAD:{f}")
                    m = re.search(r'"key": "global_batch_size", "value": (\d+)', log)
                    gbs = m.group(1) if m else gbs
                    rate = run_rate(log, int(gbs or 0))
                    if rate is not None:
                        per_run.append(rate)
            if not per_run:
                continue
            sps = statistics.median(per_run)
            out.writerow(
                [
                    round_name,
                    bench,
                    org,
                    system,
                    sysd["accelerator_model_name"],
                    gpu,
                    n,
                    sysd["number_of_nodes"],
                    seq,
                    gbs,
                    f"{sps:.4f}",
                    f"{sps * seq:.0f}",
                    len(per_run),
                    f"mlcommons/training_results_{round_name}",
                    commit,
                    d,
                ]
            )


if __name__ == "__main__":
    main()
