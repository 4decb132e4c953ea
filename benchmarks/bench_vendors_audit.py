"""Time `gpurent vendors audit` on a month of hourly AWS CUR lines with a day of 1 Hz monitor
records of one 8-GPU instance.

    PYTHONPATH=src python benchmarks/bench_vendors_audit.py [--instances 30] [--days 30]

Writes a synthetic CUR (one BoxUsage line per instance-hour, one EBS line per volume-hour, a
tenth of the lines priced 10% over the catalog) and an 8-GPU samples file for one instance,
then times the reading, the checks and the whole CLI call (in process), best of three.
"""

from __future__ import annotations

import argparse
import csv
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from gpurent.catalog import bundled_offers
from gpurent.cli.main import app
from gpurent.monitor.sample import COLUMNS, GpuSample, Sample, to_rows
from gpurent.vendors.audit import audit
from gpurent.vendors.bills import read_bill
from gpurent.vendors.outages import load_samples

HEADER = [
    "lineItem/LineItemType", "lineItem/UsageStartDate", "lineItem/UsageEndDate",
    "lineItem/UsageType", "lineItem/ResourceId", "lineItem/UsageAmount",
    "lineItem/UnblendedCost", "product/instanceType", "product/region", "pricing/term",
]  # fmt: skip
T0 = datetime(2026, 11, 1, tzinfo=UTC)


def write_cur(path: Path, instances: int, days: int) -> int:
    rate = 21.95764  # p4d.24xlarge us-east-1 in the bundled snapshot
    rows = 0
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(HEADER)
        for h in range(days * 24):
            a, b = T0 + timedelta(hours=h), T0 + timedelta(hours=h + 1)
            times = [a.isoformat().replace("+00:00", "Z"), b.isoformat().replace("+00:00", "Z")]
            for i in range(instances):
                cost = rate * (1.1 if (h + i) % 10 == 0 else 1.0)
                w.writerow(["Usage", *times, "BoxUsage:p4d.24xlarge", f"i-{i:04d}", 1, cost,
                            "p4d.24xlarge", "us-east-1", "OnDemand"])  # fmt: skip
                w.writerow(["Usage", *times, "EBS:VolumeUsage.gp3", f"vol-{i:04d}", 0.68, 0.055,
                            "", "us-east-1", "OnDemand"])  # fmt: skip
                rows += 2
    return rows


def write_samples(path: Path, hours: float) -> int:
    t0 = T0.timestamp()
    n = int(hours * 3600)
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(COLUMNS))
        w.writeheader()
        for s in range(n):
            pct = 0.0 if (s // 1800) % 3 == 0 else 70.0
            gpus = tuple(GpuSample(index=g, sm_util_pct=pct) for g in range(8))
            w.writerows(to_rows(Sample(timestamp_s=t0 + s, gpus=gpus)))
    return n


def best(fn: object, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--instances", type=int, default=30)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--sample-hours", type=float, default=24.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cur, samples = Path(tmp) / "cur.csv", Path(tmp) / "s.csv"
        rows = write_cur(cur, args.instances, args.days)
        n = write_samples(samples, args.sample_hours)
        offers = bundled_offers()
        bill = read_bill(cur)
        recorded = load_samples(str(samples))
        report = audit(bill, offers, samples={"i-0000": recorded})
        t_read = best(lambda: read_bill(cur))
        t_check = best(lambda: audit(bill, offers, samples={"i-0000": recorded}))
        runner = CliRunner()
        argv = ["vendors", "audit", "--bill", str(cur), "--samples", f"i-0000={samples}", "--json"]
        t_cli = best(lambda: runner.invoke(app, argv), repeat=1)
        print(f"CUR rows: {rows}; samples: {n} x 8 GPUs; findings: {len(report.findings)}")
        print(
            f"read_bill: {t_read:.2f} s; audit checks: {t_check:.2f} s; "
            f"CLI end to end: {t_cli:.2f} s"
        )


if __name__ == "__main__":
    main()
