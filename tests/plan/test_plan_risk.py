"""The planner ranks by the median and offers `--risk p90` (the pessimistic end of each
estimate's 80% interval); time and cost ranges follow the throughput bounds; the explanation
says when the top picks' ranges overlap (issue 12, "Uncertainty on every figure")."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from plan_cli import PLAN_SCHEMA as SCHEMA
from plan_fakes import fake_estimate, llm, offer
from tests.conftest import run_cli as run

from gpurent.catalog.gpu import GpuSpec
from gpurent.estimate.result import Estimate
from gpurent.plan import Constraints, Objective, PricingModel, make_plan
from gpurent.plan.constraints import Risk
from gpurent.plan.explain import overlap_note
from gpurent.pricing.costs import CostAssumptions
from gpurent.workload.spec import Workload

ASSUME = CostAssumptions(storage_gb_per_node=0.0)
GPUS = ("H100", "A100-80GB", "L4", "L40S", "T4")


class IntervalEstimator:
    """The fake estimator with a chosen (low, high) throughput interval per GPU."""

    def __init__(self, intervals: dict[str, tuple[float, float]]) -> None:
        self.intervals = intervals

    def __call__(
        self,
        workload: Workload,
        gpu: GpuSpec,
        num_gpus: int,
        nodes: int,
        inter_node_gbps: float | None,
    ) -> Estimate:
        est = fake_estimate(workload, gpu, num_gpus, nodes, inter_node_gbps)
        low, high = self.intervals.get(gpu.name, (1.0, 1.0))
        return replace(est, interval_low=low, interval_high=high, interval_class="test")

    def find_gpu(self, name: str) -> GpuSpec | None:
        return fake_estimate.find_gpu(name)


def _catalog() -> list:
    return [
        offer("H100", 8, 30.0, spot=12.0, provider="aws", network_gbps=3200),
        offer("H100", 8, 24.0, provider="lambda", region="us-west-1"),
        offer("A100-80GB", 8, 18.0, spot=7.0, provider="gcp", region="us-central1"),
        offer("L4", 1, 0.8, spot=0.3, provider="gcp", region="us-central1"),
        offer("L40S", 1, 1.9, provider="lambda", region="us-east-1"),
        offer("T4", 4, 3.9, spot=1.5, provider="aws"),
    ]


def _plan(estimator: IntervalEstimator, risk: Risk, objective: Objective = Objective.CHEAPEST):
    c = Constraints(risk=risk, objective=objective, top_n=50, max_nodes=2)
    return make_plan(llm(1), _catalog(), c, ASSUME, estimator)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0.4, 1.0), st.floats(1.0, 2.0)), min_size=len(GPUS), max_size=len(GPUS)
    )
)
def test_p90_never_picks_a_candidate_with_a_higher_p90_cost(bounds) -> None:
    from gpurent.catalog import get_gpu

    est = IntervalEstimator({get_gpu(g).name: b for g, b in zip(GPUS, bounds, strict=True)})
    result = _plan(est, Risk.P90)
    assert result.feasible and result.best is not None
    best = result.best
    # every feasible row is represented in `top` by its best (top_n covers all identities)
    for c in (*result.top, *result.pareto):
        assert best.cost_high_usd <= c.cost_high_usd + 1e-9
    highs = [c.cost_high_usd for c in result.top]
    assert highs == sorted(highs)
    for c in result.top:
        assert c.cost_low_usd <= c.cost_usd <= c.cost_high_usd
        assert c.time_low_s <= c.time_s <= c.time_high_s
        assert c.throughput_low <= c.throughput <= c.throughput_high


def test_p90_prefers_the_narrow_estimate_over_a_cheaper_uncertain_one() -> None:
    from gpurent.catalog import get_gpu

    narrow = {get_gpu(g).name: (0.95, 1.05) for g in GPUS}
    median = _plan(IntervalEstimator(narrow), Risk.MEDIAN).best
    assert median is not None
    wide = dict(narrow)
    wide[get_gpu(median.gpu_name).name] = (0.3, 1.1)  # the median pick is very uncertain
    est = IntervalEstimator(wide)
    med_best, p90_best = _plan(est, Risk.MEDIAN).best, _plan(est, Risk.P90).best
    assert med_best is not None and p90_best is not None
    assert med_best.gpu_name == median.gpu_name  # the median ranking ignores the width
    assert p90_best.gpu_name != median.gpu_name
    assert p90_best.cost_high_usd < med_best.cost_high_usd
    assert p90_best.cost_usd >= med_best.cost_usd


def test_fastest_under_p90_ranks_by_the_p90_time() -> None:
    from gpurent.catalog import get_gpu

    est = IntervalEstimator({get_gpu(g).name: (0.5 + 0.1 * i, 1.2) for i, g in enumerate(GPUS)})
    result = _plan(est, Risk.P90, Objective.FASTEST)
    times = [c.time_high_s for c in result.top]
    assert times == sorted(times)


def test_overlap_note_says_when_the_top_ranges_overlap() -> None:
    from gpurent.catalog import get_gpu

    est = IntervalEstimator({get_gpu(g).name: (0.7, 1.4) for g in GPUS})
    result = _plan(est, Risk.MEDIAN)
    assert result.explanation is not None
    top = result.top
    first, second = top[0], top[1]
    assert second.cost_low_usd <= first.cost_high_usd  # wide enough to overlap
    assert any("80% cost ranges overlap" in line for line in result.explanation.why)
    # moved apart, the note goes
    apart = replace(second, cost_low_usd=first.cost_high_usd * 1.01)
    assert overlap_note((first, apart), Objective.CHEAPEST) is None
    assert overlap_note((first,), Objective.CHEAPEST) is None
    # no interval at all (the point estimate): two equal costs still "overlap"
    point = IntervalEstimator({})
    spread = _plan(point, Risk.MEDIAN)
    assert spread.top[0].cost_low_usd == spread.top[0].cost_usd


def test_cli_plan_json_carries_ranges_and_risk_and_validates() -> None:
    code, out, err = run("plan", "--preset", "llama-lora", "--top", "5", "--risk", "p90", "--json")
    assert code == 0, err
    doc = json.loads(out)
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    assert doc["risk"] == "p90"
    highs = [c["interval"]["cost_high_usd"] for c in doc["top"]]
    assert highs == sorted(highs)
    for c in doc["top"]:
        iv = c["interval"]
        assert iv["coverage"] == 0.8 and iv["class"]
        assert iv["cost_low_usd"] <= c["cost"]["total_usd"] <= iv["cost_high_usd"]
        assert iv["time_low_s"] <= c["time_s"] <= iv["time_high_s"]
    code, out, err = run("plan", "--preset", "llama-lora", "--top", "5", "--json")
    assert code == 0, err
    median = json.loads(out)
    assert median["risk"] == "median"
    costs = [c["cost"]["total_usd"] for c in median["top"]]
    assert costs == sorted(costs)  # the default ranking is the median one, unchanged


def test_cli_plan_terminal_markdown_and_html_show_ranges(tmp_path: Path) -> None:
    code, out, err = run("plan", "--preset", "llama-lora", "--top", "3", "--markdown")
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith("| 1 |"))
    assert row.count("(") >= 2 and "-" in row  # "2.0 h (1.2-2.8 h)", "$2.003 ($1.156-2.737)"
    assert "(80%: " in out  # the throughput line of the explanation
    page = tmp_path / "plan.html"
    code, out, err = run("plan", "--preset", "llama-lora", "--top", "3", "--html", str(page))
    assert code == 0, err
    assert "(80%: " in out
    html = page.read_text(encoding="utf-8")
    assert "<br>(" in html and "(80%: " in html  # each time/cost cell's range on its own line


@pytest.mark.parametrize("bad", ["p95", "worst", ""])
def test_bad_risk_is_a_one_line_error(bad: str) -> None:
    code, out, err = run("plan", "--preset", "llama-lora", "--risk", bad)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "risk" in err
    assert "Traceback" not in err + out


def test_pricing_models_unchanged_by_risk() -> None:
    """The risk changes the order, never the set of candidates priced."""
    from gpurent.catalog import get_gpu

    est = IntervalEstimator({get_gpu(g).name: (0.6, 1.3) for g in GPUS})
    a, b = _plan(est, Risk.MEDIAN), _plan(est, Risk.P90)
    assert a.candidates_evaluated == b.candidates_evaluated
    assert {(c.label, c.pricing) for c in a.top} == {(c.label, c.pricing) for c in b.top}
    assert {c.pricing for c in a.top} <= {PricingModel.ON_DEMAND, PricingModel.SPOT}
