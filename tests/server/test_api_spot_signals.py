"""POST /api/plan applies the stored spot signals as `gpurent plan --json` does."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tests.conftest import run_cli

ADVISOR = {
    "ranges": [
        {"index": 0, "label": "<5%", "max": 5},
        {"index": 4, "label": ">20%", "max": 100},
    ],
    "spot_advisor": {"us-east-1": {"Linux": {"p5.48xlarge": {"s": 55, "r": 4}}}},
}


def test_api_and_cli_plan_agree_with_a_stored_signal(tmp_path: Path, api: httpx.Client) -> None:
    body = {"preset": "llama-lora", "gpus": ["H100"], "pricing": ["spot"], "top": 20}
    flags = ["--preset", "llama-lora", "--gpu", "H100", "--pricing", "spot", "--top", "20"]
    before = api.post("/api/plan", json=body)
    assert before.status_code == 200, before.text
    path = tmp_path / "advisor.json"
    path.write_text(json.dumps(ADVISOR))
    code, _, err = run_cli("spot", "signals", "import", str(path), "--as-of", "2026-11-01")
    assert code == 0, err
    reply = api.post("/api/plan", json=body)
    assert reply.status_code == 200, reply.text
    code, out, err = run_cli("plan", *flags, "--json")
    assert code == 0, err
    assert reply.json() == json.loads(out)
    assert reply.json() != before.json()  # the signal changed the document
    assert "spot signal: aws-advisor:" in reply.text and "'>20%' as of 2026-11-01" in reply.text
