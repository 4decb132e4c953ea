"""plan, pricing compare and spot interval share one table of spot defaults (issue 16).

Through the real CLI with --json: for the same provider the three commands assume the same mean
time to interruption and the same restart time, and each says where its default came from.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from gpurent.cloud.spot_defaults import OTHERS, SPOT_DEFAULTS, spot_default
from tests.conftest import cli_json, run_cli

OFFERS = {"aws": "aws/p3.2xlarge/us-east-1", "gcp": "gcp/a2-highgpu-1g/us-central1"}


def _plan(provider: str) -> tuple[float, list[str]]:
    """(MTTI s of a one-node spot candidate, assumptions) of `plan` on `provider`."""
    code, out, err = run_cli(
        "plan", "--preset", "llama-lora", "--provider", provider, "--pricing", "spot",
        "--max-nodes", "1", "--top", "1", "--json",
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    spot = doc["top"][0]["spot"]
    return spot["mean_time_to_interruption_s"], doc["assumptions"]


def _pricing(provider: str) -> dict[str, object]:
    code, out, err = run_cli("pricing", "compare", "--offer", OFFERS[provider], "--json")
    assert code == 0, err
    risk: dict[str, object] = json.loads(out)["spot_risk"]
    return risk


def _interval(provider: str) -> dict[str, object]:
    code, out, err = run_cli("spot", "interval", "--provider", provider, "--json")
    assert code == 0, err
    got: dict[str, object] = json.loads(out)
    return got


@pytest.mark.parametrize("provider", ["aws", "gcp"])
def test_plan_pricing_and_interval_agree_on_the_default(provider: str) -> None:
    d = spot_default(provider)
    plan_mtti_s, assumptions = _plan(provider)
    risk = _pricing(provider)
    interval = _interval(provider)
    assert plan_mtti_s == pytest.approx(d.mtti_s)
    assert risk["mtti_h"] == pytest.approx(d.mtti_hours)
    assert interval["mtti_s"] == pytest.approx(d.mtti_s)
    assert risk["restart_s"] == interval["restart_s"] == d.restart_s
    spot_line = next(a for a in assumptions if a.startswith("spot:"))
    assert f"{d.restart_s:g} s to restart" in spot_line
    # each says where its default came from: the table's source
    assert d.source in spot_line
    assert d.source in str(risk["source"])
    assert d.source in str(interval["source"])


def test_the_table_has_a_source_per_row_and_aws_is_the_10_h_trace_figure() -> None:
    assert spot_default("AWS") is SPOT_DEFAULTS["aws"]
    assert spot_default("nebius") is OTHERS and spot_default(None) is OTHERS
    assert SPOT_DEFAULTS["aws"].mtti_hours == pytest.approx(10.0)
    assert "10.4 h" in SPOT_DEFAULTS["aws"].source
    for d in (*SPOT_DEFAULTS.values(), OTHERS):
        assert d.source and d.restart_s == 600.0


def test_interval_text_prints_where_its_defaults_came_from() -> None:
    code, out, err = run_cli("spot", "interval", "--provider", "aws")
    assert code == 0, err
    text = " ".join(out.split())
    assert "MTTI 10 h" in text and "600 s restart" in text and "10.4 h mean spot lifetime" in text


def test_interval_without_provider_or_mtti_still_asks_for_one() -> None:
    code, _, err = run_cli("spot", "interval")
    assert code == 2
    assert "--mtti-hours" in err and "--provider" in err


def test_pricing_text_prints_where_its_default_came_from() -> None:
    code, out, err = run_cli("pricing", "compare", "--offer", OFFERS["aws"])
    assert code == 0, err
    text = " ".join(out.split())
    assert "MTTI 10.0 h" in text and "10.4 h mean spot lifetime" in text


def test_explicit_values_still_win_and_are_named() -> None:
    risk = json.loads(
        run_cli("pricing", "compare", "--offer", OFFERS["aws"], "--mtti-hours", "6", "--json")[1]
    )["spot_risk"]
    assert risk["mtti_h"] == 6 and str(risk["source"]).startswith("--mtti-hours")
    band = json.loads(
        run_cli("pricing", "compare", "--offer", OFFERS["aws"], "--advisor-band", ">20%", "--json")[
            1
        ]
    )["spot_risk"]
    assert band["mtti_h"] == pytest.approx(2537.5, rel=1e-3) and ">20%" in band["source"]
    got = _interval_args("--provider", "aws", "--mtti-hours", "6", "--restart-s", "0")
    assert got["mtti_s"] == 6 * 3600 and got["restart_s"] == 0


def _interval_args(*args: str) -> dict[str, Any]:
    return cli_json("spot", "interval", *args, "--json")


def test_interval_on_a_trace_names_only_the_defaults_it_used(tmp_path) -> None:
    rows = ["date,availability"] + [
        f"2023-03-06 {i // 6:02d}:{(i % 6) * 10:02d}:00,{1 if (i // 5) % 3 else 0}"
        for i in range(120)
    ]
    trace = tmp_path / "z.csv"
    trace.write_text("\n".join(rows) + "\n")
    got = _interval_args(str(trace), "--provider", "aws")
    aws = SPOT_DEFAULTS["aws"]
    assert got["restart_s"] == aws.restart_s  # was 0 s before the shared table
    assert aws.restart_source in str(got["source"])
    assert aws.rate_source not in str(got["source"])  # the MTTI is the trace's, not a default
