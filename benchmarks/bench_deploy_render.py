"""Rendering speed of `gpurent deploy render`, every format (issue 17: < 0.5 s each).

Two figures per format: the renderer in-process (parse the plan document + render, the
median and the worst of --repeats runs) and the whole command as a user runs it
(`gpurent deploy render PLAN --format F -o DIR` in a fresh process: start-up, imports, parse,
render, write), the median of --cli-runs, each paired with a `gpurent --version` run: the
start-up every command pays. The limit applies to the rendering (in-process worst) and to
what the command adds to that start-up (the median of the paired differences).
The plan is `gpurent plan --preset llama-lora --json`,
rendered for its best candidate and its first multi-node candidate (with --hosts, which
torchrun and Ansible need for several nodes).

    python benchmarks/bench_deploy_render.py --repeats 200 --cli-runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpurent.deploy import FORMATS, DeployOptions, render, spec_from_plan

LIMIT_S = 0.5


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument("--cli-runs", type=int, default=3)
    args = ap.parse_args()
    gpurent = [sys.executable, "-m", "gpurent"]
    # As an installed package runs: with its bytecode cached (a shell that sets
    # PYTHONDONTWRITEBYTECODE would otherwise recompile every module on every start).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([*gpurent, "--version"], capture_output=True, check=True, env=env)
    plan = subprocess.run(
        [*gpurent, "plan", "--preset", "llama-lora", "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    doc = json.loads(plan)
    multi = next(i for i, c in enumerate(doc["top"], start=1) if c["nodes"] > 1)
    hosts = tuple(f"10.0.0.{i + 1}" for i in range(doc["top"][multi - 1]["nodes"]))
    base = []
    for _ in range(args.cli_runs):
        t0 = time.perf_counter()
        subprocess.run([*gpurent, "--version"], capture_output=True, check=True, env=env)
        base.append(time.perf_counter() - t0)
    startup = statistics.median(base)
    print(f"start-up (`gpurent --version`, median of {args.cli_runs}): {startup:.3f} s")
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        plan_file = Path(tmp) / "plan.json"
        plan_file.write_text(plan, encoding="utf-8")
        print(
            f"{'format':<11} {'candidate':>9} {'in-process p50 ms':>18} {'max ms':>8} "
            f"{'CLI s':>7} {'CLI - start-up s':>17}"
        )
        for fmt in FORMATS:
            for index in (1, multi):
                options = DeployOptions(candidate=index, hosts=hosts if index == multi else ())
                times = []
                for _ in range(args.repeats):
                    t0 = time.perf_counter()
                    render(spec_from_plan(doc, options), fmt)
                    times.append(time.perf_counter() - t0)
                cli: list[float] = []
                extra: list[float] = []
                for run in range(args.cli_runs):
                    out = Path(tmp) / f"{fmt}-{index}-{run}"
                    argv = [
                        *gpurent,
                        "deploy",
                        "render",
                        str(plan_file),
                        "--format",
                        fmt,
                        "-o",
                        str(out),
                        "--candidate",
                        str(index),
                    ]
                    if index == multi:
                        argv += ["--hosts", ",".join(hosts)]
                    t0 = time.perf_counter()
                    subprocess.run(
                        [*gpurent, "--version"], capture_output=True, check=True, env=env
                    )
                    t1 = time.perf_counter()
                    subprocess.run(argv, capture_output=True, check=True, env=env)
                    t2 = time.perf_counter()
                    cli.append(t2 - t1)
                    extra.append((t2 - t1) - (t1 - t0))  # paired: the load drifts
                cli_s = statistics.median(cli)
                added = statistics.median(extra)
                worst = max(worst, added, *times)
                print(
                    f"{fmt:<11} {index:>9} {statistics.median(times) * 1e3:>18.2f} "
                    f"{max(times) * 1e3:>8.2f} {cli_s:>7.3f} {added:>17.3f}"
                )
    verdict = "PASS" if worst < LIMIT_S else "FAIL"
    print(f"worst {worst:.3f} s against the {LIMIT_S} s limit: {verdict}")
    return 0 if worst < LIMIT_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
