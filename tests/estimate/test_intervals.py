"""Every estimate carries an 80% interval from the estimator's own cross-validated error
(issue 12, "Uncertainty on every figure"): the bundled table, the classes, the rules, the CLI."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
from tests.conftest import run_cli as run

from gpurent.catalog import Precision, get_gpu
from gpurent.catalog.specs import all_gpus
from gpurent.errors import DataError
from gpurent.estimate import bundled_estimator
from gpurent.estimate.efficiency import realized_efficiency
from gpurent.estimate.measured import Calibration, MeasuredRow
from gpurent.estimate.uncertainty import (
    FAMILIES,
    GROUPS,
    MEASURED_NOISE,
    SCALES,
    WIDEN,
    interval_for,
    load_intervals,
    parse_intervals,
)
from gpurent.workload.models import MODELS
from gpurent.workload.spec import AttentionKernel, Task, Workload

ONE_PER_FAMILY = {m.family: m.name for m in MODELS.values()}  # last zoo model of each family
ENGINE = bundled_estimator()


def _log_width(low: float, high: float) -> float:
    return math.log(high) - math.log(low)


def test_bundled_table_loads_with_provenance_and_sane_classes() -> None:
    table = load_intervals()
    prov = table.provenance
    assert "fit_intervals.py" in prov["command"] and prov["fitted_on"]
    assert set(prov["data"]) == {"lambda_train_throughput.csv", "mosaic_mpt_a100.csv"}
    # the calibration check the file records: LOAO coverage of the 80% interval within 75-85%
    assert 0.75 <= prov["coverage"]["unseen-architecture"]["all"] <= 0.85
    for cls in table.classes.values():
        assert cls.log_low < 0.0 < cls.log_high, cls  # every class brackets "no error"
        assert cls.rows >= 20, cls


@pytest.mark.parametrize("group", GROUPS)
def test_every_class_the_code_can_ask_for_resolves(group: str) -> None:
    table = load_intervals()
    for scale in SCALES:
        for family in FAMILIES:
            assert table.lookup(group, scale, family).key.startswith(f"{group}/")


def test_every_gpu_and_model_family_gets_an_interval_around_its_estimate() -> None:
    """All bundled GPUs x one model per zoo family x 1 and 8 GPUs: low <= estimate <= high."""
    for gpu in all_gpus():
        for family, name in sorted(ONE_PER_FAMILY.items()):
            model = MODELS[name]
            wl = Workload(
                model=name,
                precision=Precision.BF16 if model.is_llm else Precision.AMP,
                batch_size_per_gpu=1,
                task=Task.TRAINING,
            )
            for n in (1, 8):
                est = ENGINE.estimate(wl, gpu, n)
                assert est.throughput_low <= est.throughput <= est.throughput_high, (gpu, name)
                assert est.interval_low < 1.0 < est.interval_high, (gpu.name, family, n)
                assert est.step_time_low_s <= est.step_time_s <= est.step_time_high_s
                assert est.interval_coverage == 0.8
                basis = realized_efficiency(gpu).basis
                group = "within-architecture" if basis == "reference" else "unseen-architecture"
                assert est.interval_class.startswith(group), (gpu.name, est.interval_class)


def test_time_bounds_are_the_inverse_of_throughput_bounds() -> None:
    wl = Workload(
        model="resnet50",
        precision=Precision.AMP,
        batch_size_per_gpu=64,
        dataset_samples=1_281_167,
        epochs=2,
    )
    est = ENGINE.estimate(wl, get_gpu("A100-80GB"), 8)
    assert est.time_to_finish_s is not None
    assert est.time_to_finish_high_s == pytest.approx(est.time_to_finish_s / est.interval_low)
    assert est.time_to_finish_low_s == pytest.approx(est.time_to_finish_s / est.interval_high)


def test_an_architecture_never_measured_is_wider_than_a_reference_one() -> None:
    a100 = get_gpu("A100-80GB")
    unknown = replace(a100, name="Whatif-X", aliases=(), architecture="Brandnew")
    assert realized_efficiency(unknown).basis == "assumed"
    wl = Workload(model="bert-large-squad", precision=Precision.AMP, batch_size_per_gpu=32)
    ref, new = ENGINE.estimate(wl, a100, 1), ENGINE.estimate(wl, unknown, 1)
    assert _log_width(new.interval_low, new.interval_high) > _log_width(
        ref.interval_low, ref.interval_high
    )
    # the stated rule: the unseen-architecture class's log width times WIDEN
    cls = load_intervals().lookup("unseen-architecture", "1gpu", "transformer")
    assert _log_width(new.interval_low, new.interval_high) == pytest.approx(
        WIDEN * (cls.log_high - cls.log_low)
    )
    assert "never measured" in new.interval_class


def test_inference_is_widened_by_the_stated_rule() -> None:
    # the fitted kernel: training's interval is its class's alone (no kernel-share spread)
    base = Workload(
        model="llama3-8b",
        precision=Precision.BF16,
        batch_size_per_gpu=1,
        attention_kernel=AttentionKernel.FITTED,
    )
    h100 = get_gpu("H100")
    train = ENGINE.estimate(base, h100, 8)
    infer = ENGINE.estimate(replace(base, task=Task.INFERENCE), h100, 8)
    w_train = _log_width(train.interval_low, train.interval_high)
    assert _log_width(infer.interval_low, infer.interval_high) == pytest.approx(WIDEN * w_train)
    assert "training only" in infer.interval_class


def test_a_measurement_of_the_same_configuration_has_its_noise_as_interval() -> None:
    row = MeasuredRow(
        model="resnet50",
        gpu="H100-SXM5-80GB",
        num_gpus=1,
        precision=Precision.AMP,
        batch_size=256,
        throughput=500.0,
        seq_len=None,
        throughput_unit="images/s",
    )
    engine = ENGINE.with_calibration(Calibration((row,)))
    wl = Workload(model="resnet50", precision=Precision.AMP, batch_size_per_gpu=256)
    exact = engine.estimate(wl, get_gpu("H100"), 1)
    assert exact.basis == "measured" and exact.throughput == pytest.approx(500.0)
    assert exact.interval_high == pytest.approx(1 + MEASURED_NOISE)
    # at another GPU count the measurement transfers through the model's scaling: "anchored"
    moved = engine.estimate(wl, get_gpu("H100"), 8)
    assert moved.basis == "measured" and moved.interval_class.startswith("anchored/multi/cnn")
    uncal = ENGINE.estimate(wl, get_gpu("H100"), 8)
    assert (
        _log_width(exact.interval_low, exact.interval_high)
        < _log_width(moved.interval_low, moved.interval_high)
        < _log_width(uncal.interval_low, uncal.interval_high)
    )


def test_interval_rule_clamps_so_the_estimate_lies_inside() -> None:
    doc = {"classes": {f"{g}/*/*": {"log_low": 0.1, "log_high": 0.3, "rows": 50} for g in GROUPS}}
    iv = interval_for(
        parse_intervals(doc),
        basis="calibrated",
        efficiency_basis="reference",
        num_gpus=1,
        model_family="cnn",
        trains=True,
    )
    assert iv.low == 1.0 and iv.high == pytest.approx(math.exp(0.3))


@pytest.mark.parametrize(
    "doc",
    [
        {"classes": {}},
        {"classes": {f"{g}/*/*": {"log_low": 0.2, "log_high": -0.2, "rows": 9} for g in GROUPS}},
        {"classes": {"within-architecture/*/*": {"log_low": "x"}}},
        {},
    ],
)
def test_a_broken_interval_file_is_a_data_error(doc: dict[str, object]) -> None:
    with pytest.raises(DataError, match=r"intervals\.json"):
        parse_intervals(doc)


def test_cli_estimate_prints_and_emits_the_interval() -> None:
    args = ("estimate", "--model", "resnet50", "--gpu", "A100-80GB", "--gpus", "4")
    code, out, err = run(*args)
    assert code == 0, err
    line = next(x for x in out.splitlines() if "throughput" in x)
    assert "images/s (80%: " in line
    assert "cross-validated error" in out
    code, out, err = run(*args, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["throughput_low"] < doc["throughput"] < doc["throughput_high"]
    assert doc["step_time_low_s"] < doc["step_time_s"] < doc["step_time_high_s"]
    assert doc["interval_class"].startswith("within-architecture/multi/cnn")


def test_cli_from_csv_rows_carry_the_interval(tmp_path: Path) -> None:
    f = tmp_path / "rows.csv"
    f.write_text("model,gpu,num_gpus,precision,batch_size\nresnet50,H100,8,amp,256\n")
    code, out, err = run("estimate", "--from-csv", str(f), "--json")
    assert code == 0, err
    row = json.loads(out.splitlines()[0])
    assert row["throughput_low"] < row["throughput"] < row["throughput_high"]
    assert row["interval_class"].startswith("unseen-architecture/multi/cnn")
    code, out, err = run("estimate", "--from-csv", str(f))
    assert code == 0, err
    assert "80%" in out  # the throughput column is "throughput (80% range)"
