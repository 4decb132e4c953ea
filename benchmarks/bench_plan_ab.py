"""`gpurent plan` before/after: two checkouts timed alternately, run by run, in one window.

On a shared machine the load moves by the minute, so a before/after comparison made of two
benchmark runs one after the other measures the load as much as the code. This alternates the
checkouts (A B A B ...), each a fresh `python -m gpurent plan ARGS --json` with `PYTHONPATH=src`
in that checkout, and reports per checkout the CPU (user + sys) and wall medians and bests.

`--bytecode off` sets PYTHONDONTWRITEBYTECODE=1 (every gpurent module compiled in every run, as
this project's VMs run it); `--bytecode cached` keeps compiled modules under a per-checkout
PYTHONPYCACHEPREFIX in a temporary folder (as an installed gpurent runs), warmed by one untimed
run. A checkout is a folder with `src/gpurent`: e.g. `git archive BASE | tar -x -C /tmp/base`
(an exported tree has no stale `__pycache__`, so both sides compile alike).

    python benchmarks/bench_plan_ab.py /tmp/base . [--runs 7] [--bytecode off|cached]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES = (
    "--preset llama-lora",
    "--preset bert-large-pretrain",
    "--preset llm-inference",
    "--scenario training",
    "--preset resnet50-imagenet --deadline 2h",
)


def _env(checkout: Path, bytecode: str, prefix: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": "src"}
    if bytecode == "cached":
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(prefix / checkout.resolve().name)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _run(checkout: Path, args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU s, wall s) of one `gpurent plan ARGS --json` in `checkout`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "gpurent", "plan", *args, "--json"],
        cwd=checkout,
        env=env,
        check=False,
        capture_output=True,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 3):
        raise SystemExit(f"{checkout}: gpurent plan {' '.join(args)} failed: {proc.stderr!r}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkouts", nargs=2, type=Path)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--bytecode", choices=("off", "cached"), default="off")
    opts = parser.parse_args()
    print(f"bytecode {opts.bytecode}, load average {os.getloadavg()[0]:.1f} at the start")
    print("| workload | checkout | CPU median | CPU best | wall median | wall best |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            args = case.split()
            envs = [_env(c, opts.bytecode, Path(tmp)) for c in opts.checkouts]
            for checkout, env in zip(opts.checkouts, envs, strict=True):
                _run(checkout, args, env)  # untimed: fills the bytecode and catalog caches
            times: list[list[tuple[float, float]]] = [[], []]
            for _ in range(opts.runs):
                for i, (checkout, env) in enumerate(zip(opts.checkouts, envs, strict=True)):
                    times[i].append(_run(checkout, args, env))
            for checkout, runs in zip(opts.checkouts, times, strict=True):
                cpu = [c for c, _ in runs]
                wall = [w for _, w in runs]
                print(
                    f"| `{case}` | {checkout} | {statistics.median(cpu):.3f} s | "
                    f"{min(cpu):.3f} s | {statistics.median(wall):.3f} s | {min(wall):.3f} s |"
                )
    print(f"load average {os.getloadavg()[0]:.1f} at the end; {opts.runs} runs per cell")


if __name__ == "__main__":
    main()
