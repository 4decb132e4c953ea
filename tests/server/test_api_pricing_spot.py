"""POST /api/pricing/compare and POST /api/spot/simulate return the documents of
`gpurent pricing compare --json` and `gpurent spot simulate --json`, over HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import run_cli


def _cli_json(*args: str) -> Any:
    code, out, err = run_cli(*args)
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize(
    ("body", "flags"),
    [
        ({"offer": "aws/p3.2xlarge/us-east-1"}, ["--offer", "aws/p3.2xlarge/us-east-1"]),
        (
            {
                "offer": "aws/p3.2xlarge/us-east-1",
                "hours_per_day": 8,
                "days_per_month": 22,
                "months": 6,
                "mtti_hours": 6,
                "storage_gb": 500,
            },
            [
                "--offer",
                "aws/p3.2xlarge/us-east-1",
                "--hours-per-day",
                "8",
                "--days-per-month",
                "22",
                "--months",
                "6",
                "--mtti-hours",
                "6",
                "--storage-gb",
                "500",
            ],
        ),
        (
            {
                "on_demand": 3.06,
                "spot": 0.92,
                "commit_discount": 0.35,
                "hybrid": "day:10:$3.06,night:14:$0.53",
            },
            [
                "--on-demand",
                "3.06",
                "--spot",
                "0.92",
                "--commit-discount",
                "0.35",
                "--hybrid",
                "day:10:$3.06,night:14:$0.53",
            ],
        ),
    ],
)
def test_pricing_compare_is_pricing_compare_json(
    api: httpx.Client, body: dict[str, Any], flags: list[str]
) -> None:
    reply = api.post("/api/pricing/compare", json=body)
    assert reply.status_code == 200, reply.text
    doc = reply.json()
    assert doc == _cli_json("pricing", "compare", *flags, "--json")
    assert doc["comparison"]["options"]


def test_pricing_compare_refuses_bad_input_in_one_line(api: httpx.Client) -> None:
    missing = api.post("/api/pricing/compare", json={})
    assert missing.status_code == 422
    assert "--on-demand" in missing.json()["error"]
    bad = api.post("/api/pricing/compare", json={"on_demand": 3, "hours_per_day": 25})
    assert bad.status_code == 422 and "hours_per_day" in bad.json()["error"]
    unknown = api.post("/api/pricing/compare", json={"offer": "aws/nope/us-east-1"})
    assert unknown.status_code in (404, 422) and "\n" not in unknown.json()["error"]


def _csv(values: list[int]) -> str:
    rows = [f"2026-11-01T{i // 60:02d}:{i % 60:02d}:00Z,{a}" for i, a in enumerate(values)]
    return "date,availability\n" + "\n".join(rows) + "\n"


PATTERN = [1 if (i // 7) % 3 else 0 for i in range(120)]
TRACES = {"zone-a.csv": _csv(PATTERN), "zone-b.csv": _csv([1 - a for a in PATTERN])}
JOB = ["--job-hours", "0.5", "--deadline-hours", "1", "--changeover-hours", "0.05"]


@pytest.mark.parametrize(
    ("extra", "flags"),
    [
        ({"price_ratio": 3, "starts": 4}, ["--price-ratio", "3", "--starts", "4"]),
        (
            {"price_ratio": 2.5, "starts": 3, "policy": "all"},
            ["--price-ratio", "2.5", "--starts", "3", "--policy", "all"],
        ),
    ],
)
def test_spot_simulate_is_spot_simulate_json(
    api: httpx.Client, tmp_path: Path, extra: dict[str, Any], flags: list[str]
) -> None:
    trace_flags = []
    for name, text in TRACES.items():
        (tmp_path / name).write_text(text)
        trace_flags += ["--trace", str(tmp_path / name)]
    body = {
        "traces": [{"name": n, "content": t} for n, t in TRACES.items()],
        "job_hours": 0.5,
        "deadline_hours": 1,
        "changeover_hours": 0.05,
        **extra,
    }
    reply = api.post("/api/spot/simulate", json=body)
    assert reply.status_code == 200, reply.text
    assert reply.json() == _cli_json("spot", "simulate", *trace_flags, *JOB, *flags, "--json")


def test_spot_simulate_refuses_bad_traces_in_one_line(api: httpx.Client) -> None:
    base = {"job_hours": 0.5, "deadline_hours": 1, "price_ratio": 3}
    bad = api.post(
        "/api/spot/simulate", json={**base, "traces": [{"name": "z.csv", "content": "nope\n"}]}
    )
    assert bad.status_code in (400, 422), bad.text
    assert "\n" not in bad.json()["error"] and "gpurent-serve-" not in bad.json()["error"]
    path = api.post(
        "/api/spot/simulate", json={**base, "traces": [{"name": "../x.csv", "content": "a"}]}
    )
    assert path.status_code == 422
    twice = {"name": "z.csv", "content": TRACES["zone-a.csv"]}
    same = api.post("/api/spot/simulate", json={**base, "traces": [twice, twice]})
    assert same.status_code == 422 and "same name" in same.json()["error"]
