"""The bundled per-architecture factors are what the fit on the MLPerf rows gives."""

from __future__ import annotations

import csv
from pathlib import Path

from tests.scripts import load_script

from gpurent.estimate.efficiency import FITTED, FITTED_GPUS

ROOT = Path(__file__).resolve().parents[2]


def test_bundled_factors_equal_the_fit() -> None:
    mod = load_script("benchmarks/fit_arch_efficiency.py")
    rows = mod.load_rows(ROOT / "benchmarks/data/mlperf_training_8gpu.csv")
    assert mod.fit(rows) == FITTED
    assert mod.fit_gpus(rows) == FITTED_GPUS


def test_the_rows_name_their_source_and_exclude_held_out_rounds() -> None:
    with (ROOT / "benchmarks/data/mlperf_training_8gpu.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) >= 60
    for r in rows:
        assert r["round"] in ("v5.0", "v5.1")
        assert r["source_repo"] == f"mlcommons/training_results_{r['round']}"
        assert len(r["source_commit"]) == 40 and r["source_path"]
        assert r["submitter"] != "Lambda"
        assert int(r["num_gpus"]) == 8 and float(r["tokens_per_s"]) > 0
