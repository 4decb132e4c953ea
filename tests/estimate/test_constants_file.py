"""The fitter's writer and the estimator's reader agree on the constants file."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest
from tests.scripts import load_script

from gpurent.estimate.constants import parse_constants

ROOT = Path(__file__).parents[2]
BUNDLED = ROOT / "src/gpurent/estimate/data/calibration.json"


def _estimator_fit() -> ModuleType:
    pytest.importorskip("numpy")
    return load_script("benchmarks/estimator_fit.py")


def test_the_bundled_file_reads_back_and_writes_out_identically() -> None:
    """parse_constants then constants_to_json reproduces the bundled file byte for byte (keys,
    key order, rounding), so a refit that changes nothing changes no line of it."""
    fit = _estimator_fit()
    text = BUNDLED.read_text(encoding="utf-8")
    k = parse_constants(json.loads(text))
    assert json.dumps(fit.constants_to_json(k), indent=1) + "\n" == text
    assert parse_constants(json.loads(json.dumps(fit.constants_to_json(k)))) == k


def test_an_absolute_sync_stack_round_trips_as_seconds() -> None:
    """A stack without `sync_relative` writes and reads `sync_s`, not the share key."""
    fit = _estimator_fit()
    from gpurent.estimate.constants import StackCoeffs

    k = parse_constants(json.loads(BUNDLED.read_text(encoding="utf-8")))
    for relative in (False, True):
        sk = StackCoeffs(
            description="x",
            comm=k.comm,
            scaling={"m": (0.5, 0.012345)},
            default_scaling=(0.75, 0.001),
            sync_relative=relative,
        )
        raw = json.loads(json.dumps(fit.constants_to_json(k)))
        raw["stacks"] = {"s": fit._stack_json(sk)}
        back = parse_constants(raw).stack("s")
        assert back == sk
        key = "sync_share_per_doubling" if relative else "sync_s"
        assert raw["stacks"]["s"]["scaling"]["m"] == {"comm_scale": 0.5, key: 0.012345}
