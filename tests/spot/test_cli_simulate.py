from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import run_cli

ARGS = ["--job-hours", "1", "--deadline-hours", "2", "--changeover-hours", "0.1", "--starts", "4"]
KEYS = {
    "policy",
    "runs",
    "mean_cost_normalized",
    "p90_cost_normalized",
    "deadline_misses",
    "mean_spot_fraction",
    "nodes",
    "mean_cost_all_nodes",
}


def pattern(n: int) -> list[int]:
    return [1 if (i // 7) % 3 else 0 for i in range(n)]


def test_simulate_json_single_zone(write_csv) -> None:
    path = write_csv("z1", pattern(60))
    code, out, err = run_cli(
        "spot", "simulate", "--trace", str(path), *ARGS, "--price-ratio", "3", "--json"
    )
    assert code == 0, err
    got = json.loads(out)
    assert set(got) == KEYS
    assert got["policy"] == "lifetime-up" and got["runs"] == 4 and got["deadline_misses"] == 0
    assert 1 / 3 <= got["mean_cost_normalized"] <= got["p90_cost_normalized"] + 1e-12


def test_simulate_all_policies_multi_zone_with_trace_prices(write_csv, write_json) -> None:
    a = write_csv("a", pattern(60), [1.0] * 60)
    b = write_json("b", [1 - v for v in pattern(60)], prices=[0.5] * 60, on_demand_price=3.0)
    code, out, err = run_cli(
        "spot",
        "simulate",
        "--trace",
        str(a),
        "--trace",
        str(b),
        *ARGS,
        "--policy",
        "all",
        "--json",
    )
    assert code == 0, err
    got = json.loads(out)
    assert got["zones"] == ["a", "b"]
    by = {r["policy"]: r for r in got["results"]}
    assert set(by) == {
        "on-demand",
        "greedy",
        "uniform-progress",
        "lifetime-up",
        "breakeven-up",
        "proven-up",
        "dp-up",
        "dp-up2",
        "dp-up3",
        "dp-up4",
        "optimal",
    }
    assert all(r["gap_to_optimal"] >= -1e-9 for r in by.values())


def test_simulate_table(write_csv) -> None:
    path = write_csv("z1", pattern(60))
    code, out, _ = run_cli(
        "spot",
        "simulate",
        "--trace",
        str(path),
        *ARGS,
        "--price-ratio",
        "2",
        "--policy",
        "uniform-progress",
        "--vs-optimal",
    )
    assert code == 0 and "uniform-progress" in out and "optimal" in out


def test_truncation_warns(write_csv) -> None:
    a, b = write_csv("a", pattern(60)), write_csv("b", pattern(50))
    code, _, err = run_cli(
        "spot",
        "simulate",
        "--trace",
        str(a),
        "--trace",
        str(b),
        *ARGS,
        "--price-ratio",
        "3",
        "--json",
    )
    assert code == 0 and "truncated from 60 to 50" in err


def test_price_json_of_wrong_length(write_csv, tmp_path: Path) -> None:
    path = write_csv("z1", pattern(60))
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"z1": [1.0] * 59}))
    code, _, err = run_cli(
        "spot",
        "simulate",
        "--trace",
        str(path),
        *ARGS,
        "--prices",
        str(prices),
        "--on-demand-price",
        "3",
    )
    assert code != 0 and "59 prices for 60 ticks" in err


@pytest.mark.parametrize(
    ("values", "extra", "needle"),
    [
        (None, ["--price-ratio", "3"], "no ticks"),
        ([1] * 60, ["--price-ratio", "3", "--policy", "uniform-progres"], "did you mean"),
        ([1] * 60, [], "--price-ratio"),
        ([1] * 60, ["--price-ratio", "3", "--deadline-hours", "0.5"], "shorter than --job-hours"),
        ([1] * 10, ["--price-ratio", "3"], "shorter than the deadline"),
    ],
)
def test_bad_input_is_one_clear_line(write_csv, tmp_path: Path, values, extra, needle) -> None:
    if values is None:
        path = tmp_path / "empty.csv"
        path.write_text("date,availability\n")
    else:
        path = write_csv("z1", values)
    code, _, err = run_cli("spot", "simulate", "--trace", str(path), *ARGS, *extra)
    assert code != 0
    assert needle in err and err.strip().count("\n") == 0


