"""Plans built with the planner's fake estimator, for renderer tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plan"))

from plan_fakes import fake_estimate, llm, offer

from gpurent.plan import Constraints, Objective, Plan, make_plan
from gpurent.plan.scenarios import SCENARIOS
from gpurent.pricing.costs import CostAssumptions
from gpurent.workload.spec import Task

CATALOG = [
    offer("H100", 8, 30.0, spot=12.0, provider="aws", network_gbps=3200),
    offer("H100", 8, 24.0, provider="lambda", region="us-west-1"),
    offer("A100-80GB", 8, 18.0, spot=7.0, provider="gcp", region="us-central1"),
    offer("L4", 1, 0.8, spot=0.3, provider="gcp", region="us-central1"),
    offer("T4", 4, 3.9, spot=1.5, provider="aws"),
]


@pytest.fixture()
def feasible_plan() -> Plan:
    return make_plan(
        llm(7),
        CATALOG,
        Constraints(),
        CostAssumptions(egress_gb=50.0),
        fake_estimate,
    )


@pytest.fixture()
def scenario_plan() -> Plan:
    return make_plan(
        llm(1, task=Task.INFERENCE, tokens=None),
        CATALOG,
        Constraints(objective=Objective.THROUGHPUT_PER_DOLLAR),
        CostAssumptions(),
        fake_estimate,
        scenario=SCENARIOS["inference"],
    )


@pytest.fixture()
def infeasible_plan() -> Plan:
    return make_plan(
        llm(7, tokens=1e11),
        CATALOG,
        Constraints(deadline_s=60.0),
        CostAssumptions(),
        fake_estimate,
    )


@pytest.fixture()
def vendors_example_page(monkeypatch: pytest.MonkeyPatch) -> str:
    """The scorecard page of examples/vendors.toml, named as the golden's run named it (a path
    relative to the repository root)."""
    from gpurent.report.vendors_html import vendors_page
    from gpurent.vendors.evaluation import evaluate
    from gpurent.vendors.file import load_vendors

    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    return vendors_page(evaluate(load_vendors(Path("examples/vendors.toml"))))
