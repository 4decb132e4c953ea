"""fp8 recipes, MXFP8 and NVFP4: who can run them, and what they add to an fp8 estimate."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
from tests.conftest import run_cli as run

from gpurent.catalog import Precision, get_gpu, parse_precision
from gpurent.errors import InputError
from gpurent.estimate import estimate
from gpurent.estimate.estimator import llm_output_layer_share
from gpurent.estimate.precisions import (
    FP8_GEMM_REALIZATION,
    RECIPES,
    llm_training_gemm_gain,
    low_float_gemm_gain,
)
from gpurent.workload import Workload
from gpurent.workload.models import get_model

LLM = Workload(model="llama3-8b", precision=Precision.FP8, batch_size_per_gpu=2, seq_len=4096)


@pytest.mark.parametrize(
    ("gpu", "precision", "words"),
    [
        ("T4", "fp8", ("T4", "fp8", "Turing")),
        ("A100-SXM4-80GB", "fp8-rowwise", ("A100-SXM4-80GB", "fp8-rowwise")),
        ("H100", "nvfp4", ("H100-SXM5-80GB", "nvfp4", "Hopper", "Blackwell")),
        ("H100", "mxfp8", ("H100-SXM5-80GB", "mxfp8", "Hopper")),
        ("MI300X", "nvfp4", ("MI300X", "nvfp4", "CDNA3")),
    ],
)
def test_a_gpu_that_cannot_run_the_precision_is_one_line_naming_both(
    gpu: str, precision: str, words: tuple[str, ...]
) -> None:
    code, out, err = run(
        "estimate", "--model", "llama3-8b", "--gpu", gpu, "--precision", precision,
        "--batch-size", "1", "--seq-len", "1024",
    )  # fmt: skip
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    for w in words:
        assert w in err, (w, err)


def test_block_scaled_formats_run_where_the_tensor_cores_have_them() -> None:
    for gpu, p in (("B200", "nvfp4"), ("GB300", "nvfp4"), ("B200", "mxfp8"), ("MI355X", "mxfp8")):
        est = estimate(replace(LLM, precision=parse_precision(p)), get_gpu(gpu), 8)
        assert est.throughput > 0, (gpu, p)


def test_nvfp4_is_its_measured_speedup_over_fp8_with_a_wider_interval() -> None:
    gpu = get_gpu("B200")
    fp8 = estimate(LLM, gpu, 8)
    fp4 = estimate(replace(LLM, precision=Precision.NVFP4), gpu, 8)
    assert fp4.throughput / fp8.throughput == pytest.approx(
        RECIPES[Precision.NVFP4].speedup_vs_fp8, rel=1e-9
    )
    assert fp4.interval_low < fp8.interval_low and fp4.interval_high > fp8.interval_high
    assert "nvfp4 spread (4 measurements)" in fp4.interval_class
    assert any("MaxText" in n for n in fp4.notes)


def test_nvfp4_factor_is_the_geometric_mean_of_the_cited_measurements() -> None:
    """FP8 -> NVFP4 TFLOP/s per GPU in NVIDIA's MaxText post (precisions.py docstring)."""
    pairs = [(149.7, 171.3), (175.9, 230.1), (155.7, 222.4), (210.3, 363.3)]
    logs = [math.log(b / a) for a, b in pairs]
    mean = sum(logs) / len(logs)
    r = RECIPES[Precision.NVFP4]
    assert r.speedup_vs_fp8 == pytest.approx(math.exp(mean), abs=1e-3)
    assert r.log_low == pytest.approx(1.5 * (min(logs) - mean), abs=1e-3)
    assert r.log_high == pytest.approx(1.5 * (max(logs) - mean), abs=1e-3)
    assert r.measurements == len(pairs)


@pytest.mark.parametrize(
    "precision", [Precision.FP8_TENSORWISE, Precision.FP8_ROWWISE, Precision.FP8_DELAYED]
)
def test_unmeasured_fp8_recipes_are_fp8_with_an_assumed_wider_interval(
    precision: Precision,
) -> None:
    gpu = get_gpu("H100")
    fp8 = estimate(LLM, gpu, 8)
    rec = estimate(replace(LLM, precision=precision), gpu, 8)
    assert rec.throughput == pytest.approx(fp8.throughput, rel=1e-12)
    assert rec.interval_high > fp8.interval_high
    assert "assumed, no measurement" in rec.interval_class


