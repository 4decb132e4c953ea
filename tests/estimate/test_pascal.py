"""Pascal GPUs (P100, P40, P4: no tensor cores) are estimated on the one path every GPU takes,
with half precision at the CUDA cores' rate, and checked on TensorFlow's DGX-1 P100 table."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from tests.conftest import cli_json

from gpurent.catalog import Precision, get_gpu

VALIDATION = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "validation"


def _est(*args: str) -> dict[str, object]:
    return cli_json("estimate", "--model", "resnet50", "--batch-size", "64", "--json", *args)


def _tput(gpu: str, precision: str, gpus: int = 1) -> float:
    doc = _est("--gpu", gpu, "--gpus", str(gpus), "--precision", precision)
    value = doc["throughput"]
    assert isinstance(value, float)
    return value


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("P100", "P100-PCIe-16GB"),
        ("Tesla P100-PCIE-16GB", "P100-PCIe-16GB"),
        ("Tesla P100-SXM2-16GB", "P100-SXM2-16GB"),
        ("Tesla P40", "P40"),
        ("p4", "P4"),
        ("RTX3060", "RTX-3060"),
        ("GeForce RTX 3060", "RTX-3060"),
    ],
)
def test_names_resolve(name: str, canonical: str) -> None:
    assert get_gpu(name).name == canonical


def test_half_precision_rates_follow_the_cuda_cores() -> None:
    p100, p40 = get_gpu("P100-SXM2-16GB"), get_gpu("P40")
    assert not p100.has_tensor_cores and not p40.has_tensor_cores
    assert get_gpu("V100").has_tensor_cores and get_gpu("RTX-3060").has_tensor_cores
    assert p100.peak_tflops(Precision.AMP) == pytest.approx(2 * p100.peak_tflops(Precision.FP32))
    assert p40.peak_tflops(Precision.AMP) == p40.peak_tflops(Precision.FP32)  # fp16 math is 1:64
    assert p100.peak_tflops(Precision.BF16) == p100.fp32_tflops  # no bf16 at all


def test_amp_pays_more_on_a_p100_than_on_a_p40() -> None:
    p100_gain = _tput("P100", "amp") / _tput("P100", "fp32")
    p40_gain = _tput("P40", "amp") / _tput("P40", "fp32")  # half the bytes, no faster math
    assert p100_gain > 1.2
    assert 1.0 <= p40_gain < p100_gain
    assert _tput("P100-SXM2-16GB", "amp") > _tput("P100", "amp")  # 1480 vs 1300 MHz
    assert _tput("P100", "amp") < _tput("V100", "amp")


def test_the_estimate_says_there_are_no_tensor_cores_and_what_checks_pascal() -> None:
    doc = _est("--gpu", "P40", "--precision", "amp")
    notes = doc["notes"]
    assert isinstance(notes, list)
    assert any("P40 has no tensor cores" in n and "1.0x its fp32 rate" in n for n in notes)
    assert doc["efficiency_basis"] == "checked"
    bf16 = _est("--gpu", "P4", "--precision", "bf16")["notes"]
    assert isinstance(bf16, list)
    assert "P4 has no tensor cores and no bf16: runs at the fp32 rate" in bf16
    fp32 = _est("--gpu", "P40", "--precision", "fp32")["notes"]
    assert isinstance(fp32, list) and not any("no tensor cores" in n for n in fp32)


def test_tensorflow_dgx1_p100_rows_within_20_percent() -> None:
    """The 8 rows of benchmarks/data/validation/cnn.csv (8.1 % MAPE when added, never fitted)."""
    with (VALIDATION / "cnn.csv").open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["gpu"].startswith("P100")]
    assert len(rows) == 8
    for r in rows:
        args = ["--gpu", r["gpu"], "--gpus", r["num_gpus"], "--precision", r["precision"]]
        doc = cli_json(
            "estimate", "--model", r["model"], "--batch-size", r["batch_size"], "--json", *args
        )
        predicted = doc["throughput"]
        assert isinstance(predicted, float)
        measured = float(r["measured_throughput"])
        assert abs(predicted / measured - 1) <= 0.20, (r["num_gpus"], r["batch_size"], predicted)
