"""Multi-node jobs ("Can't Be Late", section 5.3): a job on N nodes runs only while N spot
instances are held, one lost node stops all, and every node is billed. Per-node traces
(`--node-traces`) and the SkyNomad artifact's 16-node probe rounds are read."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from tests.conftest import run_cli

from gpurent.spot.io.trace import Trace, align_zones, combine_nodes
from gpurent.spot.io.trace_io import load_trace
from gpurent.spot.sim.evaluate import run_policy
from gpurent.spot.sim.job_market import JobSpec, build_market

GAP = 0.1
JOB = JobSpec(job_hours=1.0, deadline_hours=3.0, changeover_hours=0.1, nodes=2)


def test_a_lost_node_stops_the_job_and_every_node_is_billed() -> None:
    n1 = Trace(name="n1", gap_hours=GAP, available=(1,) * 40)
    n2 = Trace(name="n2", gap_hours=GAP, available=(1,) * 5 + (0,) * 3 + (1,) * 32)
    zone = combine_nodes([n1, n2], "z")
    assert zone.available[:9] == (2, 2, 2, 2, 2, 1, 1, 1, 2)
    market = build_market(align_zones([zone]), nodes=2, price_ratio=3.0)
    s = run_policy("greedy", market, JOB, [0])
    r = s.results[0]
    # node 2 is lost at tick 5: the job stops with it (4 ticks of progress), then resumes
    assert r.preemptions == 1 and r.finished
    assert r.spot_progress_hours == pytest.approx(1.0)
    assert r.cost_usd_per_node == pytest.approx((5 + 7) * GAP)  # 1 + 4 ticks, then 1 + 6
    assert s.nodes == 2 and s.mean_cost_all_nodes == pytest.approx(2 * r.cost_usd_per_node)
    one = JobSpec(job_hours=1.0, deadline_hours=3.0, changeover_hours=0.1)
    alone = run_policy("greedy", build_market(align_zones([n1]), price_ratio=3.0), one, [0])
    assert alone.results[0].preemptions == 0  # node 1 alone is never lost


def _csv(path: Path, values: list[int]) -> Path:
    t0 = datetime(2025, 10, 4)
    rows = ["date,availability"] + [
        f"{(t0 + timedelta(seconds=360 * i)).isoformat()},{v}" for i, v in enumerate(values)
    ]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_cli_node_traces_need_every_node(tmp_path: Path) -> None:
    a = _csv(tmp_path / "node1.csv", [1] * 60)
    b = _csv(tmp_path / "node2.csv", [1 if (i // 10) % 2 else 0 for i in range(60)])
    args = ["--job-hours", "1", "--deadline-hours", "3", "--changeover-hours", "0.1"]
    args += ["--starts", "3", "--price-ratio", "3", "--json", "--policy", "greedy"]
    code, out, err = run_cli(
        "spot", "simulate", "--trace", str(a), "--trace", str(b), "--node-traces",
        "--nodes", "2", *args,
    )  # fmt: skip
    assert code == 0, err
    both = json.loads(out)
    code, out, err = run_cli("spot", "simulate", "--trace", str(b), *args)
    assert code == 0, err
    worst_node = json.loads(out)
    assert both["nodes"] == 2
    assert both["mean_cost_normalized"] == pytest.approx(worst_node["mean_cost_normalized"])
    assert both["mean_cost_all_nodes"] == pytest.approx(2 * worst_node["mean_cost_all_nodes"])
    code, _, err = run_cli(
        "spot", "simulate", "--trace", str(a), "--node-traces", "--nodes", "2", *args
    )
    assert code == 2 and "one trace per node" in err


def _round(folder: Path, i: int, created: dict[str, int]) -> None:
    when = datetime(2025, 10, 3, 17, 10) + timedelta(minutes=10 * i)
    doc = {
        "scheduled_at": when.isoformat() + "-07:00",
        "interval_sec": 600,
        "zone_results": {
            z: {"instances_requested": 16, "instances_created": n} for z, n in created.items()
        },
    }
    (folder / f"{when:%Y%m%d-%H%M%S}.json").write_text(json.dumps(doc))


def test_sixteen_node_probe_rounds(tmp_path: Path) -> None:
    rounds = tmp_path / "h100_16_runs"
    rounds.mkdir()
    for i, (a, b) in enumerate([(16, 7), (16, 16), (13, 16), (16, 0), (16, 16)]):
        _round(rounds, i, {"us-central1-a": a, "europe-west1-c": b})
    traces = {tr.name: tr for tr in load_trace(rounds)}
    assert traces["us-central1-a"].available == (16, 16, 13, 16, 16)
    assert traces["europe-west1-c"].available == (7, 16, 16, 0, 16)
    assert traces["us-central1-a"].gap_hours == pytest.approx(1 / 6)
    market = build_market(align_zones(list(traces.values())), nodes=16, price_ratio=3.0)
    assert market.usable.tolist() == [
        [True, True, False, True, True],
        [False, True, True, False, True],
    ]
    code, out, err = run_cli(
        "spot", "simulate", "--trace", str(rounds), "--nodes", "16", "--job-hours", "0.2",
        "--deadline-hours", "0.5", "--changeover-hours", "0.05", "--price-ratio", "3",
        "--starts", "1", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["nodes"] == 16
