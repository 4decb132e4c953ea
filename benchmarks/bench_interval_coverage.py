"""How often the measured value falls inside the estimate's 80 % interval, on the validation set.

Every row of a validation CSV goes through `python -m gpurent estimate --from-csv FILE --json`
(provenance and measurement columns dropped, as in `bench_estimator_validation.py`); a row
counts as covered when throughput_low <= measured <= throughput_high.

Run from the repository root:

    PYTHONPATH=src python benchmarks/bench_interval_coverage.py
    PYTHONPATH=src python benchmarks/bench_interval_coverage.py FILE.csv   # one file
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_estimator_validation import NOT_INPUTS as _VALIDATION_NOT_INPUTS

DATA = Path(__file__).resolve().parent / "data" / "validation"
# the provenance and measurement columns bench_estimator_validation.py drops, and the fp8/MoE
# file's tag column (that bench keeps it among a row's inputs to read it back)
NOT_INPUTS = _VALIDATION_NOT_INPUTS | {"validates"}


def coverage(path: Path) -> tuple[int, int]:
    """(rows covered by their 80 % interval, rows) of one validation CSV."""
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    columns = [c for c in rows[0] if c not in NOT_INPUTS]
    with tempfile.TemporaryDirectory() as tmp:
        inputs = Path(tmp) / "rows.csv"
        with inputs.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, columns, extrasaction="ignore", lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
        out = subprocess.run(
            [sys.executable, "-m", "gpurent", "estimate", "--from-csv", str(inputs), "--json"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    docs = [json.loads(line) for line in out.splitlines()]
    covered = sum(
        d["throughput_low"] <= float(r["measured_throughput"]) <= d["throughput_high"]
        for r, d in zip(rows, docs, strict=True)
    )
    return covered, len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "files", nargs="*", type=Path, default=[DATA / "llm.csv", DATA / "fp8_moe.csv"]
    )
    for path in parser.parse_args().files:
        covered, n = coverage(path)
        print(f"{path.name}: {covered}/{n} inside the 80% interval ({100 * covered / n:.0f} %)")


if __name__ == "__main__":
    main()
