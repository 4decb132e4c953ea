"""Serving-planner speed: `gpurent plan --serve` on the bundled catalog (issue 19: < 1 s).

Times the real CLI in a fresh process, as a user runs it (wall time, and the child's CPU time:
the machine this runs on may be shared, and CPU time is what the planner itself costs), plus
`plan.serving.plan_serving` in-process, for several workloads. Prints a Markdown table.

    PYTHONPATH=src python benchmarks/bench_plan_serve.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES: list[tuple[str, list[str]]] = [
    ("--serve --preset llama3-8b-chat", ["--serve", "--preset", "llama3-8b-chat"]),
    ("... --spot", ["--serve", "--preset", "llama3-8b-chat", "--spot"]),
    ("... --rate 200", ["--serve", "--preset", "llama3-8b-chat", "--rate", "200"]),
    ("--serve --preset llama3-70b-chat", ["--serve", "--preset", "llama3-70b-chat"]),
    ("--scenario inference", ["--scenario", "inference"]),
    (
        "... --traffic-profile (24 h)",
        ["--serve", "--preset", "llama3-8b-chat", "--traffic-profile"],
    ),
]


def _profile(folder: Path) -> Path:
    path = folder / "day.csv"
    shares = [0.01] * 7 + [0.06] * 14 + [0.03] * 3
    path.write_text("hour,share\n" + "".join(f"{h},{s}\n" for h, s in enumerate(shares)))
    return path


def time_cli(args: list[str], runs: int, env: dict[str, str]) -> tuple[list[float], list[float]]:
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "gpurent", "plan", *args, "--json"],
            env=env,
            capture_output=True,
            check=False,
        )
        walls.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        if done.returncode != 0:
            raise SystemExit(f"plan {' '.join(args)} failed: {done.stderr.decode()[-400:]}")
    return walls, cpus


def time_inprocess(args: list[str], runs: int, profile: Path) -> tuple[float, float, int]:
    """The planner alone (workload resolved, offers loaded): best wall and CPU, configurations."""
    from gpurent.catalog.sources import load_offers
    from gpurent.cli.plan_serve import ServeFlags, read_traffic_profile, resolve_serving
    from gpurent.plan.scenarios import get_scenario
    from gpurent.plan.serving import ServeOptions, plan_serving

    offers = load_offers(None).offers
    scenario = get_scenario("inference") if "--scenario" in args else None
    preset = args[args.index("--preset") + 1] if "--preset" in args else None
    rate = float(args[args.index("--rate") + 1]) if "--rate" in args else None
    wl = resolve_serving(ServeFlags(preset=preset, rate=rate), scenario)
    opts = ServeOptions(
        spot="--spot" in args,
        profile=read_traffic_profile(profile, wl.request_rate_per_s)
        if "--traffic-profile" in args
        else None,
        scenario_gpus=scenario.matrix_gpus if scenario else (),
    )
    if scenario is not None:
        offers = tuple(o for o in offers if o.gpu_memory_gib >= scenario.min_gpu_memory_gib)
    walls, cpus, configs = [], [], 0
    for _ in range(runs):
        t, c = time.perf_counter(), time.process_time()
        plan = plan_serving(wl, offers, opts)
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
        configs = plan.configurations
    return min(walls), min(cpus), configs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    opts = ap.parse_args()
    src = str(Path(__file__).resolve().parents[1] / "src")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        profile = _profile(folder)
        env = {**os.environ, "PYTHONPATH": src, "GPURENT_HOME": str(folder / "home")}
        print(
            f"{platform.python_implementation()} {platform.python_version()}, "
            f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; {opts.runs} runs"
        )
        print()
        print(
            "| case | CLI wall median | CLI wall best | CLI CPU best | planner wall best | "
            "planner CPU best | (GPU, tp) evaluated |"
        )
        print("|---|---|---|---|---|---|---|")
        for name, args in CASES:
            full = [*args, str(profile)] if args[-1] == "--traffic-profile" else args
            walls, cpus = time_cli(full, opts.runs, env)
            p_wall, p_cpu, configs = time_inprocess(args, opts.runs, profile)
            print(
                f"| `{name}` | {statistics.median(walls):.3f} s | {min(walls):.3f} s | "
                f"{min(cpus):.3f} s | {p_wall:.3f} s | {p_cpu:.3f} s | {configs} |"
            )
        print()
        print(f"`gpurent --version` for scale: {_version_cost(env):.3f} s CPU")


def _version_cost(env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-m", "gpurent", "--version"], env=env, check=True, capture_output=True
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


if __name__ == "__main__":
    main()
