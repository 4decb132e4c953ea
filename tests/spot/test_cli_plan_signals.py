"""`gpurent plan` takes spot interruption rates per region/instance from stored signals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import run_cli

OFFERS = (
    "provider,instance_type,gpu,gpu_count,gpu_memory_gib,region,price_hour_usd,"
    "spot_price_hour_usd,network_gbps\n"
    "aws,p5.48xlarge,H100,8,80,us-east-1,98,40,3200\n"
    "aws,p5.48xlarge,H100,8,80,us-west-2,98,40,3200\n"
)
ADVISOR = {
    "ranges": [{"index": 0, "label": "<5%"}, {"index": 4, "label": ">20%"}],
    "spot_advisor": {
        "us-east-1": {"Linux": {"p5.48xlarge": {"s": 50, "r": 4}}},
        "us-west-2": {"Linux": {"p5.48xlarge": {"s": 50, "r": 0}}},
    },
}
PLAN = ["plan", "--preset", "llama-lora", "--pricing", "spot", "--top", "5", "--json"]


def plan(tmp_path: Path, *extra: str) -> dict[str, object]:
    cat = tmp_path / "offers.csv"
    cat.write_text(OFFERS)
    code, out, err = run_cli(*PLAN, "--catalog", str(cat), *extra)
    assert code == 0, err
    doc: dict[str, object] = json.loads(out)
    return doc


def overhead(doc: dict[str, object], region: str) -> float:
    rows = [doc["best"], *doc["top"]]  # type: ignore[list-item]
    for c in rows:
        assert isinstance(c, dict)
        if c["region"] == region:
            return float(c["cost"]["spot_overhead_usd"])
    raise AssertionError(f"no candidate in {region}")


def test_plan_uses_the_signal_and_says_which_and_how_old(tmp_path: Path) -> None:
    before = plan(tmp_path)
    assert not [a for a in before["assumptions"] if "spot signals" in a]  # type: ignore[union-attr]
    adv = tmp_path / "adv.json"
    adv.write_text(json.dumps(ADVISOR))
    code, _, err = run_cli("spot", "signals", "import", str(adv), "--as-of", "2026-11-28T00:00:00Z")
    assert code == 0, err
    after = plan(tmp_path)
    lines = [a for a in after["assumptions"] if "spot signals" in a]  # type: ignore[union-attr]
    assert len(lines) == 1
    line = lines[0]
    assert "aws/p5.48xlarge/us-east-1" in line and "'>20%'" in line
    assert "aws/p5.48xlarge/us-west-2" in line and "'<5%'" in line
    assert "as of 2026-11-28 00:00 UTC" in line and " d old" in line
    assert "bucket midpoint" in line
    # >20% is 25% a month = 3.4e-4/h, far below the 0.1/h AWS default: less spot overhead
    assert overhead(after, "us-east-1") < overhead(before, "us-east-1")


def test_flag_beats_signals(tmp_path: Path) -> None:
    adv = tmp_path / "adv.json"
    adv.write_text(json.dumps(ADVISOR))
    assert run_cli("spot", "signals", "import", str(adv))[0] == 0
    doc = plan(tmp_path, "--spot-interruptions-per-hour", "0.5")
    assert not [a for a in doc["assumptions"] if "spot signals" in a]  # type: ignore[union-attr]


def test_terminal_plan_prints_the_signal(tmp_path: Path) -> None:
    adv = tmp_path / "adv.json"
    adv.write_text(json.dumps(ADVISOR))
    assert run_cli("spot", "signals", "import", str(adv))[0] == 0
    cat = tmp_path / "offers.csv"
    cat.write_text(OFFERS)
    code, out, err = run_cli(*PLAN[:-1], "--catalog", str(cat))
    assert code == 0, err
    assert "spot signals" in " ".join(out.split())


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
