"""Planner core with a fake estimator: enumeration, layouts, ranking, Pareto, infeasibility."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from plan_fakes import fake_estimate, llm, offer

from gpurent.plan import Constraints, Interconnect, Objective, PricingModel, make_plan
from gpurent.plan.scenarios import SCENARIOS
from gpurent.pricing.costs import CostAssumptions
from gpurent.workload.spec import Sharding, Task

ASSUME = CostAssumptions(storage_gb_per_node=0.0)


def plan(workload, offers, **kw):
    assumptions = kw.pop("assumptions", ASSUME)
    scenario = kw.pop("scenario", None)
    return make_plan(
        workload, offers, Constraints(**kw), assumptions, fake_estimate, scenario=scenario
    )


CATALOG = [
    offer("H100", 8, 30.0, spot=12.0, provider="aws", network_gbps=3200),
    offer("H100", 8, 24.0, provider="lambda", region="us-west-1"),
    offer("A100-80GB", 8, 18.0, spot=7.0, provider="gcp", region="us-central1"),
    offer("L4", 1, 0.8, spot=0.3, provider="gcp", region="us-central1"),
    offer("L40S", 1, 1.9, provider="lambda", region="us-east-1"),
    offer("T4", 4, 3.9, spot=1.5, provider="aws"),
]


def test_cheapest_picks_min_cost_and_explains():
    result = plan(llm(1), CATALOG)
    assert result.feasible
    best = result.best
    assert best is not None and best.rank == 1
    costs = [c.cost_usd for c in result.top]
    assert costs == sorted(costs)
    assert result.explanation is not None
    assert "cheapest of" in result.explanation.why[0]
    assert result.candidates_evaluated > len(CATALOG)
    assert result.estimator_calls >= len(result.top)
    for alt in result.explanation.alternatives:
        if alt.role == "faster for <= 5% more":
            assert alt.candidate.cost_usd <= best.cost_usd * 1.05 + 1e-9
            assert alt.candidate.time_s < best.time_s


def test_fastest_is_sorted_by_time():
    result = plan(llm(1), CATALOG, objective=Objective.FASTEST)
    times = [c.time_s for c in result.top]
    assert times == sorted(times)
    assert result.best is not None and result.best.num_gpus >= 8


def test_layout_shards_big_models_and_leaves_small_ones_plain():
    small = plan(llm(0.5), [offer("H100", 1, 3.0)])
    assert small.best is not None
    assert small.best.layout.sharding is Sharding.NONE
    assert small.best.layout.label == "DP1"
    big = plan(llm(13), [offer("H100", 8, 30.0)], pricing=(PricingModel.ON_DEMAND,))
    assert big.best is not None
    layout = big.best.layout
    assert layout.sharding is not Sharding.NONE or layout.tensor_parallel > 1
    assert big.best.memory.fits


def test_model_too_big_gives_reasons_not_empty_output():
    result = plan(llm(400), [offer("L4", 1, 0.8)], max_nodes=1)
    assert not result.feasible
    assert result.top == ()
    text = " ".join(result.infeasible_reasons)
    assert "fits on no offer" in text and "GiB per GPU" in text and "L4" in text


def test_min_memory_infeasible_names_closest():
    result = plan(llm(1), CATALOG, min_gpu_memory_gib=141, regions=("us-",))
    assert not result.feasible
    reason = result.infeasible_reasons[0]
    assert "no offer has >= 141 GiB per GPU in region us-" in reason
    assert "H100" in reason and "closest" in reason


def test_unknown_provider_lists_known_ones():
    result = plan(llm(1), CATALOG, providers=("azure",))
    assert "no offer from provider azure" in result.infeasible_reasons[0]
    assert "aws" in result.infeasible_reasons[0]


def test_deadline_infeasible_shows_closest_candidates():
    result = plan(llm(7, tokens=1e11), CATALOG, deadline_s=60.0, objective=Objective.DEADLINE)
    assert not result.feasible
    assert result.top, "never an empty table"
    assert all(c.rank == 0 and c.meets_deadline is False for c in result.top)
    assert "deadline" in result.infeasible_reasons[0]


def test_budget_infeasible_names_the_cheapest():
    result = plan(llm(7, tokens=1e11), CATALOG, budget_usd=1.0)
    assert not result.feasible
    assert "budget" in result.infeasible_reasons[0]
    assert result.top[0].cost_usd == min(c.cost_usd for c in result.top)


def test_reserved_needs_terms_or_discount():
    no = plan(llm(1), CATALOG, pricing=(PricingModel.RESERVED,))
    assert "--commit-discount" in no.infeasible_reasons[0]
    yes = plan(
        llm(1),
        CATALOG,
        pricing=(PricingModel.RESERVED, PricingModel.ON_DEMAND),
        assumptions=CostAssumptions(storage_gb_per_node=0.0, commit_discount=0.4),
    )
    assert yes.best is not None
    reserved = [c for c in yes.top if c.pricing is PricingModel.RESERVED]
    # a reserved candidate pays whole terms (lambda's shortest, a 1-week cluster), so for a
    # short job on-demand wins even at 40% off
    assert reserved and yes.best.pricing is PricingModel.ON_DEMAND
    for c in reserved:
        assert c.term_hours > 0
        assert c.cost.compute_usd == pytest.approx(c.nodes * c.term_hours * c.price_usd_per_hour)


def test_spot_overhead_is_charged_and_explained():
    result = plan(llm(7), [offer("H100", 8, 30.0, spot=12.0)])
    spot = [c for c in result.top if c.pricing is PricingModel.SPOT]
    on_demand = [c for c in result.top if c.pricing is PricingModel.ON_DEMAND]
    assert spot and on_demand
    assert spot[0].time_s > on_demand[0].time_s
    assert spot[0].spot is not None and spot[0].spot.expected_interruptions > 0
    assert any(n.startswith("spot:") for n in spot[0].notes)
    assert any("spot" in a for a in result.assumptions)


def test_spot_that_never_finishes_is_dropped():
    assumptions = CostAssumptions(storage_gb_per_node=0.0, spot_interruptions_per_hour=50.0)
    result = plan(
        llm(1),
        [offer("H100", 8, 30.0, spot=12.0)],
        assumptions=assumptions,
        pricing=(PricingModel.SPOT,),
    )
    assert not result.feasible
    assert "never finishes" in " ".join(result.infeasible_reasons)


def test_interconnect_nvlink_excludes_pcie_multi_gpu():
    result = plan(llm(1), CATALOG, interconnect=Interconnect.NVLINK, top_n=50)
    assert result.feasible
    assert all(c.gpus_per_node == 1 or "T4" not in c.gpu_name for c in result.top)
    anything = plan(llm(1), CATALOG, top_n=50)  # the 4x T4 (PCIe) offer ranks without the filter
    assert any(c.gpu_name == "T4" and c.gpus_per_node == 4 for c in anything.top)


def test_regions_collapse_into_one_row():
    offers = [
        offer("L4", 1, 0.8 + i / 100, region=f"us-east-{i}", provider="gcp") for i in range(5)
    ]
    result = plan(llm(0.5), offers, pricing=(PricingModel.ON_DEMAND,), max_nodes=1)
    assert len(result.top) == 1
    assert result.top[0].region == "us-east-0" and result.top[0].also_in_regions == 4


def test_scenario_reports_departure_from_matrix():
    scenario = SCENARIOS["inference"]
    result = plan(
        llm(1, task=Task.INFERENCE, tokens=None),
        CATALOG,
        objective=Objective.THROUGHPUT_PER_DOLLAR,
        scenario=scenario,
    )
    assert result.explanation is not None and result.explanation.matrix is not None
    matrix = result.explanation.matrix
    assert "T4/A10" in matrix.summary
    if not matrix.agrees:
        assert "per dollar" in matrix.summary
    assert any("no amount of work" in a for a in result.assumptions)


def test_constraints_reject_bad_values():
    from gpurent.errors import InputError

    with pytest.raises(InputError, match="--max-gpus"):
        Constraints(max_gpus=0)
    with pytest.raises(InputError, match="needs --deadline"):
        Constraints(objective=Objective.DEADLINE)
    with pytest.raises(InputError, match="commit-discount"):
        CostAssumptions(commit_discount=1.5)


offers_strategy = st.lists(
    st.tuples(
        st.sampled_from(["H100", "A100-80GB", "L4", "L40S", "T4", "A10G"]),
        st.sampled_from([1, 2, 4, 8]),
        st.floats(0.2, 40.0),
        st.one_of(st.none(), st.floats(0.1, 20.0)),
        st.sampled_from(["aws", "gcp", "lambda"]),
    ),
    min_size=1,
    max_size=12,
)


def build(raw):
    return [
        offer(g, n, p, spot=s, provider=prov, region=f"r{i}", instance=f"i{i}")
        for i, (g, n, p, s, prov) in enumerate(raw)
    ]


@settings(max_examples=40, deadline=None)
@given(raw=offers_strategy, tokens=st.floats(1e7, 1e10))
def test_pareto_front_is_non_dominated(raw, tokens):
    result = plan(llm(1, tokens=tokens), build(raw), max_nodes=2, top_n=100)
    front = result.pareto
    for a in front:
        for b in front:
            if a is b:
                continue
            dominated = (
                b.time_s <= a.time_s
                and b.cost_usd <= a.cost_usd
                and (b.time_s < a.time_s or b.cost_usd < a.cost_usd)
            )
            assert not dominated
    for c in result.top:  # every shown candidate is matched or beaten by a front point
        assert any(p.time_s <= c.time_s and p.cost_usd <= c.cost_usd + 1e-9 for p in front)


@settings(max_examples=40, deadline=None)
@given(raw=offers_strategy)
def test_cheapest_objective_picks_minimum_cost(raw):
    result = plan(llm(1), build(raw), max_nodes=2, top_n=1000)
    assert result.best is not None
    assert math.isclose(result.best.cost_usd, min(c.cost_usd for c in result.top))
    assert all(c.cost_usd >= result.best.cost_usd - 1e-9 for c in result.pareto)


@settings(max_examples=40, deadline=None)
@given(raw=offers_strategy, deadline_h=st.floats(0.05, 50.0))
def test_deadline_objective_never_misses_a_meetable_deadline(raw, deadline_h):
    deadline_s = deadline_h * 3600
    offers = build(raw)
    everything = plan(llm(1), offers, max_nodes=2, objective=Objective.FASTEST, top_n=1000)
    meetable = any(c.time_s <= deadline_s for c in everything.pareto)
    result = plan(llm(1), offers, max_nodes=2, objective=Objective.DEADLINE, deadline_s=deadline_s)
    assert result.feasible == meetable
    if meetable:
        assert result.best is not None and result.best.time_s <= deadline_s
        cheapest_on_time = min(c.cost_usd for c in everything.pareto if c.time_s <= deadline_s)
        assert result.best.cost_usd <= cheapest_on_time + 1e-9
