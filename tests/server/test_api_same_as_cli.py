"""Each endpoint returns the document the CLI's `--json` prints for the same inputs, over HTTP."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from tests.conftest import run_cli


def _cli_json(*args: str, code: int = 0) -> Any:
    exit_code, out, err = run_cli(*args)
    assert exit_code == code, err
    return json.loads(out)


def test_health_says_ok_and_the_version(api: httpx.Client) -> None:
    from gpurent import __version__

    reply = api.get("/api/health")
    assert reply.status_code == 200
    assert reply.json() == {"status": "ok", "version": __version__}


@pytest.mark.parametrize(
    ("params", "flags"),
    [
        ({}, []),
        ({"min_memory": 80, "arch": "hopper"}, ["--min-memory", "80", "--arch", "hopper"]),
        ({"vendor": "amd"}, ["--vendor", "amd"]),
        ({"name": "4090"}, ["--name", "4090"]),
    ],
)
def test_gpus_is_gpus_json(api: httpx.Client, params: dict[str, Any], flags: list[str]) -> None:
    reply = api.get("/api/gpus", params=params)
    assert reply.status_code == 200, reply.text
    assert reply.json() == _cli_json("gpus", *flags, "--json")
    assert reply.json()["count"] > 0


@pytest.mark.parametrize(
    ("params", "flags"),
    [
        ({}, []),
        (
            {"gpu": "H100,A100-80GB", "min_gpus": 8, "spot": "true", "sort": "gpu-price"},
            ["--gpu", "H100,A100-80GB", "--min-gpus", "8", "--spot", "--sort", "gpu-price"],
        ),
        (
            [("provider", "aws"), ("provider", "gcp"), ("limit", "0"), ("max_price", "50")],
            ["--provider", "aws", "--provider", "gcp", "--limit", "0", "--max-price", "50"],
        ),
        (
            {"region": "us-east", "min_gpu_memory": 40},
            ["--region", "us-east", "--min-gpu-memory", "40"],
        ),
    ],
)
def test_offers_is_offers_json(api: httpx.Client, params: Any, flags: list[str]) -> None:
    reply = api.get("/api/offers", params=params)
    assert reply.status_code == 200, reply.text
    doc = reply.json()
    assert doc == _cli_json("offers", *flags, "--json")
    assert doc["count"] > 0 and doc["age"]


@pytest.mark.parametrize(
    ("body", "flags"),
    [
        ({"gpu": "H100", "preset": "llama-lora"}, ["--gpu", "H100", "--preset", "llama-lora"]),
        (
            {"gpu": "A100-80GB", "model": "resnet50", "gpus": 8, "batch_size": 128},
            ["--gpu", "A100-80GB", "--model", "resnet50", "--gpus", "8", "--batch-size", "128"],
        ),
        (
            {
                "gpu": "H100",
                "model": "llama3-8b",
                "gpus": 16,
                "nodes": 2,
                "seq_len": 4096,
                "precision": "fp8",
                "inter_node_gbps": 400,
                "task": "training",
            },
            [
                "--gpu",
                "H100",
                "--model",
                "llama3-8b",
                "--gpus",
                "16",
                "--nodes",
                "2",
                "--seq-len",
                "4096",
                "--precision",
                "fp8",
                "--inter-node-gbps",
                "400",
                "--task",
                "training",
            ],
        ),
    ],
)
def test_estimate_is_estimate_json(
    api: httpx.Client, body: dict[str, Any], flags: list[str]
) -> None:
    reply = api.post("/api/estimate", json=body)
    assert reply.status_code == 200, reply.text
    assert reply.json() == _cli_json("estimate", *flags, "--json")


@pytest.mark.parametrize(
    ("body", "flags"),
    [
        ({"preset": "llama-lora"}, ["--preset", "llama-lora"]),
        (
            {
                "preset": "bert-large-pretrain",
                "deadline_hours": 12,
                "providers": ["aws", "gcp"],
                "objective": "deadline",
                "top": 3,
            },
            [
                "--preset",
                "bert-large-pretrain",
                "--deadline",
                "12h",
                "--provider",
                "aws,gcp",
                "--objective",
                "deadline",
                "--top",
                "3",
            ],
        ),
        (
            {"preset": "llm-inference", "pricing": ["on-demand"], "risk": "p90"},
            ["--preset", "llm-inference", "--pricing", "on-demand", "--risk", "p90"],
        ),
        (
            {"scenario": "cost-sensitive", "pricing": ["on-demand"]},
            ["--scenario", "cost-sensitive", "--pricing", "on-demand"],
        ),
        (
            {
                "model": "llama3-8b",
                "tokens": 2e9,
                "gpus": ["H100", "A100-80GB"],
                "max_gpus": 16,
                "budget_usd": 5000,
                "interconnect": "nvlink",
            },
            [
                "--model",
                "llama3-8b",
                "--tokens",
                "2e9",
                "--gpu",
                "H100,A100-80GB",
                "--max-gpus",
                "16",
                "--budget",
                "5000",
                "--interconnect",
                "nvlink",
            ],
        ),
    ],
)
def test_plan_is_plan_json(api: httpx.Client, body: dict[str, Any], flags: list[str]) -> None:
    started = time.perf_counter()
    reply = api.post("/api/plan", json=body)
    elapsed = time.perf_counter() - started
    assert reply.status_code == 200, reply.text
    doc = reply.json()
    assert doc == _cli_json("plan", *flags, "--json")
    assert doc["feasible"] and doc["top"]
    assert elapsed < 10  # 1 s on a quiet machine (benchmarks/bench_serve_api.py); CI is shared


def test_an_infeasible_plan_is_409_with_the_cli_document(api: httpx.Client) -> None:
    reply = api.post("/api/plan", json={"preset": "llama-lora", "budget_usd": 0.001})
    assert reply.status_code == 409
    doc = reply.json()
    assert doc["error"].startswith("nothing meets the request: ")
    assert "\n" not in doc["error"]
    assert doc["plan"] == _cli_json(
        "plan", "--preset", "llama-lora", "--budget", "0.001", "--json", code=3
    )
