"""Checkpoint interval: Young/Daly vs exact exponential optimum; empirical (Kaplan-Meier) fit."""

from __future__ import annotations

import json
import math
import random

import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gpurent.cli.spot_analytics_cmds import register_spot_analytics
from gpurent.errors import DataError, InputError
from gpurent.spot.analytics.survival import Lifetime, kaplan_meier
from gpurent.spot.interval import (
    daly_interval_s,
    interval_exponential_s,
    interval_from_lifetimes_s,
    overhead_exponential,
    young_interval_s,
)

spot = typer.Typer()
register_spot_analytics(spot)
runner = CliRunner()


@settings(max_examples=30, deadline=None)
@given(
    delta=st.floats(min_value=5, max_value=300),
    ratio=st.floats(min_value=50, max_value=5000),
)
def test_exact_exponential_optimum_is_near_daly_and_young(delta: float, ratio: float) -> None:
    mtti = delta * ratio  # delta/M small
    best = interval_exponential_s(delta, mtti)
    daly = daly_interval_s(delta, mtti)
    young = young_interval_s(delta, mtti)
    assert abs(best.interval_s - daly) / daly < 0.03
    assert abs(daly - young) / young < 0.1  # Daly ~ Young when delta << M
    # the optimum's overhead is no worse than Young's or the fixed 15 min
    for tau in (young, 900.0):
        assert best.total <= overhead_exponential(tau, delta, mtti).total + 1e-9


@settings(max_examples=20, deadline=None)
@given(delta=st.floats(min_value=10, max_value=120), mtti_h=st.floats(min_value=1, max_value=20))
def test_overhead_is_convex_ish_around_optimum(delta: float, mtti_h: float) -> None:
    mtti = mtti_h * 3600
    best = interval_exponential_s(delta, mtti).interval_s
    costs = [overhead_exponential(best * f, delta, mtti).total for f in (0.25, 0.5, 1, 2, 4)]
    assert costs[0] > costs[1] > costs[2] < costs[3] < costs[4]


def test_empirical_interval_on_exponential_lifetimes_is_near_young() -> None:
    rng = random.Random(7)
    lives = [rng.expovariate(1 / 4.0) for _ in range(4000)]  # mean 4 h
    choice = interval_from_lifetimes_s(60.0, lives)
    young = young_interval_s(60.0, choice.mtti_s)
    assert abs(choice.best.interval_s - young) / young < 0.15
    assert abs(choice.mtti_s / 3600 - 4.0) < 0.3
    assert choice.best.total <= min(choice.young.total, choice.fixed_15min.total) + 1e-12


def test_heavy_tailed_lifetimes_differ_from_exponential_answer() -> None:
    # many short lives, a few very long ones: median << mean
    lives = [0.2] * 80 + [30.0] * 20
    choice = interval_from_lifetimes_s(60.0, lives)
    assert choice.best.total < choice.young.total
    assert choice.best.interval_s != pytest.approx(choice.young.interval_s, rel=0.05)


def test_kaplan_meier_handles_censoring() -> None:
    km = kaplan_meier(
        [
            Lifetime(duration_h=1, censored=False),
            Lifetime(duration_h=2, censored=True),
            Lifetime(duration_h=3, censored=False),
        ]
    )
    assert km.at(0.5) == 1.0
    assert km.at(1.5) == pytest.approx(2 / 3)
    assert km.at(3.5) == 0.0  # the censored one left the risk set, the last one died
    assert km.events == 2 and km.censored == 1


def test_bad_lifetimes_and_costs_raise() -> None:
    with pytest.raises(DataError):
        interval_from_lifetimes_s(60, [])
    with pytest.raises(InputError):
        interval_from_lifetimes_s(60, [1.0, float("nan")])
    with pytest.raises(InputError):
        interval_from_lifetimes_s(-1, [1.0])
    with pytest.raises(InputError):
        interval_from_lifetimes_s(60, [1.0], censored=[True, False])


def test_all_censored_gives_infinite_mtti() -> None:
    choice = interval_from_lifetimes_s(60, [5.0], censored=[True])
    assert math.isinf(choice.mtti_s)


def _trace_csv(path, values, gap_s=600):
    rows = ["date,availability"]
    for i, v in enumerate(values):
        rows.append(f"2023-03-06 {i * gap_s // 3600:02d}:{(i * gap_s % 3600) // 60:02d}:00,{v}")
    path.write_text("\n".join(rows) + "\n")
    return path


def test_cli_interval_from_trace_and_from_mtti(tmp_path) -> None:
    tr = _trace_csv(tmp_path / "z.csv", [1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0] * 8)
    r = runner.invoke(spot, ["interval", str(tr), "--checkpoint-cost-s", "30", "--json"])
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["lifetimes"] > 10 and data["best"]["interval_s"] > 0
    r = runner.invoke(spot, ["interval", str(tr), "--checkpoint-cost-s", "30"])
    assert "empirical" in r.stdout and "Daly" in r.stdout and "guide" in r.stdout
    r = runner.invoke(
        spot, ["interval", "--mtti-hours", "6", "--checkpoint-cost-s", "60", "--json"]
    )
    assert r.exit_code == 0
    daly = json.loads(r.stdout)["overheads"]["Daly"]["interval_s"]
    assert daly == pytest.approx(daly_interval_s(60, 6 * 3600))


def test_cli_interval_bad_inputs(tmp_path) -> None:
    r = runner.invoke(spot, ["interval"])
    assert r.exit_code == 2 and "--mtti-hours" in r.stderr
    empty = tmp_path / "e.csv"
    empty.write_text("date,availability\n")
    r = runner.invoke(spot, ["interval", str(empty)])
    assert r.exit_code != 0 and "error:" in r.stderr and "Traceback" not in r.stderr
    bad = tmp_path / "b.csv"
    bad.write_text("date,availability\n2023-01-01 00:00:00,1\n2023-01-01 00:10:00,yes\n")
    r = runner.invoke(spot, ["interval", str(bad)])
    assert r.exit_code != 0 and "must be a number" in r.stderr
    never = _trace_csv(tmp_path / "n.csv", [0] * 10)
    r = runner.invoke(spot, ["interval", str(never)])
    assert r.exit_code != 0 and "no lifetimes" in r.stderr
    r = runner.invoke(spot, ["interval", "--mtti-hours", "6", "--checkpoint-cost-s", "0"])
    assert r.exit_code == 2 and "checkpoint cost" in r.stderr