def test_non_llm_and_inference_keep_the_fp8_figure_and_say_so() -> None:
    gpu = get_gpu("B200")
    cnn = Workload(model="resnet50", precision=Precision.FP8, batch_size_per_gpu=256)
    a = estimate(cnn, gpu, 1)
    b = estimate(replace(cnn, precision=Precision.NVFP4), gpu, 1)
    assert b.throughput == pytest.approx(a.throughput, rel=1e-12)
    assert any("timed as fp8" in n for n in b.notes)


def test_from_csv_rows_and_workload_files(tmp_path: Path) -> None:
    csv = tmp_path / "rows.csv"
    csv.write_text(
        "model,gpu,num_gpus,precision,batch_size,seq_len\n"
        "llama3-8b,H100,8,nvfp4,2,4096\n"
        "llama3-8b,B200,8,nvfp4,2,4096\n",
        encoding="utf-8",
    )
    code, out, err = run("estimate", "--from-csv", str(csv), "--json")
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert "nvfp4 on H100-SXM5-80GB" in rows[0]["error"]
    assert rows[1]["throughput"] > 0
    job = tmp_path / "job.toml"
    job.write_text(
        'model = "llama3-8b"\nprecision = "mxfp8"\nbatch_size_per_gpu = 2\nseq_len = 4096\n',
        encoding="utf-8",
    )
    code, out, err = run("estimate", "--workload", str(job), "--gpu", "B200", "--json")
    assert code == 0, err
    assert json.loads(out)["precision"] == "mxfp8"


def test_api_raises_input_error() -> None:
    with pytest.raises(InputError, match="fp8 on T4"):
        estimate(LLM, get_gpu("T4"), 1)


def _llm(model: str, precision: Precision, seq: int) -> float:
    wl = Workload(model=model, precision=precision, batch_size_per_gpu=1, seq_len=seq)
    return estimate(wl, get_gpu("H100"), 8).throughput


def test_fp8_speeds_up_the_gemms_only() -> None:
    """fp8 training runs the linear layers' GEMMs at the realized fp8 gain and keeps attention
    in bf16: never slower than bf16, never more than the GEMM gain, and less where attention
    weighs more (a long sequence) than where the GEMMs dominate (a short one)."""
    gain = low_float_gemm_gain(get_gpu("H100"), Precision.FP8)
    assert gain == pytest.approx(FP8_GEMM_REALIZATION * 1979.0 / 989.0, rel=0.01)
    short = _llm("llama3-8b", Precision.FP8, 2048) / _llm("llama3-8b", Precision.BF16, 2048)
    long = _llm("llama3-8b", Precision.FP8, 65536) / _llm("llama3-8b", Precision.BF16, 65536)
    assert 1.0 < long < short <= gain
    # a 16-bit precision has no gain; a GPU whose fp8 rate were its bf16 rate gains nothing
    assert low_float_gemm_gain(get_gpu("H100"), Precision.BF16) == 1.0
    flat = replace(get_gpu("H100"), fp8_tflops=989.0)
    assert low_float_gemm_gain(flat, Precision.FP8) == 1.0


def test_the_output_layer_stays_bf16_under_fp8() -> None:
    """The LM head's GEMMs keep the bf16 rate: the training GEMM gain shrinks with the head's
    share of the FLOPs (gpt-oss-20b's 201k x 2,880 head is 16 % of the weights a token
    multiplies with, GPT-3 175B's 0.4 %), and is the plain gain without a head."""
    h100 = get_gpu("H100")
    gain = low_float_gemm_gain(h100, Precision.FP8)
    shares = {}
    for name in ("gpt-oss-20b", "llama3-8b", "custom:layers=96,hidden=12288,heads=96,vocab=50257"):
        shape = get_model(name).llm
        assert shape is not None
        shares[name] = llm_output_layer_share(shape)
    assert shares["gpt-oss-20b"] == pytest.approx(
        201088 * 2880 / (4.186e9 - 201088 * 2880), rel=0.01
    )
    gains = [llm_training_gemm_gain(h100, Precision.FP8, s) for s in sorted(shares.values())]
    assert gain > gains[0] > gains[1] > gains[2] > 1.0
    assert llm_training_gemm_gain(h100, Precision.FP8, 0.0) == gain
    assert llm_training_gemm_gain(h100, Precision.BF16, 0.2) == 1.0


def test_an_fp8_llm_estimate_says_how_fp8_is_timed() -> None:
    est = estimate(LLM, get_gpu("H100"), 8)
    assert any("GEMMs run x1.56 faster than in bf16" in n for n in est.notes), est.notes
    assert any("output layer" in n and "kept in bf16" in n for n in est.notes), est.notes
    bf16 = estimate(replace(LLM, precision=Precision.BF16), get_gpu("H100"), 8)
    assert not any("GEMMs run" in n for n in bf16.notes)
