"""`benchmarks/bench_estimator_validation.py` scores issue 12's Hopper/Blackwell target only on
rows the estimator was not fitted on: llm.csv rows and the tuned stack's held-out MLPerf round."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]


def _bench() -> ModuleType:
    return load_script("benchmarks/bench_estimator_validation.py")


def _row(mod: ModuleType, kind: str, suite: str, gpu: str, predicted: float) -> object:
    return mod.Row(
        kind=kind,
        inputs={"gpu": gpu, "model": "llama3-8b", "num_gpus": "8", "batch_size": "1"},
        suite=suite,
        measured=100.0,
        measured_unit="tokens/s",
        measured_mem_gib=None,
        predicted=predicted,
        predicted_mem_gib=None,
        fits=True,
        error=None,
    )


def test_only_never_fitted_hopper_and_blackwell_rows_count() -> None:
    mod = _bench()
    held = json.loads((ROOT / "src/gpurent/estimate/data/tuned_stack.json").read_text())
    held_round = held["provenance"]["held_out_round"]
    rows = [
        _row(mod, "llm", "ml-engineering", "H100-SXM5-80GB", 110.0),  # 10 %
        _row(mod, "mlperf", f"mlperf-{held_round}", "B200-180GB", 80.0),  # 20 %
        _row(mod, "mlperf", "mlperf-v3.0", "H100-SXM5-80GB", 200.0),  # fitted round: out
        _row(mod, "llm", "torchtune", "A100-SXM4-80GB", 300.0),  # Ampere: out
    ]
    line = mod.hopper_blackwell_line(rows)
    assert "1 llm.csv rows + 1 MLPerf" in line
    assert "MAPE 15.0%" in line and "NOT met" in line
    met = mod.hopper_blackwell_line([_row(mod, "llm", "x", "GB200", 105.0)])
    assert "MAPE 5.0%" in met and met.endswith(": met")
