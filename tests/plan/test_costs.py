"""pricing.costs: billing rounding, the cost split, and the expected spot overhead."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpurent.pricing.costs import (
    CostAssumptions,
    SpotOverhead,
    billed_hours,
    checkpoint_cost_s,
    cost_breakdown,
    cost_coefficients,
    spot_overhead,
)


def overhead(**changes: float) -> SpotOverhead:
    """`spot_overhead` of one hour of training on one node; each test states what it changes."""
    args: dict = {
        "compute_s": 3600,
        "nodes": 1,
        "interruptions_per_hour_per_instance": 0.2,
        "checkpoint_cost_s": 30,
        "restart_s": 600,
        "trains": True,
    }
    return spot_overhead(**{**args, **changes})


def test_billing_rounds_up_to_the_step():
    assert billed_hours(61, 60) == pytest.approx(120 / 3600)
    assert billed_hours(60, 60) == pytest.approx(60 / 3600)
    assert billed_hours(3601, 1) == pytest.approx(3601 / 3600)
    assert math.isinf(billed_hours(math.inf, 1))


@given(
    wall_s=st.floats(1, 1e7),
    price=st.floats(0.01, 200),
    nodes=st.integers(1, 8),
    step=st.sampled_from([1, 60, 3600]),
    storage_gb=st.floats(0, 5000),
    egress_gb=st.floats(0, 1e4),
)
def test_coefficients_match_the_itemised_cost(wall_s, price, nodes, step, storage_gb, egress_gb):
    a = CostAssumptions(storage_gb_per_node=storage_gb, egress_gb=egress_gb)
    coef_a, coef_b = cost_coefficients(
        wall_s=wall_s, nodes=nodes, granularity_s=step, provider="aws", assumptions=a
    )
    cost = cost_breakdown(
        price_usd_per_hour=price,
        wall_s=wall_s,
        compute_s=wall_s,
        nodes=nodes,
        granularity_s=step,
        provider="aws",
        assumptions=a,
    )
    assert cost.total_usd == pytest.approx(coef_a * price + coef_b)
    assert cost.compute_usd >= nodes * price * wall_s / 3600 - 1e-9  # never under-billed
    assert cost.spot_overhead_usd == 0


def test_reserved_term_charges_the_whole_term():
    a = CostAssumptions(storage_gb_per_node=0)
    coef_a, _ = cost_coefficients(
        wall_s=3600,
        nodes=1,
        granularity_s=1,
        provider="aws",
        assumptions=a,
        term_hours=8760,
    )
    assert coef_a == 8760


def test_provider_defaults_and_overrides():
    a = CostAssumptions()
    assert a.egress_rate("lambda") == 0.0 and a.egress_rate("unknown-cloud") == 0.09
    assert a.interruptions_per_hour("aws") < a.interruptions_per_hour("gcp")
    b = CostAssumptions(egress_usd_per_gb=0.5, spot_interruptions_per_hour=0.05)
    assert b.egress_rate("lambda") == 0.5 and b.interruptions_per_hour("gcp") == 0.05
    assert any("0.05/h" in line for line in b.describe(("aws", "gcp")))


def test_checkpoint_cost_from_state_or_flag():
    assert checkpoint_cost_s(20.0, CostAssumptions()) == pytest.approx(30.0)
    assert checkpoint_cost_s(20.0, CostAssumptions(checkpoint_s=5.0)) == 5.0


def test_no_interruptions_no_overhead():
    s = overhead(nodes=4, interruptions_per_hour_per_instance=0.0)
    assert s.slowdown == 1.0 and s.expected_interruptions == 0


def test_inference_loses_only_restarts():
    s = overhead(compute_s=36000, trains=False)
    assert s.checkpoint_time_s == 0 and s.lost_work_s == 0
    assert s.slowdown == pytest.approx(1 / (1 - 600 / 18000))


def test_too_frequent_interruptions_never_finish():
    s = overhead(nodes=8, interruptions_per_hour_per_instance=2.0, checkpoint_cost_s=300)
    assert not s.finishes


@given(
    rate=st.floats(0.001, 0.5),
    extra=st.floats(0.001, 0.5),
    nodes=st.integers(1, 8),
    ckpt=st.floats(1, 300),
)
def test_overhead_grows_with_interruption_rate(rate, extra, nodes, ckpt):
    def slowdown(r: float) -> float:
        return overhead(
            compute_s=36000,
            nodes=nodes,
            interruptions_per_hour_per_instance=r,
            checkpoint_cost_s=ckpt,
        ).slowdown

    low, high = slowdown(rate), slowdown(rate + extra)
    assert low >= 1.0
    assert high >= low or math.isinf(high)


def test_bad_assumptions_are_input_errors():
    from gpurent.errors import InputError

    with pytest.raises(InputError, match="--egress-gb"):
        CostAssumptions(egress_gb=-1)
    with pytest.raises(InputError, match="spot-interruptions"):
        CostAssumptions(spot_interruptions_per_hour=100)
