"""Zones: availability, phi, exhaustive subset search measured on aligned ticks."""

from __future__ import annotations

import itertools
import json
import random

import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gpurent.cli.spot_analytics_cmds import register_spot_analytics
from gpurent.errors import InputError
from gpurent.spot.analytics.zones import _mask, analyse_zones, phi_coefficient
from gpurent.spot.io.trace import Trace

spot = typer.Typer()
register_spot_analytics(spot)
runner = CliRunner()


def _trace(name, values):
    return Trace(name=name, gap_hours=0.05, available=tuple(values))


def test_perfectly_correlated_zones_are_not_recommended_together() -> None:
    rng = random.Random(3)
    a = [rng.random() < 0.5 for _ in range(400)]
    b = list(a)  # a twin of a: same outages
    c = [rng.random() < 0.5 for _ in range(400)]
    d = [rng.random() < 0.5 for _ in range(400)]
    traces = [_trace(n, [int(x) for x in v]) for n, v in zip("abcd", (a, b, c, d), strict=True)]
    rep = analyse_zones(traces, set_size=2)
    assert set(rep.recommended.zones) != {"a", "b"}
    phi_ab = next(p.phi for p in rep.pairs if (p.zone_a, p.zone_b) == ("a", "b"))
    assert phi_ab == pytest.approx(1.0)
    assert rep.subsets_searched == 6


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2), min_size=30, max_size=30), min_size=3, max_size=5))
def test_recommended_set_is_the_measured_minimum(rows: list[list[int]]) -> None:
    traces = [_trace(f"z{i}", r) for i, r in enumerate(rows)]
    rep = analyse_zones(traces, set_size=3)
    brute = min(
        sum(all(rows[k][t] < 1 for k in combo) for t in range(30)) / 30
        for combo in itertools.combinations(range(len(rows)), 3)
    )
    assert rep.recommended.p_all_unavailable == pytest.approx(brute)
    for z, r in zip(rep.zones, rows, strict=True):
        assert z.availability == pytest.approx(sum(v >= 1 for v in r) / 30)


def test_phi_undefined_for_constant_zone() -> None:
    a = _mask(_trace("a", [0, 0, 0]), 1)
    b = _mask(_trace("b", [1, 0, 1]), 1)
    assert phi_coefficient(a, b, 3) is None


def test_size_larger_than_zone_count_is_an_input_error() -> None:
    with pytest.raises(InputError, match="--size 3"):
        analyse_zones([_trace("a", [1, 0]), _trace("b", [0, 1])], set_size=3)


def _csv(path, values):
    lines = ["date,availability"] + [f"2023-03-06 00:{i:02d}:00,{v}" for i, v in enumerate(values)]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_cli_zones_json_and_table(tmp_path) -> None:
    rng = random.Random(1)
    files = [
        _csv(tmp_path / f"z{i}.csv", [int(rng.random() < 0.6) for _ in range(50)]) for i in range(4)
    ]
    r = runner.invoke(spot, ["zones", *files, "--json"])
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    assert len(data["recommended"]["zones"]) == 3 and data["subsets_searched"] == 4
    r = runner.invoke(spot, ["zones", *files])
    assert "recommended:" in r.stdout


def test_cli_zones_errors(tmp_path) -> None:
    one = _csv(tmp_path / "a.csv", [1, 0, 1])
    r = runner.invoke(spot, ["zones", one, "--size", "3"])
    assert r.exit_code == 2 and "--size 3" in r.stderr
    r = runner.invoke(spot, ["zones", one, "--json"])  # default size: min(3, zones given)
    assert r.exit_code == 0 and json.loads(r.stdout)["set_size"] == 1
    r = runner.invoke(spot, ["zones", str(tmp_path / "missing.csv")])
    assert r.exit_code == 2 and "no such file" in r.stderr
