"""Where a `gpurent` command's start-up goes: importing and building the Typer app (every
command, or only the one named, as `gpurent.cli.main.main` does) and Typer's first parse of
`plan`'s options (typer 0.29 coerces each option through a pydantic TypeAdapter it builds then).

Each figure is the median of `--runs` fresh interpreters (a user's every call is one), timed
inside the child with `time.perf_counter`. Run from the repository root, with the venv whose
typer you want to measure:

    PYTHONPATH=src python benchmarks/bench_cli_startup.py --runs 7
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = """
import json, time
t0 = time.perf_counter()
import typer
from gpurent.cli.main import build_app
t1 = time.perf_counter()
app = build_app(None if {whole} else ["plan_cmds"])
group = typer.main.get_command(app)
t2 = time.perf_counter()
group.commands["plan"].make_context("plan", ["--serve", "--preset", "llama3-8b-chat", "--json"])
t3 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "build": t2 - t1, "parse": t3 - t2}}))
"""


def measure(whole: bool, runs: int) -> dict[str, float]:
    """Median seconds of each stage over `runs` fresh interpreters."""
    got: dict[str, list[float]] = {"import": [], "build": [], "parse": []}
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", CHILD.format(whole=whole)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for key, value in json.loads(out).items():
            got[key].append(value)
    return {key: statistics.median(values) for key, values in got.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    runs = ap.parse_args().runs
    import typer

    print(f"typer {typer.__version__}, Python {sys.version.split()[0]}, {runs} runs, medians")
    print()
    print("| app | import (typer, gpurent.cli.main) | build | first parse of `plan` | sum |")
    print("|---|---|---|---|---|")
    for whole in (True, False):
        m = measure(whole, runs)
        name = "every command (77)" if whole else "`plan` only (what `main` builds)"
        print(
            f"| {name} | {m['import']:.3f} s | {m['build']:.3f} s | {m['parse']:.3f} s | "
            f"{sum(m.values()):.3f} s |"
        )


if __name__ == "__main__":
    main()
