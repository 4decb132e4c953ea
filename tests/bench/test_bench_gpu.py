"""The CUDA paths. Run only where a CUDA GPU is present (tests/conftest.py skips them here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpurent.cli.main import app

pytestmark = pytest.mark.gpu


def test_gpu_micro_benchmarks_use_cuda_events_and_pinned_memory() -> None:
    import torch

    from gpurent.bench.hostdev import run_hostdev
    from gpurent.bench.matmul import run_matmul
    from gpurent.bench.membw import run_membw

    got = {
        m.key: m
        for m in run_matmul(
            torch, device="cuda", sizes=(1024,), precisions=("bf16", "tf32"), repeats=3
        )
    }
    assert set(got) == {"matmul.bf16", "matmul.tf32"}  # no numpy reference on a GPU
    assert got["matmul.bf16"].value and got["matmul.bf16"].value > 1.0  # > 1 TFLOP/s
    copy = run_membw(torch, device="cuda", array_mib=256, repeats=3)[0]
    assert copy.value and copy.value > 100.0 and "device HBM" in copy.detail
    links: list[int] = []
    host = {
        m.key: m
        for m in run_hostdev(
            torch, device="cuda", size_mib=64, repeats=3, probe_link=lambda: links.append(1)
        )
    }
    assert set(host) == {
        "hostdev.h2d-pinned",
        "hostdev.d2h-pinned",
        "hostdev.h2d-pageable",
        "hostdev.d2h-pageable",
    }
    assert links == [1]


def test_gpu_quick_run_writes_calibration_rows(tmp_path: Path) -> None:
    r = CliRunner().invoke(
        app,
        [
            "bench",
            "--quick",
            "--device",
            "cuda",
            "--json",
            "--path",
            str(tmp_path),
            "--out",
            str(tmp_path / "g.json"),
        ],
    )
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["hardware"]["device"] == "cuda" and data["hardware"]["gpu_name"]
    if data["hardware"]["gpu_catalog_name"]:
        rows = data["calibration_rows"]
        assert {row["model"] for row in rows} == {"resnet50", "bert-large-pretrain", "mpt-1b"}
        assert all(row["gpu"] == data["hardware"]["gpu_catalog_name"] for row in rows)
        matmul = next(v for v in data["verdict"] if v["check"] == "matmul.bf16")
        assert matmul["expected"] and matmul["threshold"] == 0.6
