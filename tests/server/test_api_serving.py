"""POST /api/estimate/serve and POST /api/plan/serve (and POST /api/plan with scenario
inference) return the documents of `gpurent estimate --serve --json` and `gpurent plan --serve
--json` for the same inputs, over HTTP; 409 with the document where the CLI exits 3."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import run_cli


def _cli_json(*args: str, code: int = 0) -> Any:
    exit_code, out, err = run_cli(*args)
    assert exit_code == code, err
    return json.loads(out)


@pytest.mark.parametrize(
    ("body", "flags"),
    [
        ({"serve": "llama3-8b-chat", "gpu": "H100"}, ["llama3-8b-chat", "--gpu", "H100"]),
        (
            {"serve": "llama3-70b-chat", "gpu": "H100", "gpus": 8, "tp": 4},
            ["llama3-70b-chat", "--gpu", "H100", "--gpus", "8", "--tp", "4"],
        ),
        (
            {
                "serve": "llama3-8b",
                "gpu": "L4",
                "set": ["weights=awq-int4", "prompt_tokens=uniform 100-300", "engine=sglang"],
            },
            [
                "llama3-8b",
                "--gpu",
                "L4",
                "--set",
                "weights=awq-int4",
                "--set",
                "prompt_tokens=uniform 100-300",
                "--set",
                "engine=sglang",
            ],
        ),
    ],
)
def test_estimate_serve_is_estimate_serve_json(
    api: httpx.Client, body: dict[str, Any], flags: list[str]
) -> None:
    reply = api.post("/api/estimate/serve", json=body)
    assert reply.status_code == 200, reply.text
    assert reply.json() == _cli_json("estimate", "--serve", *flags, "--json")


def test_an_estimate_that_misses_its_slos_is_409_with_the_cli_document(api: httpx.Client) -> None:
    body = {"serve": "llama3-8b", "gpu": "L4", "set": ["prompt_tokens=4000", "ttft_p99_ms=50"]}
    reply = api.post("/api/estimate/serve", json=body)
    assert reply.status_code == 409, reply.text
    doc = reply.json()
    flags = ["--set", "prompt_tokens=4000", "--set", "ttft_p99_ms=50", "--json"]
    code, _, err = run_cli("estimate", "--serve", "llama3-8b", "--gpu", "L4", *flags[:-1])
    assert code == 3 and doc["error"] == err.strip().removeprefix("error: ")
    assert doc["estimate"] == _cli_json(
        "estimate", "--serve", "llama3-8b", "--gpu", "L4", *flags, code=3
    )


PLAN_CASES = [
    ({"preset": "llama3-8b-chat", "top": 5}, ["--preset", "llama3-8b-chat", "--top", "5"]),
    (
        {
            "model": "llama3-8b",
            "rate": 5,
            "prompt_tokens": "1024",
            "output_tokens": "128",
            "ttft_p99_ms": 800,
            "tpot_ms": 60,
            "engine": "sglang",
            "quantization": "fp8",
            "providers": ["aws", "gcp"],
            "top": 3,
        },
        [
            "--model", "llama3-8b", "--rate", "5", "--prompt-tokens", "1024",
            "--output-tokens", "128", "--ttft-p99-ms", "800", "--tpot-ms", "60",
            "--engine", "sglang", "--quantization", "fp8", "--provider", "aws,gcp", "--top", "3",
        ],
    ),
    (
        {"preset": "llama3-8b-chat", "spot": True, "gpus": ["H100", "L4"], "top": 10},
        ["--preset", "llama3-8b-chat", "--spot", "--gpu", "H100,L4", "--top", "10"],
    ),
]  # fmt: skip


@pytest.mark.parametrize(("body", "flags"), PLAN_CASES)
def test_plan_serve_is_plan_serve_json(
    api: httpx.Client, body: dict[str, Any], flags: list[str]
) -> None:
    reply = api.post("/api/plan/serve", json=body)
    assert reply.status_code == 200, reply.text
    doc = reply.json()
    assert doc == _cli_json("plan", "--serve", *flags, "--json")
    assert doc["feasible"] and doc["best"] and doc["candidates"]


def test_a_traffic_profile_is_sent_as_its_text(api: httpx.Client, tmp_path: Path) -> None:
    text = "hour,share\n" + "".join(f"{h},{1 + (h >= 9 and h < 21)}\n" for h in range(24))
    path = tmp_path / "day.csv"
    path.write_text(text)
    body = {"preset": "llama3-8b-chat", "traffic_profile": text, "top": 3}
    reply = api.post("/api/plan/serve", json=body)
    assert reply.status_code == 200, reply.text
    flags = ["--preset", "llama3-8b-chat", "--traffic-profile", str(path), "--top", "3"]
    cli = _cli_json("plan", "--serve", *flags, "--json")
    # the same plan; the profile is named by the field it came in, not by a file
    assert json.dumps(reply.json()) == json.dumps(cli).replace(str(path), "traffic_profile")
    assert "peak 26.7 req/s" in reply.text


def test_the_inference_scenario_plans_a_service_as_the_cli_does(api: httpx.Client) -> None:
    for body, flags in (
        ({"scenario": "inference", "top": 3}, ["--scenario", "inference", "--top", "3"]),
        (
            {"scenario": "inference", "providers": ["aws"], "min_gpu_memory_gib": 40},
            ["--scenario", "inference", "--provider", "aws", "--min-gpu-memory", "40"],
        ),
    ):
        reply = api.post("/api/plan", json=body)
        assert reply.status_code == 200, reply.text
        assert reply.json() == _cli_json("plan", *flags, "--json")
        assert api.post("/api/plan/serve", json=body).json() == reply.json()
    job = api.post("/api/plan", json={"scenario": "inference", "tokens": 1e9, "budget_usd": 9})
    assert job.status_code == 422
    assert "budget_usd, tokens do not apply" in job.json()["error"]


def test_a_plan_nothing_meets_is_409_with_the_cli_document(api: httpx.Client) -> None:
    reply = api.post("/api/plan/serve", json={"preset": "llama3-8b-chat", "ttft_p99_ms": 2})
    assert reply.status_code == 409, reply.text
    doc = reply.json()
    assert "\n" not in doc["error"] and not doc["plan"]["feasible"]
    flags = ["--serve", "--preset", "llama3-8b-chat", "--ttft-p99-ms", "2", "--json"]
    assert doc["plan"] == _cli_json("plan", *flags, code=3)


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/estimate/serve", {"serve": "llama3-8b-chat"}),
        ("/api/estimate/serve", {"serve": "nope", "gpu": "H100"}),
        ("/api/estimate/serve", {"serve": "/etc/chat.toml", "gpu": "H100"}),
        ("/api/estimate/serve", {"serve": "llama3-8b", "gpu": "H100", "gpus": 3, "tp": 2}),
        ("/api/estimate/serve", {"serve": "llama3-8b", "gpu": "H100", "set": ["oops"]}),
        (
            "/api/estimate/serve",
            {"serve": "llama3-8b", "gpu": "H100", "set": ["prompt_tokens=histogram /etc/passwd"]},
        ),
        ("/api/plan/serve", {}),
        ("/api/plan/serve", {"model": "llama3-8b"}),
        ("/api/plan/serve", {"preset": "llama3-8b-chat", "headroom": 1}),
        ("/api/plan/serve", {"preset": "llama3-8b-chat", "engine": "vlm"}),
        ("/api/plan/serve", {"preset": "llama3-8b-chat", "rate": -3}),
        ("/api/plan/serve", {"preset": "llama3-8b-chat", "output_tokens": "histogram x.csv"}),
        ("/api/plan/serve", {"preset": "llama3-8b-chat", "traffic_profile": "hour,share\n"}),
        ("/api/plan/serve", {"preset": "llama3-8b-chat", "providers": ["nobody"]}),
    ],
)
def test_bad_serving_requests_are_one_line_4xx(
    api: httpx.Client, path: str, body: dict[str, Any]
) -> None:
    reply = api.post(path, json=body)
    assert reply.status_code in (404, 422), reply.text
    assert "\n" not in reply.json()["error"]


def test_a_length_histogram_file_on_the_server_is_not_read(
    api: httpx.Client, tmp_path: Path
) -> None:
    lengths = tmp_path / "lengths.csv"
    lengths.write_text("tokens,weight\n256,1\n1024,1\n")  # valid: the CLI would read it
    code, _, err = run_cli(
        "estimate",
        "--serve",
        "llama3-8b",
        "--gpu",
        "H100",
        "--set",
        f"prompt_tokens=histogram {lengths}",
    )
    assert code == 0, err
    for path, body in (
        (
            "/api/estimate/serve",
            {"serve": "llama3-8b", "gpu": "H100", "set": [f"prompt_tokens=histogram {lengths}"]},
        ),
        ("/api/plan/serve", {"preset": "llama3-8b-chat", "prompt_tokens": f"histogram {lengths}"}),
        (
            "/api/plan/serve",
            {"preset": "llama3-8b-chat", "set": [f"output_tokens=histogram {lengths}"]},
        ),
    ):
        reply = api.post(path, json=body)
        assert reply.status_code == 422, reply.text
        assert "reads a file" in reply.json()["error"]


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_serving_numbers_are_422(api: httpx.Client, text: str) -> None:
    for field in ("rate", "ttft_p99_ms", "headroom", "spot_interruptions_per_hour", "restart_s"):
        body = f'{{"preset": "llama3-8b-chat", "{field}": {text}}}'
        reply = api.post(
            "/api/plan/serve", content=body, headers={"content-type": "application/json"}
        )
        assert reply.status_code == 422, (field, text, reply.text)
        assert field in reply.json()["error"] and "\n" not in reply.json()["error"]
