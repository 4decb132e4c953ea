"""Issue 12: every GPU goes through one estimator path; AMD carries a fitted realized efficiency.

The LoRA configuration of the issue (llama3-8b, 8 GPUs, bf16, batch 4, seq 4096), through the CLI.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpurent.catalog import all_gpus, get_gpu
from gpurent.catalog.precision import Precision
from gpurent.cli.main import app
from gpurent.estimate import estimate
from gpurent.estimate.efficiency import realized_efficiency
from gpurent.estimate.perf import family_features
from gpurent.workload.models import get_model
from gpurent.workload.spec import Task, Workload

LORA = [
    "estimate",
    "--model",
    "llama3-8b",
    "--gpus",
    "8",
    "--precision",
    "bf16",
    "--batch-size",
    "4",
    "--seq-len",
    "4096",
    "--task",
    "finetune-lora",
    "--json",
]


def _lora(gpu: str) -> dict[str, object]:
    res = CliRunner().invoke(app, [*LORA, "--gpu", gpu])
    assert res.exit_code == 0, res.output
    doc: dict[str, object] = json.loads(res.output)
    return doc


def _tput(gpu: str) -> float:
    value = _lora(gpu)["throughput"]
    assert isinstance(value, float)
    return value


def test_b300_is_within_its_datasheet_ratio_of_b200() -> None:
    """Same dense bf16 rate and bandwidth (B300 has more memory): within 10 %, not 1.68x."""
    b200, b300 = get_gpu("B200"), get_gpu("B300")
    assert b300.fp16_tflops == b200.fp16_tflops
    assert b300.memory_bandwidth_gbps == b200.memory_bandwidth_gbps
    assert 0.9 <= _tput("B300") / _tput("B200") <= 1.1


def test_gpus_with_different_specs_get_different_estimates() -> None:
    figures = {g: _tput(g) for g in ("GB200", "GB300", "MI355X")}
    assert len({round(v) for v in figures.values()}) == 3, figures


def test_mi300x_is_not_far_above_an_h100_on_llm_training() -> None:
    """Public training measurements put MI300X at or below an H100 (MLPerf: 0.8x an H200)."""
    assert _tput("MI300X") / _tput("H100-SXM5-80GB") <= 1.2
    assert _tput("MI300X") / _tput("H200") <= 1.0


def test_the_json_says_where_the_efficiency_comes_from() -> None:
    mi = _lora("MI300X")
    assert mi["efficiency_basis"] == "fitted"
    notes = mi["notes"]
    assert isinstance(notes, list)
    assert any("MI300X (CDNA3): realized efficiency x0.68" in n for n in notes)
    assert _lora("H100")["efficiency_basis"] == "checked"
    assert _lora("A100-SXM4-80GB")["efficiency_basis"] == "reference"


def test_an_architecture_without_any_measurement_says_so() -> None:
    rubin = dataclasses.replace(get_gpu("B200"), name="R-X", architecture="Rubin")
    wl = Workload(
        model="llama3-8b",
        task=Task.FINETUNE_LORA,
        precision=Precision.BF16,
        batch_size_per_gpu=4,
        seq_len=4096,
    )
    est = estimate(wl, rubin, 8)
    assert est.efficiency_basis == "assumed"
    assert any("no public training measurement" in n for n in est.notes)


@pytest.mark.parametrize("gpu", [g.name for g in all_gpus()])
def test_every_gpu_takes_the_sm_side_terms(gpu: str) -> None:
    """No GPU skips the SM-side and issue-rate terms for want of a spec field: each row's SM
    count and clock change the step (a what-if spec without them derives them from fp32)."""
    spec = get_gpu(gpu)
    assert spec.sm_count is not None and spec.boost_clock_mhz is not None, gpu
    model = get_model("bert-large-squad")
    base = family_features(model, spec, Precision.AMP, 32, None, cuda_flops_per_sm_cycle=128.0)
    more = dataclasses.replace(spec, sm_count=spec.sm_count * 2)
    faster = family_features(model, more, Precision.AMP, 32, None, cuda_flops_per_sm_cycle=128.0)
    assert base[3] > 0.0 and faster[3] < base[3]
    assert faster[2] < base[2]


def test_a_spec_without_sms_derives_them_from_its_fp32_peak() -> None:
    b200 = get_gpu("B200")
    bare = dataclasses.replace(b200, sm_count=None, boost_clock_mhz=None)
    model = get_model("bert-large-squad")
    xs = family_features(model, bare, Precision.AMP, 32, None)[3]
    assert xs > 0.0
    # B200's sourced 148 SMs x 1.98 GHz equal its fp32 peak / 256 within 2 %
    assert abs(xs / family_features(model, b200, Precision.AMP, 32, None)[3] - 1.0) < 0.02


def test_the_realized_efficiency_divides_every_device_term() -> None:
    mi = get_gpu("MI300X")
    raw = dataclasses.replace(mi, name="MI300X-unfitted", architecture="CDNA3-unfitted")
    model = get_model("bert-large-squad")
    eta = realized_efficiency(mi).factor
    assert 0.3 < eta < 1.0
    a = family_features(model, mi, Precision.AMP, 32, None)
    b = family_features(model, raw, Precision.AMP, 32, None)
    for x, y in zip(a, b, strict=True):
        assert x == pytest.approx(y / eta)


def test_the_csv_batch_form_carries_the_efficiency_basis(tmp_path: Path) -> None:
    f = tmp_path / "rows.csv"
    f.write_text(
        "model,gpu,num_gpus,precision,batch_size,seq_len\n"
        "llama3-8b,MI300X,8,bf16,4,4096\nllama3-8b,A100-SXM4-80GB,8,bf16,4,4096\n"
    )
    res = CliRunner().invoke(app, ["estimate", "--from-csv", str(f), "--json"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.output.splitlines() if line.strip()]
    assert [r["efficiency_basis"] for r in rows] == ["fitted", "reference"]
