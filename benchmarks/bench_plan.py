"""Planner speed: `gpurent plan` wall time over a synthetic 10,000-offer catalog, CLI included.

Builds the catalog by copying the bundled offers (the project's offers CSV format) into extra
regions with prices jittered by +-20% (seeded), then times the real CLI in a fresh process, as a
user would run it. Reports wall time (median and best of N runs), the catalog size and how many
candidates the planner priced, for several workloads.

    PYTHONPATH=src python benchmarks/bench_plan.py [--offers 10000] [--runs 5]

With `--cache-offers N` it instead times the parsed-catalog cache (issue 15): the same
`plan --preset llama-lora --catalog FILE --json` over an N-offer catalog with the cache off
(`GPURENT_NO_CACHE=1`: every run parses the CSV, as before the cache) and warm, in a throw-away
`GPURENT_HOME`, plus the in-process load time of each.

    PYTHONPATH=src python benchmarks/bench_plan.py --cache-offers 50000 --runs 5
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path


def usable_rows() -> tuple[list[str], list[dict[str, str]]]:
    """The bundled CSV's header and the rows the catalog loader accepts as offers (it skips,
    e.g., accelerator-only prices), so that every synthetic row is a usable offer."""
    from gpurent.catalog.sources import load_offers

    text = resources.files("gpurent.catalog.data").joinpath("offers.csv").read_text("utf-8")
    reader = csv.DictReader(io.StringIO(text))
    rows = list(reader)
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "bundled.csv"
        probe.write_text(text, encoding="utf-8")
        keys = {(o.provider, o.instance_type, o.region) for o in load_offers(probe).offers}
    usable = [
        r for r in rows if (r["provider"].strip().lower(), r["instance_type"], r["region"]) in keys
    ]
    return list(reader.fieldnames or ()), usable


def synthetic_catalog(n_offers: int, seed: int = 0) -> str:
    """`n_offers` rows: the bundled offers copied into more regions, prices jittered +-20%."""
    fields, rows = usable_rows()
    rng = random.Random(seed)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=fields)
    writer.writeheader()
    copy = 0
    written = 0
    while written < n_offers:
        for row in rows:
            if written == n_offers:
                break
            new = dict(row)
            if copy:
                new["region"] = f"{row['region']}-syn{copy}"
                for col in ("price_hour_usd", "spot_price_hour_usd", "spot_price_max_hour_usd"):
                    if new.get(col):
                        new[col] = f"{float(new[col]) * rng.uniform(0.8, 1.2):.4f}"
            writer.writerow(new)
            written += 1
        copy += 1
    return out.getvalue()


def time_cli(
    args: list[str], runs: int, extra_env: dict[str, str] | None = None
) -> tuple[list[float], list[float], dict[str, object] | None]:
    """Wall and CPU (user + sys) seconds of each run of `gpurent ARGS`, and its JSON output.

    CPU time is what the process itself used: on a busy shared machine wall time includes waiting
    for a core, so CPU time is the better estimate of wall time on an idle one."""
    env = {**os.environ, **(extra_env or {})}
    times: list[float] = []
    cpu: list[float] = []
    doc = None
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "gpurent", *args],
            check=False,
            capture_output=True,
            text=True,
            env=env,
        )
        times.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if proc.returncode not in (0, 3):
            raise SystemExit(f"gpurent {' '.join(args)} failed: {proc.stderr.strip()}")
        if "--json" in args:
            doc = json.loads(proc.stdout)
    return times, cpu, doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offers", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cache-offers", type=int, default=0)
    opts = parser.parse_args()
    if opts.cache_offers:
        cache_bench(opts.cache_offers, opts.runs)
        return
    with tempfile.TemporaryDirectory() as tmp:
        catalog = Path(tmp) / "offers-10k.csv"
        catalog.write_text(synthetic_catalog(opts.offers), encoding="utf-8")
        print(
            f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
            f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}"
        )
        base, base_cpu, _ = time_cli(["--version"], opts.runs)
        print(
            f"start-up floor (`gpurent --version`): wall median {statistics.median(base):.3f} s, "
            f"CPU median {statistics.median(base_cpu):.3f} s"
        )
        print(
            "| workload | catalog | offers | candidates priced | configurations | estimates "
            "| wall median | wall best | CPU median |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        cases = [
            ("--preset llama-lora", ["--preset", "llama-lora"]),
            ("--preset bert-large-pretrain", ["--preset", "bert-large-pretrain"]),
            ("--preset llm-inference", ["--preset", "llm-inference"]),
            ("--scenario training", ["--scenario", "training"]),
            (
                "--preset resnet50-imagenet --deadline 2h",
                ["--preset", "resnet50-imagenet", "--deadline", "2h"],
            ),
        ]
        for label, args in cases:
            for cat_label, cat_args in (
                ("bundled", []),
                ("synthetic", ["--catalog", str(catalog)]),
            ):
                times, cpu, doc = time_cli(["plan", *args, *cat_args, "--json"], opts.runs)
                stats = doc["stats"] if doc else {}
                print(
                    f"| `{label}` | {cat_label} | {stats.get('catalog_offers')} | "
                    f"{stats.get('candidates_evaluated')} | {stats.get('configurations')} | "
                    f"{stats.get('estimator_calls')} | {statistics.median(times):.3f} s | "
                    f"{min(times):.3f} s | {statistics.median(cpu):.3f} s |"
                )
        breakdown(catalog, opts.runs)


def breakdown(catalog: Path, runs: int) -> None:
    """In-process stage times for `--preset llama-lora` on `catalog` (median of `runs`)."""
    from gpurent.cli.plan_cmds import load_offers
    from gpurent.estimate import bundled_estimator
    from gpurent.plan import Constraints, make_plan
    from gpurent.pricing.costs import CostAssumptions
    from gpurent.report.plan_json import plan_to_dict
    from gpurent.workload import preset

    parse, plan, render = [], [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        offers = load_offers(catalog)
        t1 = time.perf_counter()
        estimator = bundled_estimator()  # a fresh one per run: its memo starts empty, as in the CLI
        result = make_plan(
            preset("llama-lora"), offers, Constraints(), CostAssumptions(), estimator
        )
        t2 = time.perf_counter()
        json.dumps(plan_to_dict(result))
        t3 = time.perf_counter()
        parse.append(t1 - t0)
        plan.append(t2 - t1)
        render.append(t3 - t2)
    print(
        f"in-process, {len(offers)} offers, `--preset llama-lora`: parse CSV "
        f"{statistics.median(parse):.3f} s, make_plan {statistics.median(plan):.3f} s, "
        f"JSON {statistics.median(render):.3f} s (medians of {runs})"
    )


def cache_bench(n_offers: int, runs: int) -> None:
    """`plan` over an `n_offers` catalog with the parsed-catalog cache off and warm."""
    from gpurent.catalog.sources import load_offers

    with tempfile.TemporaryDirectory() as tmp:
        catalog = Path(tmp) / f"offers-{n_offers}.csv"
        catalog.write_text(synthetic_catalog(n_offers), encoding="utf-8")
        home = {"GPURENT_HOME": str(Path(tmp) / "home")}
        os.environ.update(home)
        print(
            f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
            f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}"
        )
        from gpurent.estimate import bundled_estimator
        from gpurent.plan import Constraints, make_plan
        from gpurent.pricing.costs import CostAssumptions
        from gpurent.workload import preset

        # CPU seconds of this process (time.process_time): on a loaded machine wall time is
        # mostly waiting for a core
        load_off, load_warm, plan_cpu = [], [], []
        for _ in range(runs):
            t0 = time.process_time()
            offers = load_offers(catalog, use_cache=False).offers
            t1 = time.process_time()
            load_offers(catalog)  # the first run writes the entry
            t2 = time.process_time()
            cached = load_offers(catalog).offers
            t3 = time.process_time()
            assert cached == offers
            make_plan(
                preset("llama-lora"), cached, Constraints(), CostAssumptions(), bundled_estimator()
            )
            t4 = time.process_time()
            load_off.append(t1 - t0)
            load_warm.append(t3 - t2)
            plan_cpu.append(t4 - t3)
        print(
            f"in-process CPU, {len(offers)} offers: parse {statistics.median(load_off):.3f} s, "
            f"from the cache {statistics.median(load_warm):.3f} s, make_plan (llama-lora) "
            f"{statistics.median(plan_cpu):.3f} s (medians of {runs})"
        )
        print("| cache | offers | wall median | wall best | CPU median | CPU best |")
        print("|---|---|---|---|---|---|")
        args = ["plan", "--preset", "llama-lora", "--catalog", str(catalog), "--json"]
        for label, env in (("off (parse)", {"GPURENT_NO_CACHE": "1"}), ("warm", {})):
            times, cpu, doc = time_cli(args, runs, {**home, **env})
            stats = doc["stats"] if doc else {}
            print(
                f"| {label} | {stats.get('catalog_offers')} | {statistics.median(times):.3f} s | "
                f"{min(times):.3f} s | {statistics.median(cpu):.3f} s | {min(cpu):.3f} s |"
            )


if __name__ == "__main__":
    main()
