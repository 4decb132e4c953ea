"""Result JSON: round trip, schema version, calibration rows, clear errors on bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpurent.bench.result import (
    SCHEMA_VERSION,
    CalibrationRow,
    Status,
    load_result,
    result_to_dict,
    save_result,
)
from gpurent.errors import DataError


def test_round_trip_keeps_every_field(bb, tmp_path: Path) -> None:
    cal = (
        CalibrationRow(
            model="mpt-1b",
            gpu="H200-SXM-141GB",
            num_gpus=1,
            precision="bf16",
            batch_size=4,
            throughput=5e4,
            throughput_unit="tokens/s",
            seq_len=2048,
        ),
    )
    result = bb.bench_result(
        (bb.meas("membw.copy", 4500.0), bb.meas("allreduce.busbw", None)),
        (bb.model_run(),),
        bb.h200_hw,
        cal,
    )
    path = tmp_path / "sub" / "r.json"
    save_result(result, path)
    assert load_result(path) == result
    data = json.loads(path.read_text())
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["calibration_rows"] == [
        {
            "model": "mpt-1b",
            "gpu": "H200-SXM-141GB",
            "num_gpus": 1,
            "precision": "bf16",
            "batch_size": 4,
            "throughput": 5e4,
            "throughput_unit": "tokens/s",
            "seq_len": 2048,
        }
    ]
    assert {r["status"] for r in data["verdict"]} <= {s.value for s in Status}


@settings(max_examples=25)
@given(value=st.one_of(st.none(), st.floats(0, 1e6, allow_nan=False)), detail=st.text(max_size=30))
def test_any_measurement_survives_json(bb, value, detail, tmp_path_factory) -> None:
    result = bb.bench_result((bb.meas("disk.seq-read", value, detail=detail),))
    path = tmp_path_factory.mktemp("r") / "r.json"
    save_result(result, path)
    assert load_result(path) == result


def test_wrong_schema_version_says_rerun(bb, tmp_path: Path) -> None:
    data = result_to_dict(bb.bench_result())
    data["schema_version"] = 99
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    with pytest.raises(DataError, match=r"old.json: bench result schema_version 99 .* re-run"):
        load_result(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", r"bad.json:1: not valid JSON"),
        ("[1, 2]", r"not a gpurent bench result"),
        ('{"schema_version": 1}', r"missing field 'verdict'"),
    ],
)
def test_bad_files_are_one_line_data_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(DataError, match=message):
        load_result(path)


def test_bad_status_and_bad_row_are_named(bb, tmp_path: Path) -> None:
    data = result_to_dict(bb.bench_result((bb.meas("membw.copy", 1.0),)))
    data["verdict"][0]["status"] = "great"
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    with pytest.raises(DataError, match=r"verdict\[0\]: unknown status 'great'"):
        load_result(path)
    data = result_to_dict(bb.bench_result((bb.meas("membw.copy", 1.0),)))
    del data["measurements"][0]["unit"]
    path.write_text(json.dumps(data))
    with pytest.raises(DataError, match=r"measurements\[0\]"):
        load_result(path)


@pytest.mark.parametrize(
    ("section", "field", "bad"),
    [
        ("measurements", "value", "fast"),
        ("measurements", "unit", 3),
        ("model_runs", "batch_size", 2.5),
        ("hardware", "gpu_count", True),
    ],
)
def test_wrongly_typed_fields_are_refused(bb, tmp_path: Path, section, field, bad) -> None:
    data = result_to_dict(bb.bench_result((bb.meas("membw.copy", 1.0),), (bb.model_run(),)))
    target = data[section] if section == "hardware" else data[section][0]
    target[field] = bad
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    with pytest.raises(DataError, match=f"field '{field}' has a bad value"):
        load_result(path)
