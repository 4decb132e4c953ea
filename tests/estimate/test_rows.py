"""`estimate.rows`: estimates of rows of text cells (what `estimate --from-csv` runs), and
`Estimate.to_json` (what `estimate --json` prints)."""

from __future__ import annotations

import json
import math

import pytest

from gpurent.catalog import get_gpu
from gpurent.errors import InputError
from gpurent.estimate.estimator import bundled_estimator
from gpurent.estimate.rows import check_header, estimate_row, estimate_rows
from gpurent.workload import Workload
from gpurent.workload.spec import Stack

ROW = {"model": "resnet50", "gpu": "H100", "num_gpus": "8", "precision": "amp"}


def test_a_row_gives_its_cells_and_its_estimate() -> None:
    est = bundled_estimator()
    row = {**ROW, "batch_size": "256", "note": " mine "}
    out = estimate_row(row, "f:2", est, default_stack=Stack.NGC_22_09)
    assert out["note"] == "mine" and out["num_gpus"] == 8 and out["stack"] == "ngc-22.09"
    wl = Workload(model="resnet50", batch_size_per_gpu=256, stack=Stack.NGC_22_09)
    assert out["throughput"] == est.estimate(wl, get_gpu("H100"), 8).throughput


def test_bad_rows_are_errors_naming_source_and_line_and_the_rest_run() -> None:
    records = [
        (2, {**ROW, "batch_size": "64"}),
        (3, {**ROW, "batch_size": ""}),
        (4, {**ROW, "batch_size": "64", "interconnect": "nvlnk"}),
        (5, {**ROW, "batch_size": "64", "gpu": "H1000"}),
        (6, {**ROW, "batch_size": "64", "tp": "2", "nodes": "1"}),
    ]
    out = list(estimate_rows(records, "f.csv", bundled_estimator()))
    assert out[0]["throughput"] > 0 and out[4]["throughput"] > 0
    assert out[1] == {"error": "f.csv:3: missing batch_size"}
    assert out[2]["error"].startswith("f.csv:4: interconnect: unknown interconnect 'nvlnk'")
    assert out[3]["error"].startswith("f.csv:5: unknown GPU 'H1000'")


def test_a_header_without_the_required_columns_is_refused() -> None:
    check_header(["model", "gpu", "num_gpus", "precision", "batch_size", "x"], "f.csv")
    with pytest.raises(InputError, match=r"^f\.csv: CSV header lacks num_gpus, batch_size$"):
        check_header(["model", "gpu", "precision"], "f.csv")


def test_to_json_is_plain_json_with_the_bounds_and_totals() -> None:
    wl = Workload(model="llama3-8b", batch_size_per_gpu=64, seq_len=8192, fused_loss=True)
    est = bundled_estimator().estimate(wl, get_gpu("L4"), 1)
    doc = est.to_json()
    assert json.loads(json.dumps(doc, allow_nan=False)) == doc  # no enums, tuples or NaN
    assert doc["fits"] is est.fits is False and doc["fused_loss"] is True
    assert doc["bottleneck"] == "memory-capacity"
    assert doc["memory"]["total_gib"] == est.memory.total_gib
    assert math.isclose(
        doc["memory"]["headroom_gib"], est.memory.capacity_gib - est.memory.total_gib
    )
    assert doc["throughput_low"] == est.throughput_low and doc["notes"] == list(est.notes)
    assert list(doc)[-1] == "fused_loss"
