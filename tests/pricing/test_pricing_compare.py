"""Pricing: break-even consistency, spot overhead, hybrid schedules, CLI errors."""

from __future__ import annotations

import json

import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gpurent.cli import pricing_cmds
from gpurent.errors import InputError
from gpurent.pricing import (
    GUIDE_COMMIT_DISCOUNT,
    Prices,
    SpotRisk,
    UsagePattern,
    advisor_band_mtti_h,
    compare,
    parse_hybrid,
)

app = typer.Typer()
pricing_cmds.register(app)
runner = CliRunner()


@settings(max_examples=60, deadline=None)
@given(
    od=st.floats(min_value=0.1, max_value=100),
    discount=st.floats(min_value=0.05, max_value=0.8),
    hours=st.floats(min_value=0.5, max_value=24),
    days=st.floats(min_value=1, max_value=30),
)
def test_break_even_agrees_with_costs(
    od: float, discount: float, hours: float, days: float
) -> None:
    usage = UsagePattern(hours_per_day=hours, days_per_month=days, months=12)
    result = compare(
        usage, Prices(on_demand_usd_per_hour=od, committed_usd_per_hour=od * (1 - discount))
    )
    costs = {o.option: o.cost_usd for o in result.options}
    be = result.break_even_utilisation_vs_on_demand
    assert be == pytest.approx(1 - discount)
    if abs(result.utilisation - be) > 1e-6:
        assert (costs["committed"] < costs["on-demand"]) == (result.utilisation > be)
    assert costs["on-demand"] == pytest.approx(od * usage.total_hours)


def test_spot_effective_price_includes_overhead() -> None:
    usage = UsagePattern(hours_per_day=24, months=1)
    risk = SpotRisk(mtti_h=2.0, checkpoint_cost_s=60, restart_s=600)
    res = compare(usage, Prices(on_demand_usd_per_hour=3.0, spot_usd_per_hour=1.0), risk)
    spot = next(o for o in res.options if o.option == "spot")
    assert res.spot_overhead is not None and res.spot_overhead.total > 0.05
    assert spot.effective_usd_per_useful_hour == pytest.approx(1.0 * res.spot_overhead.slowdown)
    calmer = compare(
        usage,
        Prices(on_demand_usd_per_hour=3.0, spot_usd_per_hour=1.0),
        SpotRisk(mtti_h=200.0, checkpoint_cost_s=60, restart_s=600),
    )
    assert calmer.spot_overhead is not None and calmer.spot_overhead.total < res.spot_overhead.total


def test_short_usage_still_pays_whole_commitment_term() -> None:
    res = compare(
        UsagePattern(hours_per_day=24, months=3),
        Prices(on_demand_usd_per_hour=1.0, committed_usd_per_hour=0.5, commit_months=12),
    )
    committed = next(o for o in res.options if o.option == "committed")
    assert committed.billed_hours == pytest.approx(12 * 730)
    assert res.cheapest == "on-demand"


def test_advisor_bands_and_guide_assumption() -> None:
    assert advisor_band_mtti_h("<5%") > advisor_band_mtti_h(">20%") > 0
    with pytest.raises(InputError, match="advisor-band"):
        advisor_band_mtti_h("often")
    assert pytest.approx(1.4) == 1 / (1 - GUIDE_COMMIT_DISCOUNT)


def test_parse_hybrid() -> None:
    parts = parse_hybrid("day:8:p4d.24xlarge, night:16:g5.xlarge")
    assert [(p.name, p.hours_per_day) for p in parts] == [("day", 8), ("night", 16)]
    for bad, msg in [
        ("day:8", "NAME:HOURS:INSTANCE"),
        ("day:x:a", "not a number"),
        ("a:20:x,b:10:y", "add up to 30"),
        ("a:1:x,a:2:y", "repeat"),
        ("", "empty"),
    ]:
        with pytest.raises(InputError, match=msg):
            parse_hybrid(bad)


def test_cli_compare_explicit_prices_and_hybrid() -> None:
    r = runner.invoke(
        app,
        [
            "pricing",
            "compare",
            "--on-demand",
            "3.06",
            "--spot",
            "0.92",
            "--commit-discount",
            "0.35",
            "--hours-per-day",
            "8",
            "--hybrid",
            "day:10:$3.06,night:14:$0.53",
            "--json",
        ],
    )
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["comparison"]["break_even_utilisation_vs_on_demand"] == pytest.approx(0.65)
    parts = data["hybrid"]["parts"]
    assert [p["part"]["name"] for p in parts] == ["day", "night"]
    night_od = next(o for o in parts[1]["comparison"]["options"] if o["option"] == "on-demand")
    assert night_od["cost_usd"] == pytest.approx(0.53 * 14 * 30 * 12)


def test_cli_compare_offer_table_says_which_wins() -> None:
    r = runner.invoke(
        app,
        [
            "pricing",
            "compare",
            "--offer",
            "aws/p3.2xlarge/us-east-1",
            "--mtti-hours",
            "6",
            "--hybrid",
            "day:8:p3.2xlarge,night:16:g4dn.xlarge",
        ],
    )
    assert r.exit_code == 0, r.stderr
    out = " ".join(r.stdout.split())
    assert "is cheapest" in out and "ASSUMPTION" in out and "hybrid total" in out


def test_cli_compare_errors() -> None:
    cases = [
        (["pricing", "compare"], "--offer"),
        (["pricing", "compare", "--offer", "aws/p3.2xlarge/us-eest-1"], "did you mean"),
        (["pricing", "compare", "--on-demand", "-1"], "--on-demand must be"),
        (["pricing", "compare", "--on-demand", "1", "--hours-per-day", "25"], "--hours-per-day"),
        (
            ["pricing", "compare", "--on-demand", "1", "--commit-discount", "1.5"],
            "--commit-discount",
        ),
        (["pricing", "compare", "--on-demand", "1", "--hybrid", "day:8:g5.xlarge"], "--offer"),
        (["pricing", "compare", "--on-demand", "1", "--advisor-band", "x"], "--advisor-band"),
        (["pricing", "compare", "--on-demand", "1", "--hybrid", "day:8"], "NAME:HOURS:INSTANCE"),
        (["pricing", "compare", "--on-demand", "1", "--hybrid", "day:8:$0"], "--hybrid price"),
        (
            [
                "pricing",
                "compare",
                "--offer",
                "aws/p3.2xlarge/us-east-1",
                "--hybrid",
                "day:8:p3.2xlargee",
            ],
            "unknown offer",
        ),
        (["pricing", "compare", "--on-demand", "1", "--months", "0"], "--months"),
        (["pricing", "compare", "--on-demand", "1", "--commit-months", "0"], "--commit-months"),
    ]
    for args, msg in cases:
        r = runner.invoke(app, args)
        assert r.exit_code == 2, (args, r.stdout, r.stderr)
        assert msg in r.stderr and "Traceback" not in r.stderr
