"""`extract_fp8_mlperf.py --v60-moe` on a small fixture tree shaped like one v6.0 submitter's."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "data" / "validation" / "extract_fp8_mlperf.py"


def _mllog(key: str, value: object, lineno: int = 328) -> str:
    rec = {"key": key, "value": value, "metadata": {"lineno": lineno}}
    return "0: :::MLLOG " + json.dumps(rec)


def _log(steps: list[float], *, batch: int | None = 36) -> str:
    sysjson = {"accelerator_model_name": "NVIDIA Blackwell Ultra GPU (GB300)"}
    lines = [
        ":::DLPAL /x.sqsh 1 18 slot[0-17] 'unknown' GB300_18x4x1xtp1pp1cp2ep4_mxfp8",
        ":::SYSJSON " + json.dumps(sysjson),
    ]
    if batch is not None:
        lines.append(_mllog("global_batch_size", batch, 542))
    for t in steps:
        lines.append(_mllog("tracked_stats", {"train_step_time": t, "reduced_train_loss": 5.0}))
    lines.append(_mllog("tracked_stats", {"train_step_time": 9.9}, 286))  # a block mean
    return "\n".join(lines) + "\n"


def _run(*trees: Path) -> tuple[list[dict[str, str]], str]:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--v60-moe", *map(str, trees)],
        capture_output=True,
        text=True,
        check=True,
    )
    return list(csv.DictReader(io.StringIO(out.stdout))), out.stderr


def test_rows_take_the_median_over_files_of_each_files_median_first_dropped(
    tmp_path: Path,
) -> None:
    system = tmp_path / "Acme" / "results" / "nvl72" / "gpt_oss_20b"
    system.mkdir(parents=True)
    (system / "result_0.txt").write_text(_log([0.5, 0.16, 0.15, 0.17]))
    (system / "result_1.txt").write_text(_log([0.4, 0.18, 0.18, 0.18]))
    (system / "result_2.txt").write_text(_log([0.4, 0.16, 0.16, 0.16]))
    rows, _ = _run(tmp_path / "Acme")
    assert len(rows) == 1
    r = rows[0]
    assert (r["gpu"], r["num_gpus"], r["nodes"], r["cp"], r["ep"]) == (
        "GB300",
        "72",
        "18",
        "2",
        "4",
    )
    assert r["precision"] == "mxfp8" and r["batch_size"] == "1"
    assert int(r["measured_throughput"]) == round(36 * 8192 / 0.16)


def test_missing_batch_is_derived_and_validation_submitters_are_refused(tmp_path: Path) -> None:
    for who in ("Acme", "NVIDIA"):
        system = tmp_path / who / "results" / "nvl72" / "gpt_oss_20b"
        system.mkdir(parents=True)
        (system / "result_0.txt").write_text(_log([0.5, 0.2, 0.2], batch=None))
    rows, err = _run(tmp_path / "Acme", tmp_path / "NVIDIA")
    assert len(rows) == 1 and int(rows[0]["measured_throughput"]) == round(36 * 8192 / 0.2)
    assert "NVIDIA: validation or held-out submitter" in err
