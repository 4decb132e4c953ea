"""The software stack as an explicit input: API, workload files, CLI flag and CSV column."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import run_cli as run

from gpurent.catalog import Precision, get_gpu
from gpurent.errors import InputError
from gpurent.estimate import estimate, load_constants
from gpurent.estimate.estimator import roofline_s
from gpurent.workload import Stack, Workload, parse_stack, workload_from_mapping

FIXED = ["resnet50", "ssd", "bert-large-squad", "gnmt", "tacotron2", "waveglow", "ncf"]


def test_default_is_the_current_stack_and_notes_name_it() -> None:
    wl = Workload(model="resnet50", batch_size_per_gpu=256)
    assert wl.stack is Stack.NGC_24
    est = estimate(wl, get_gpu("H100"), 8)
    assert any("ngc-24" in n for n in est.notes)
    llm = estimate(
        Workload(model="mpt-7b", precision=Precision.BF16, batch_size_per_gpu=4, seq_len=2048),
        get_gpu("H100"),
        8,
    )
    assert any("llm-foundry" in n for n in llm.notes)


def test_bundled_constants_hold_every_stack() -> None:
    k = load_constants()
    for s in Stack:
        assert k.stack(s.value) is not None, s
    dle = k.stack(Stack.NVIDIA_DLE.value)
    assert dle is not None and dle.speed["resnet50"] > 1.0


@settings(max_examples=40, deadline=None)
@given(
    model=st.sampled_from(FIXED),
    gpu=st.sampled_from(["A100-SXM4-80GB", "H100", "V100-SXM2-16GB", "RTX-4090", "L40S"]),
    stack=st.sampled_from(list(Stack)),
    half=st.booleans(),
)
def test_one_gpu_speed_only_differs_by_the_tuned_factor(
    model: str, gpu: str, stack: Stack, half: bool
) -> None:
    """Single-GPU: NGC 22.09 and 24 run at the same fitted speed; DLE and tuned never slower."""
    p = Precision.AMP if half else Precision.FP32
    g = get_gpu(gpu)
    base = estimate(Workload(model=model, precision=p, batch_size_per_gpu=32), g)
    other = estimate(Workload(model=model, precision=p, batch_size_per_gpu=32, stack=stack), g)
    if stack in (Stack.NVIDIA_DLE, Stack.TUNED):
        assert other.throughput >= base.throughput * 0.999
    else:
        assert other.throughput == pytest.approx(base.throughput)
    assert 0 < other.scaling_efficiency <= 1.0


def test_old_stack_scales_worse_on_nvlink() -> None:
    """NGC 22.09's all-reduce is slow whatever the link (RESEARCH §2: A100-SXM 0.51-0.90 at 8
    GPUs; H100-SXM on 24.x 0.94-0.99)."""
    g = get_gpu("A100-SXM4-80GB")
    wl = Workload(model="bert-large-squad", batch_size_per_gpu=32)
    new = estimate(wl, g, 8)
    old = estimate(dataclasses.replace(wl, stack=Stack.NGC_22_09), g, 8)
    assert old.scaling_efficiency < new.scaling_efficiency
    assert new.scaling_efficiency > 0.85


def test_parse_stack_aliases_and_errors() -> None:
    assert parse_stack("NGC-22.09") is Stack.NGC_22_09
    assert parse_stack("24.03") is Stack.NGC_24
    assert parse_stack("dle") is Stack.NVIDIA_DLE
    with pytest.raises(InputError, match=r"one of ngc-22\.09, ngc-24, nvidia-dle"):
        parse_stack("tensorflow")


def test_workload_file_field() -> None:
    wl = workload_from_mapping({"model": "resnet50", "stack": "ngc-22.09"}, "job.toml")
    assert wl.stack is Stack.NGC_22_09
    with pytest.raises(InputError, match=r"job\.toml"):
        workload_from_mapping({"model": "resnet50", "stack": "jax"}, "job.toml")


def test_cli_flag_changes_multi_gpu_estimate() -> None:
    base = ["estimate", "--model", "gnmt", "--gpu", "A100-SXM4-80GB", "--gpus", "8", "--json"]
    code, out, err = run(*base)
    assert code == 0, err
    code2, out2, err2 = run(*base, "--stack", "ngc-22.09")
    assert code2 == 0, err2
    a, b = json.loads(out), json.loads(out2)
    assert b["throughput"] < a["throughput"]
    assert any("ngc-22.09" in n for n in b["notes"])
    code3, _, err3 = run(*base, "--stack", "tf1")
    assert code3 == 2 and "--stack" in err3 and "Traceback" not in err3


def test_csv_stack_column_and_default(tmp_path: Path) -> None:
    f = tmp_path / "rows.csv"
    f.write_text(
        "model,gpu,num_gpus,precision,batch_size,stack\n"
        "gnmt,A100-SXM4-80GB,8,amp,128,\n"
        "gnmt,A100-SXM4-80GB,8,amp,128,ngc-22.09\n"
        "gnmt,A100-SXM4-80GB,8,amp,128,caffe\n"
        "mpt-7b,H100,8,bf16,4,ngc-22.09\n"
    )
    code, out, err = run("estimate", "--from-csv", str(f), "--json")
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[0]["stack"] == "ngc-24" and lines[1]["stack"] == "ngc-22.09"
    assert lines[1]["throughput"] < lines[0]["throughput"]
    assert "rows.csv:4" in lines[2]["error"] and "caffe" in lines[2]["error"]
    assert lines[3]["stack"] is None  # LLMs: llm-foundry whatever the column says
    code, out, err = run("estimate", "--from-csv", str(f), "--json", "--stack", "ngc-22.09")
    assert code == 0, err
    first = json.loads(out.splitlines()[0])
    assert first["stack"] == "ngc-22.09"
    assert first["throughput"] == pytest.approx(lines[1]["throughput"])


@given(
    c=st.floats(0.0, 10.0),
    m=st.floats(0.0, 10.0),
    p=st.sampled_from([1.0, 1.5, 2.0, 4.0, 16.0]),
)
def test_roofline_norm_between_max_and_sum(c: float, m: float, p: float) -> None:
    t = roofline_s(c, m, p)
    assert max(c, m) - 1e-12 <= t <= c + m + 1e-9
    if p == 1.0:
        assert t == pytest.approx(c + m)
