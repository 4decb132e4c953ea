"""`gpurent plan` prices with the same estimator as `gpurent estimate`: the user's calibration
(`gpurent calibrate add`) anchors both (issue 12: plan used to ignore it)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli as run

MEASURED_IMAGES_PER_S = 500.0


def _add_h100_resnet_row(tmp_path: Path) -> None:
    rows = tmp_path / "mine.csv"
    rows.write_text(
        "model,gpu,num_gpus,precision,batch_size,throughput\n"
        f"resnet50,H100,1,amp,256,{MEASURED_IMAGES_PER_S}\n",
        encoding="utf-8",
    )
    code, _, err = run("calibrate", "add", str(rows))
    assert code == 0, err


def _estimate(gpus: int, nodes: int, *extra: str) -> dict[str, object]:
    code, out, err = run(
        "estimate",
        "--preset",
        "resnet50-imagenet",
        "--gpu",
        "H100",
        "--gpus",
        str(gpus),
        "--nodes",
        str(nodes),
        "--json",
        *extra,
    )
    assert code == 0, err
    doc: dict[str, object] = json.loads(out)
    return doc


def _plan_h100() -> dict[str, object]:
    code, out, err = run(
        "plan", "--preset", "resnet50-imagenet", "--gpu", "H100", "--max-nodes", "1", "--json"
    )
    assert code == 0, err
    doc: dict[str, object] = json.loads(out)
    return doc


def test_plan_prices_with_the_users_measurement_like_estimate(tmp_path: Path) -> None:
    before = _plan_h100()
    _add_h100_resnet_row(tmp_path)
    one = _estimate(1, 1)
    assert one["basis"] == "measured"
    assert one["throughput"] == MEASURED_IMAGES_PER_S
    after = _plan_h100()
    top = after["top"]
    assert isinstance(top, list) and top
    for cand in top:
        assert cand["basis"] == "measured", cand["instance_type"]
        est = _estimate(cand["num_gpus"], cand["nodes"])
        assert cand["throughput"] == est["throughput"], cand["instance_type"]
    # the measurement is ~5x slower than the model: the plan's figures follow it
    was = {c["instance_type"]: c["throughput"] for c in before["top"]}  # type: ignore[union-attr]
    for cand in top:
        if cand["instance_type"] in was:
            assert cand["throughput"] < 0.5 * was[cand["instance_type"]]


def test_clearing_the_calibration_reaches_the_next_plan(tmp_path: Path) -> None:
    """No estimate outlives its command: after `calibrate clear` the next plan (same process,
    as a long-lived caller would run it) is back on the model, and agrees with `estimate`."""
    _add_h100_resnet_row(tmp_path)
    assert all(c["basis"] == "measured" for c in _plan_h100()["top"])  # type: ignore[union-attr]
    assert _estimate(1, 1, "--no-measured")["basis"] == "calibrated"
    code, _, err = run("calibrate", "clear")
    assert code == 0, err
    plan = _plan_h100()
    for cand in plan["top"]:  # type: ignore[union-attr]
        assert cand["basis"] == "calibrated"
        assert cand["throughput"] == _estimate(cand["num_gpus"], cand["nodes"])["throughput"]
