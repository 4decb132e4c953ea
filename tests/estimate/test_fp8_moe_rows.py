"""The fp8 and MoE validation rows (benchmarks/data/validation/fp8_moe.csv, issue 18) parse,
cite an allowed public source each, and are all answered by `gpurent estimate --from-csv` with
their layout (tp/pp/cp/ep) and the tuned stack, without an error."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from tests.conftest import run_cli
from tests.estimate.test_validation_set import FORBIDDEN
from tests.scripts import load_script

from gpurent.catalog import get_gpu, parse_precision
from gpurent.workload.models import get_model

ROOT = Path(__file__).resolve().parents[2]
CSV = ROOT / "benchmarks" / "data" / "validation" / "fp8_moe.csv"
TAGS = {"fp8", "moe", "mxfp8"}


def _rows() -> list[dict[str, str]]:
    with CSV.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_every_row_parses_and_cites_an_allowed_source() -> None:
    rows = _rows()
    # issue 18: at least 15 rows of each kind
    assert sum("fp8" in r["validates"].split("+") for r in rows) >= 15
    assert sum("moe" in r["validates"].split("+") for r in rows) >= 15
    for i, r in enumerate(rows, start=2):
        where = f"fp8_moe.csv:{i}"
        model = get_model(r["model"])
        get_gpu(r["gpu"])
        assert parse_precision(r["precision"]).value in ("fp8", "mxfp8"), where
        tags = set(r["validates"].split("+"))
        assert tags and tags <= TAGS, where
        assert ("moe" in tags) == bool(model.llm and model.llm.experts), where
        assert float(r["measured_throughput"]) > 0 and r["measured_unit"] == "tokens/s", where
        assert r["source_repo"].strip() and r["source_path"].strip(), f"{where}: no source"
        assert re.fullmatch(r"[0-9a-f]{40}", r["source_commit"]), f"{where}: no commit"
        assert r["note"].strip(), f"{where}: no note"
        cited = " ".join(r[c] for c in ("suite", "source_repo", "source_path", "note")).lower()
        assert not [f for f in FORBIDDEN if f in cited], where
        n, tp, pp, cp = (int(r[c] or 1) for c in ("num_gpus", "tp", "pp", "cp"))
        assert n % (tp * pp * cp) == 0, f"{where}: tp x pp x cp does not divide the GPUs"


def test_estimate_from_csv_answers_every_row_with_its_layout(tmp_path: Path) -> None:
    rows = _rows()
    inputs = tmp_path / "rows.csv"
    keep = [c for c in rows[0] if c not in {"note", "source_path", "source_repo"}]
    with inputs.open("w", newline="") as fh:
        w = csv.DictWriter(fh, keep, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    code, out, err = run_cli("estimate", "--from-csv", str(inputs), "--json")
    assert code == 0, err
    answers = [json.loads(ln) for ln in out.splitlines() if ln.strip()]
    assert len(answers) == len(rows)
    assert not [(i, a["error"]) for i, a in enumerate(answers, start=2) if "error" in a]
    for r, a in zip(rows, answers, strict=True):
        assert a["throughput"] > 0 and a["throughput_unit"] == "tokens/s"
        assert str(a["ep"]) == r["ep"] and a["stack"] == "tuned"


def test_bench_reports_both_groups() -> None:
    env_path = str(ROOT / "src")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_estimator_fp8_moe.py")],
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"fp8 \(FP8 recipes\): \d+ rows, MAPE \d+\.\d%", proc.stdout)
    assert re.search(r"moe \(MXFP8\): \d+ rows, MAPE \d+\.\d%", proc.stdout)
    assert re.search(r"moe, no training-split sibling: \d+ rows, MAPE \d+\.\d%", proc.stdout)


def test_moe_validation_and_training_rows_come_from_different_submitters() -> None:
    """No submitter has MoE rows on both sides (benchmarks/data/mlperf_moe_fit.csv trains,
    fp8_moe.csv validates), and `bench_estimator_fp8_moe.sibling_key` finds the one
    validation row that reruns a training row's layout on the same GPU count (Nebius' GB300
    72-GPU run of Supermicro's training row), so the bench can leave it out."""
    bench = load_script("benchmarks/bench_estimator_fp8_moe.py")
    split = ROOT / "benchmarks" / "data" / "mlperf_moe_fit.csv"
    with split.open(newline="") as fh:
        train = list(csv.DictReader(fh))
    moe = [r for r in _rows() if "moe" in r["validates"].split("+")]

    def who(rows: list[dict[str, str]]) -> set[str]:
        return {r["source_path"].split("/", 1)[0] for r in rows}

    assert not who(train) & who(moe), who(train) & who(moe)
    keys = bench.training_keys(split)
    siblings = [r["source_path"] for r in moe if bench.sibling_key(r) in keys]
    assert any(p.startswith("Nebius/results/nebius_gb300_n18/") for p in siblings)
    assert any(p.startswith("NVIDIA/results/theia_ngpu72_") for p in siblings)


def _fit_script() -> ModuleType:
    return load_script("benchmarks/fit_tuned_stack.py")


def test_the_pretraining_training_split_holds_only_fitted_rounds() -> None:
    """`fit_tuned_stack.py --pretrain` may read only rounds the tuned stack fits on (v5.1 only
    for Llama 3.1 8B off Hopper: the Hopper 8B rows are validation rows), and none of the
    held-out rows; the bundled fit (no --pretrain) reads none of it."""
    mod = _fit_script()
    split = mod.load(pretrain=mod.PRETRAIN_FIT)
    pre = [r for r in split if mod.row_key(r) == "llm"]
    assert len(pre) >= 20
    assert {r["_round"] for r in pre} <= {"v3.0", "v3.1", "v5.0", "v5.1"}
    v51 = [r for r in pre if r["_round"] == "v5.1"]
    assert v51 and {r["model"] for r in v51} == {"llama3-8b"}
    assert not [r for r in v51 if r["gpu"].startswith(("H100", "H200"))]
    held = {(r["source_path"], r["measured_throughput"]) for r in _rows()}
    assert not [r for r in pre if (r["source_path"], r["measured_throughput"]) in held]
    assert all(mod.row_key(r) != "llm" for r in mod.load())


def test_bench_refuses_a_missing_training_split(tmp_path: Path) -> None:
    """Without the training split every MoE row would pass as independent: an error instead."""
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "bench_estimator_fp8_moe.py"),
            "--split",
            str(tmp_path / "missing.csv"),
        ],
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert proc.returncode != 0
    assert "MoE training split" in proc.stderr and "not found; pass --split" in proc.stderr
    assert "Traceback" not in proc.stderr
