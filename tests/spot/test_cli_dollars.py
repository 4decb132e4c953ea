"""Dollars in the spot commands: --prices pair, --offer from the catalog, prices in the trace."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.conftest import cli_json, run_cli
from tests.spot.test_cli_spot_defaults import pattern

JOB = ["--job-hours", "1", "--deadline-hours", "2", "--starts", "5"]


def simulate(*args: str) -> dict[str, Any]:
    return cli_json("spot", "simulate", *args, "--json")


def test_price_pair_gives_cost_and_saving(write_csv) -> None:
    a = write_csv("a", pattern(80))
    got = simulate("--trace", str(a), *JOB, "--prices", "spot=1,ondemand=4", "--nodes", "1")
    ratio = simulate("--trace", str(a), *JOB, "--price-ratio", "4")
    assert got["mean_cost_normalized"] == pytest.approx(ratio["mean_cost_normalized"])
    assert "dollars" not in ratio
    d = got["dollars"]
    assert isinstance(d, dict)
    norm = float(str(got["mean_cost_normalized"]))
    assert d["on_demand_cost_usd"] == pytest.approx(4.0 * 1 * 1)
    assert d["cost_usd"] == pytest.approx(norm * 4.0)
    assert d["saving_usd"] == pytest.approx(4.0 - norm * 4.0)
    assert d["price_source"] == "--prices"


def test_dollars_count_every_node(write_csv) -> None:
    a = write_csv("a", [2 * v for v in pattern(80)])
    one = simulate("--trace", str(a), *JOB, "--prices", "spot=1,ondemand=4")
    two = simulate("--trace", str(a), *JOB, "--prices", "spot=1,ondemand=4", "--nodes", "2")
    assert two["dollars"]["on_demand_cost_usd"] == pytest.approx(8.0)  # type: ignore[index]
    assert two["dollars"]["cost_usd"] == pytest.approx(2 * one["dollars"]["cost_usd"])  # type: ignore[index]


def test_offer_prices_come_from_the_catalog(write_csv) -> None:
    a = write_csv("a", pattern(80))
    got = simulate("--trace", str(a), *JOB, "--offer", "runpod/1x_A40_SECURE/US")
    d = got["dollars"]
    assert isinstance(d, dict)
    assert d["on_demand_usd_per_hour"] == pytest.approx(0.4)
    assert "catalog offer runpod/1x_A40_SECURE/US" in str(d["price_source"])
    ratio = simulate("--trace", str(a), *JOB, "--price-ratio", "2")
    assert got["mean_cost_normalized"] == pytest.approx(ratio["mean_cost_normalized"])


def test_trace_prices_give_dollars(write_csv) -> None:
    a = write_csv("a", pattern(80), prices=[0.5] * 80)
    got = simulate("--trace", str(a), *JOB, "--on-demand-price", "2")
    d = got["dollars"]
    assert isinstance(d, dict)
    assert d["on_demand_cost_usd"] == pytest.approx(2.0)
    assert d["cost_usd"] == pytest.approx(float(str(got["mean_cost_normalized"])) * 2.0)


def test_terminal_shows_dollars_and_their_source(write_csv) -> None:
    a = write_csv("a", pattern(80))
    code, out, err = run_cli(
        "spot", "simulate", "--trace", str(a), *JOB, "--prices", "spot=1,ondemand=4",
        "--policy", "all",
    )  # fmt: skip
    assert code == 0, err
    assert "mean cost $" in out and "saves vs on-demand" in out
    assert "$4.00 all on-demand; prices from --prices" in out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--prices", "spot=1"], "both spot= and ondemand="),
        (["--prices", "spot=x,ondemand=2"], "must be a number"),
        (["--prices", "spot=1,ondemand=4", "--price-ratio", "3"], "not both"),
        (["--prices", "spot=1,ondemand=4", "--offer", "runpod/1x_A40_SECURE/US"], "not both"),
        (["--offer", "nope/none/nowhere"], "nope/none/nowhere"),
        (["--prices", "spot=5,ondemand=4"], "above on-demand"),
    ],
)
def test_bad_prices_are_one_line(write_csv, args: list[str], needle: str) -> None:
    a = write_csv("a", pattern(80))
    code, _, err = run_cli("spot", "simulate", "--trace", str(a), *JOB, *args)
    assert code == 2, err
    assert needle in err and len(err.strip().splitlines()) == 1


def test_interval_gives_dollars_per_useful_hour() -> None:
    base = ["spot", "interval", "--mtti-hours", "6", "--checkpoint-cost-s", "30", "--json"]
    code, out, err = run_cli(*base, "--prices", "spot=1,ondemand=3")
    assert code == 0, err
    got = json.loads(out)
    daly = got["dollars"]["Daly"]
    total = got["overheads"]["Daly"]["total"]
    assert daly["usd_per_hour"] == pytest.approx(1 + total)
    assert daly["saving_fraction"] == pytest.approx(1 - (1 + total) / 3)
    code, out, _ = run_cli(*base)
    assert "dollars" not in json.loads(out)


def test_interval_on_a_trace_with_an_offer(write_csv) -> None:
    a = write_csv("a", [2 * v for v in pattern(80)])
    code, out, err = run_cli(
        "spot", "interval", str(a), "--offer", "runpod/1x_A40_SECURE/US", "--nodes", "2"
    )
    assert code == 0, err
    text = " ".join(out.split())
    assert "dollars per hour of useful work on spot (2 node(s), vs $0.80/h on-demand)" in text
    assert "catalog offer runpod/1x_A40_SECURE/US" in text
