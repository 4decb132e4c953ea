"""`dp-up` (round 8): proven-up whose way back from on-demand is priced by a dynamic programme
over (slack, work left). Its safety properties (no miss where spot vanishes, deterministic,
online only, the CLI run) are checked with breakeven-up's in test_breakeven_up.py."""

from __future__ import annotations

import numpy as np
import pytest
from tests.conftest import run_cli
from tests.spot.markets import market

from gpurent.errors import InputError
from gpurent.spot.sim.evaluate import run_policy
from gpurent.spot.sim.job_market import JobSpec
from gpurent.spot.sim.policies import SlackValueUniformProgressPolicy
from gpurent.spot.sim.slack_value import solve_slack_value

NAME = SlackValueUniformProgressPolicy.name
HIST = ([1] * 200 + [0] * 2 + ([1] * 3 + [0] * 2) * 3) * 12
JOB = JobSpec(job_hours=95.0, deadline_hours=100.0, changeover_hours=0.2)


def test_never_misses_on_a_flapping_fixture() -> None:
    m = market(HIST + [1] * 3 + [0] * 25 + ([1] * 3 + [0] * 3) * 5 + [1] * 1200)
    starts = [len(HIST) - 300, len(HIST) - 100, len(HIST)]
    s = run_policy(NAME, m, JOB, starts)
    assert s.deadline_misses == 0
    assert all(r.finished for r in s.results)


def test_always_available_costs_no_more_than_greedy() -> None:
    m = market([1] * 1500, [1] * 1500)
    s = run_policy(NAME, m, JOB, [0, 200, 400])
    greedy = run_policy("greedy", m, JOB, [0, 200, 400])
    assert s.deadline_misses == 0
    assert s.mean_cost_normalized <= greedy.mean_cost_normalized + 1e-12


def test_always_unavailable_goes_on_demand_in_time() -> None:
    m = market([0] * 1500)
    s = run_policy(NAME, m, JOB, [0, 300])
    od = run_policy("on-demand", m, JOB, [0, 300])
    assert s.deadline_misses == 0
    assert s.mean_cost_normalized == pytest.approx(od.mean_cost_normalized)


def test_slack_is_worth_more_where_it_is_scarce() -> None:
    t = solve_slack_value(
        work_ticks=400.0, slack_ticks=40.0, changeover_ticks=2.0, price_ratio=3.0,
        preemptions_per_tick=0.02, outage_ticks=5.0,
    )  # fmt: skip
    w = np.array([300.0, 300.0, 300.0])
    cost = t.cost_at(np.array([5.0, 20.0, 40.0]), w)
    assert cost[0] >= cost[1] >= cost[2]  # more slack never costs more
    assert cost[0] == pytest.approx(3.0 * 300.0)  # below the floor: on-demand to the end
    assert cost[2] < 3.0 * 300.0  # with slack, spot is worth taking


@pytest.mark.parametrize(
    ("attrs", "word"),
    [({"margin": 1.5}, "margin"), ({"hazard_factor": 0.0}, "hazard"), ({"grid": 1}, "grid")],
)
def test_bad_parameters_are_one_line_errors(attrs: dict[str, float], word: str) -> None:
    cls = type("Bad", (SlackValueUniformProgressPolicy,), attrs)
    with pytest.raises(InputError) as err:
        cls()
    assert word in str(err.value) and "\n" not in str(err.value)


def test_bad_table_inputs_are_one_line_errors() -> None:
    with pytest.raises(InputError) as err:
        solve_slack_value(
            work_ticks=-1.0, slack_ticks=4.0, changeover_ticks=1.0, price_ratio=3.0,
            preemptions_per_tick=0.1, outage_ticks=1.0,
        )  # fmt: skip
    assert "\n" not in str(err.value)


def test_cli_unknown_policy_is_one_line(write_csv) -> None:
    path = write_csv("z1", [1] * 40)
    code, out, err = run_cli(
        "spot", "simulate", "--trace", str(path), "--job-hours", "1", "--deadline-hours", "2",
        "--price-ratio", "3", "--policy", "dp-upp",
    )  # fmt: skip
    assert code != 0
    assert "Traceback" not in err + out and "dp-up" in err + out
