"""Catalog speed: loading the bundled snapshot, and parsing a generated 10,000-row SkyPilot file.

Run: `PYTHONPATH=src python benchmarks/bench_catalog.py` (prints one line per figure; the
best of 5 repeats, so that a busy machine does not inflate it).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from gpurent.catalog.offers import bundled_table
from gpurent.catalog.sources import parse_skypilot_csv
from gpurent.catalog.specs import all_gpus

ROWS = 10_000
REPEATS = 5
HEADER = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,"
    "Region,AvailabilityZone"
)


def generated_aws_like(rows: int, seed: int = 0) -> str:
    """An AWS-shaped vms.csv: instance types x 40 regions x 4 zones (one row per zone), 30% of
    the types CPU-only."""
    rng = random.Random(seed)
    gpus = [("A10G", 24576), ("H100", 81920), ("A100", 40960), ("L4", 24576), ("T4", 16384)]
    lines = [HEADER]
    for i in range(rows):
        kind = i // 160  # one instance type per 160 rows
        region = f"region-{(i // 4) % 40}"
        zone = f"{region}{'abcd'[i % 4]}"
        if kind % 10 < 3:
            lines.append(f"c{kind}.large,,,2.0,8.0,,0.1,0.03,{region},{zone}")
            continue
        name, mib = gpus[kind % len(gpus)]
        count = (1, 2, 4, 8)[kind % 4]
        info = (
            f"\"{{'Gpus': [{{'Name': '{name}', 'Manufacturer': 'NVIDIA', 'Count': {count}, "
            f"'MemoryInfo': {{'SizeInMiB': {mib}}}}}], 'TotalGpuMemoryInMiB': {mib * count}}}\""
        )
        price = round(rng.uniform(0.5, 4.0) * count, 4)
        lines.append(
            f"g{kind}.{count}x,{name},{count}.0,{8 * count}.0,{32 * count}.0,{info},"
            f"{price},{round(price * 0.4, 4)},{region},{zone}"
        )
    return "\n".join(lines) + "\n"


def best_of(fn: Callable[[], object]) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    def load_bundled() -> object:
        bundled_table.cache_clear()
        all_gpus.cache_clear()
        return bundled_table()

    t_bundled = best_of(load_bundled)
    n_bundled = len(bundled_table().offers)
    text = generated_aws_like(ROWS)
    table = parse_skypilot_csv(text, "generated.csv", provider="aws", as_of="bench")
    t_parse = best_of(lambda: parse_skypilot_csv(text, "generated.csv", provider="aws", as_of=""))
    print(f"bundled snapshot load (cold caches): {t_bundled * 1e3:.1f} ms, {n_bundled} offers")
    print(
        f"SkyPilot parse, {ROWS} rows ({len(text) / 1e6:.2f} MB): {t_parse * 1e3:.1f} ms, "
        f"{len(table.offers)} offers, {table.ignored_rows} CPU rows, "
        f"{ROWS / t_parse:,.0f} rows/s"
    )


if __name__ == "__main__":
    main()
