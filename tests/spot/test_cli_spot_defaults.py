"""The spot commands through the real CLI: defaults that fit the input, README exit codes."""

from __future__ import annotations

import json

import pytest
from tests.conftest import run_cli


def pattern(n: int, phase: int = 0) -> list[int]:
    return [1 if ((i + phase) // 5) % 3 else 0 for i in range(n)]


def test_zones_with_two_traces_defaults_to_a_set_of_two(write_csv) -> None:
    a = write_csv("a", pattern(60))
    b = write_csv("b", pattern(60, 4))
    code, out, err = run_cli("spot", "zones", str(a), str(b), "--json")
    assert code == 0, err
    got = json.loads(out)
    assert got["set_size"] == 2
    assert sorted(got["recommended"]["zones"]) == ["a", "b"]


def test_zones_default_size_stays_three_with_more_zones(write_csv) -> None:
    paths = [str(write_csv(n, pattern(60, i))) for i, n in enumerate("abcd")]
    code, out, err = run_cli("spot", "zones", *paths, "--json")
    assert code == 0, err
    assert json.loads(out)["set_size"] == 3


def test_zones_explicit_size_above_zones_given_is_exit_2(write_csv) -> None:
    a = write_csv("a", pattern(60))
    b = write_csv("b", pattern(60, 4))
    code, _, err = run_cli("spot", "zones", str(a), str(b), "--size", "3")
    assert code == 2
    assert "--size 3" in err and len(err.strip().splitlines()) == 1


SIMULATE = ["--job-hours", "1", "--deadline-hours", "2", "--price-ratio", "3"]


@pytest.mark.parametrize(
    "args",
    [["simulate", "--trace", "{trace}", *SIMULATE], ["interval", "{trace}"], ["zones", "{trace}"]],
)
def test_a_one_row_trace_is_bad_input_exit_2(write_csv, args: list[str]) -> None:
    trace = write_csv("short", [1])
    code, out, err = run_cli("spot", *[a.format(trace=trace) for a in args])
    assert code == 2, (out, err)
    assert err.strip().count("\n") == 0
    assert "short.csv" in err and "1 row" in err and "at least 2" in err


def test_a_trace_shorter_than_the_deadline_says_ticks_it_has_and_needs(write_json) -> None:
    trace = write_json("brief", [1, 1, 1])  # 3 ticks of 0.1 h; the 2 h deadline needs 20
    code, _, err = run_cli("spot", "simulate", "--trace", str(trace), *SIMULATE)
    assert code == 2, err
    assert err.strip().count("\n") == 0
    assert "'brief'" in err and "3 ticks" in err and "at least 20" in err