def test_non_numeric_value(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("date,availability\n2023-01-01 00:00:00,1\n2023-01-01 00:06:00,yes\n")
    code, _, err = run_cli("spot", "simulate", "--trace", str(path), *ARGS, "--price-ratio", "3")
    assert code != 0 and "bad.csv:3" in err and "must be a number" in err


def test_policy_help_names_every_registered_policy() -> None:
    """The CLI spells the policy list out (so it need not import numpy to start); keep it true."""
    from gpurent.cli.spot_cmds import POLICY_HELP
    from gpurent.spot.sim.policies import DEFAULT_POLICY, ONLINE_POLICIES, OPTIMAL

    for name in (*ONLINE_POLICIES, OPTIMAL, "auto", "all"):
        assert name in POLICY_HELP
    assert f"auto (= {DEFAULT_POLICY}" in POLICY_HELP


def test_cli_start_imports_no_spot_module_a_spot_command_does_not_need() -> None:
    """Registering the spot commands (every `gpurent` start) leaves trace readers, simulator,
    zones and history to the command that runs."""
    import gpurent

    lazy = (
        "numpy",
        "gpurent.spot.io.trace_io",
        "gpurent.spot.io.price_io",
        "gpurent.spot.analytics.history",
        "gpurent.spot.history_report",
        "gpurent.spot.analytics.forecast",
        "gpurent.spot.analytics.zones",
        "gpurent.spot.sim.simulator",
    )
    code = f"import sys, gpurent.cli.main; print([m for m in {lazy!r} if m in sys.modules])"
    env = {**os.environ, "PYTHONPATH": str(Path(gpurent.__file__).parents[1])}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_simulate_reads_prices_from_artifact_style_json(tmp_path: Path) -> None:
    """Without --price-ratio, prices come from the traces: here the SkyNomad artifact's layout
    (`ZONE/full.json`, prices beside `data`, on-demand in `metadata.price_info`)."""
    paths = []
    for zone, values in (("us-east-1f", pattern(60)), ("us-east-2a", [1 - v for v in pattern(60)])):
        path = tmp_path / zone / "full.json"
        path.parent.mkdir()
        body = {
            "metadata": {"gap_seconds": 360, "price_info": {"price": 1.0, "on_demand_price": 3.0}},
            "data": values,
            "prices": [1.0] * 60,
        }
        path.write_text(json.dumps(body))
        paths += ["--trace", str(path)]
    code, out, err = run_cli("spot", "simulate", *paths, *ARGS, "--policy", "all", "--json")
    assert code == 0, err
    got = json.loads(out)
    assert got["zones"] == ["us-east-1f", "us-east-2a"]
    flat = ["--price-ratio", "3", "--policy", "all", "--json"]
    ratio = run_cli("spot", "simulate", *paths, *ARGS, *flat)
    assert ratio[0] == 0, ratio[2]
    # spot 1 $/h against on-demand 3 $/h is the same market as --price-ratio 3
    by_trace = {r["policy"]: r["mean_cost_normalized"] for r in got["results"]}
    by_ratio = {r["policy"]: r["mean_cost_normalized"] for r in json.loads(ratio[1])["results"]}
    assert by_trace == pytest.approx(by_ratio)


@pytest.mark.parametrize(
    "args",
    [
        ["simulate", "--trace", "{bad}", *ARGS, "--price-ratio", "3"],
        ["simulate", "--trace", "{ok}", *ARGS, "--prices", "{bad}", "--on-demand-price", "3"],
        ["interval", "{bad}"],
        ["zones", "{bad}"],
        ["history", "--trace", "{bad}"],
        ["history", "--trace", "{ok}", "--prices", "{bad}"],
    ],
)
def test_a_binary_file_is_one_clear_line_not_a_traceback(
    write_csv, tmp_path: Path, args: list[str]
) -> None:
    bad = tmp_path / "latin1.csv"
    bad.write_bytes(b"date,availability\n2023-01-01 00:00:00,1\xff\n")
    ok = write_csv("z1", pattern(60))
    argv = [a.format(bad=bad, ok=ok) for a in args]
    code, _, err = run_cli("spot", *argv)
    assert code == 1, err
    assert "latin1.csv: not UTF-8 text" in err and err.strip().count("\n") == 0


@pytest.mark.parametrize(
    "args",
    [
        ["simulate", "--trace", "{trace}", *ARGS, "--prices", "{prices}", "--on-demand-price", "3"],
        ["history", "--trace", "{trace}", "--prices", "{prices}"],
    ],
)
def test_prices_without_the_traces_zone_name_the_zones_they_have(
    write_csv, tmp_path: Path, args: list[str]
) -> None:
    trace = write_csv("z1", pattern(60))
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"us-east-1a": [1.0] * 60, "us-east-1b": [1.0] * 60}))
    code, _, err = run_cli("spot", *[a.format(trace=trace, prices=prices) for a in args])
    assert code == 1
    assert "has no prices for zone 'z1' (it has us-east-1a, us-east-1b)" in err


def test_simulate_reads_cbl_json_data_as_preemption_flags(write_json) -> None:
    """CBL's `data` 1 = preempted (sky_spot TraceEnv: spot available = not trace[tick]): a trace
    of all 1 has no spot, one of all 0 has spot throughout."""
    fractions = []
    for name, value in (("never", 1), ("always", 0)):
        path = write_json(name, [value] * 60)
        code, out, err = run_cli(
            "spot", "simulate", "--trace", str(path), *ARGS, "--price-ratio", "3", "--json"
        )
        assert code == 0, err
        fractions.append(json.loads(out)["mean_spot_fraction"])
    assert fractions == [0.0, pytest.approx(1.0)]
