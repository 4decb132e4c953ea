"""The validation set (benchmarks/data/validation/) stays usable and clean: every row names a zoo
model and a catalog GPU, cites an allowed source, and is accepted by `gpurent estimate
--from-csv`. Issue 12: the set must never contain a held-out source."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from tests.conftest import run_cli

from gpurent.catalog import get_gpu, parse_precision
from gpurent.workload.models import get_model

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "validation"
FILES = ("llm.csv", "mlperf_throughput.csv", "cnn.csv")
REQUIRED = (
    "model",
    "gpu",
    "num_gpus",
    "precision",
    "batch_size",
    "measured_throughput",
    "measured_unit",
    "suite",
    "source_repo",
    "source_path",
    "source_commit",
    "note",
)
# Held out by the project's external reviewers (issue 12): never part of the validation set.
FORBIDDEN = (
    "training_results_v4.0",
    "mlperf-v4.0",
    "lambdal/",
    "deeplearning-benchmark",
    "llm-foundry",
    "torchtitan",
    "megatron-bridge",
    "nvidia/nemo",
    "performance_summary",
    "neusight",
    "calculon",
    "korthikanti",
)


def _rows(name: str) -> list[dict[str, str]]:
    with (DATA / name).open(newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.parametrize("name", FILES)
def test_every_row_is_well_formed_and_cites_an_allowed_source(name: str) -> None:
    rows = _rows(name)
    assert rows, f"{name} is empty"
    for i, r in enumerate(rows, start=2):
        where = f"{name}:{i}"
        missing = [c for c in REQUIRED if c not in r]
        assert not missing, f"{where}: missing columns {missing}"
        get_model(r["model"])  # raises for a model the zoo does not know
        get_gpu(r["gpu"])
        parse_precision(r["precision"])
        assert int(r["num_gpus"]) >= 1 and int(r["batch_size"]) >= 1, where
        assert float(r["measured_throughput"]) > 0, where
        mem = (r.get("measured_peak_mem_gib") or "").strip()
        assert not mem or 0 < float(mem) <= get_gpu(r["gpu"]).capacity_gib * 1.1, where
        # A repository needs its commit; a paper or web page goes in source_path.
        assert r["source_path"].strip(), f"{where}: no source"
        if r["source_repo"].strip():
            assert len(r["source_commit"].strip()) == 40, f"{where}: no commit"
        assert r["note"].strip(), f"{where}: no note"
        cited = " ".join(r[c] for c in ("suite", "source_repo", "source_path", "note")).lower()
        hits = [f for f in FORBIDDEN if f in cited]
        assert not hits, f"{where}: cites held-out source(s) {hits}"


@pytest.mark.parametrize("name", FILES)
def test_estimate_from_csv_answers_every_row(name: str, tmp_path: Path) -> None:
    rows = _rows(name)
    for r in rows:
        r.pop("stack", None)  # MLPerf rows say `tuned`, a stack the estimator may not know yet
    path = tmp_path / name
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    code, out, err = run_cli("estimate", "--from-csv", str(path), "--json")
    assert code == 0, err
    lines = [json.loads(ln) for ln in out.splitlines() if ln.strip()]
    assert len(lines) == len(rows)
    errors = [(i, o["error"]) for i, o in enumerate(lines, start=2) if "error" in o]
    assert not errors, errors[:3]
    for r, o in zip(rows, lines, strict=True):
        unit = str(o["throughput_unit"]).replace(" ", "")
        assert unit == r["measured_unit"].replace(" ", ""), (r["model"], o["throughput_unit"])


@pytest.mark.parametrize("name", ("llm.csv", "fp8_moe.csv"))
def test_no_measured_llm_row_runs_above_its_gpus_peak(name: str) -> None:
    """A measurement whose model FLOPs exceed the GPUs' dense peak was read wrongly (a per-GPU
    figure multiplied by the GPU count, say): 2 x active parameters x (3 passes, 2 for LoRA's
    frozen base) per token is a floor of the work, so tokens/s x that / GPUs <= peak."""
    from gpurent.workload.spec import LlmShape
    from gpurent.workload.zoo import llm_active_params

    with (DATA / name).open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["measured_unit"] == "tokens/s"]
    assert rows
    for r in rows:
        model = r["model"]
        if model.startswith("custom:"):
            kv = dict(p.split("=") for p in model.removeprefix("custom:").split(","))
            shape = LlmShape(
                layers=int(kv["layers"]),
                hidden=int(kv["hidden"]),
                heads=int(kv["heads"]),
                vocab=int(kv["vocab"]),
            )
        else:
            found = get_model(model).llm
            assert found is not None, model
            shape = found
        passes = 2.0 if (r.get("task") or "").startswith("finetune-lora") else 3.0
        flops = float(r["measured_throughput"]) * 2.0 * passes * llm_active_params(shape)
        peak = get_gpu(r["gpu"]).peak_tflops(parse_precision(r["precision"])) * 1e12
        assert flops / int(r["num_gpus"]) <= peak, (r["suite"], model, r["gpu"])
