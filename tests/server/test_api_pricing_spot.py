"""POST /api/pricing/compare and POST /api/spot/simulate return the documents of
`gpurent pricing compare --json` and `gpurent spot simulate --json`, over HTTP."""

from __future__ import annotations

import json
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
