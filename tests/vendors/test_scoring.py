"""The scorecard's normalisation functions, weights, missing evidence and cost arithmetic."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpurent.errors import InputError
from gpurent.vendors.costs import job_cost
from gpurent.vendors.file import ReferenceJob, parse_vendors
from gpurent.vendors.normalise import (
    compliance_score,
    cost_score,
    elasticity_score,
    hardware_fraction_score,
    latency_score,
    support_score,
)
from gpurent.vendors.scoring import score_vendors, weighted_total
from gpurent.vendors.weights import GUIDE_WEIGHTS, parse_weights, resolve_weights
from tests.vendors.vendors_evidence import write_bench

pos = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False)
frac = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def _in_range(x: float) -> bool:
    return 0.0 <= x <= 100.0


@settings(max_examples=200, deadline=None)
@given(a=pos, b=pos)
def test_latency_score_is_monotone_non_increasing(a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    assert latency_score(lo) >= latency_score(hi)
    assert _in_range(latency_score(a))


def test_latency_score_anchors() -> None:
    assert latency_score(0.5) == latency_score(2.0) == 100.0
    assert latency_score(20.0) == pytest.approx(50.0)
    assert latency_score(200.0) == pytest.approx(0.0)
    assert latency_score(5000.0) == 0.0
    assert 50.0 < latency_score(10.0) < 100.0


@settings(max_examples=200, deadline=None)
@given(a=frac, b=frac)
def test_compliance_score_is_monotone_non_decreasing(a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    assert compliance_score(lo) <= compliance_score(hi)
    assert _in_range(compliance_score(a))


def test_compliance_full_marks_at_the_guides_95_percent() -> None:
    assert compliance_score(0.95) == pytest.approx(100.0)
    assert compliance_score(1.0) == 100.0
    assert compliance_score(0.475) == pytest.approx(50.0)


@settings(max_examples=200, deadline=None)
@given(ts=st.lists(pos, min_size=1, max_size=8), i=st.integers(0, 7), extra=pos)
def test_elasticity_score_falls_when_any_timing_grows(
    ts: list[float], i: int, extra: float
) -> None:
    i %= len(ts)
    slower = list(ts)
    slower[i] += extra
    assert elasticity_score(slower) <= elasticity_score(ts)
    assert _in_range(elasticity_score(ts))


def test_elasticity_full_marks_within_five_minutes() -> None:
    assert elasticity_score([60.0, 300.0]) == 100.0
    assert elasticity_score([600.0]) == pytest.approx(50.0)


@settings(max_examples=200, deadline=None)
@given(a=pos, b=pos, cheapest=pos)
def test_cost_score_is_monotone_in_the_total(a: float, b: float, cheapest: float) -> None:
    lo, hi = sorted((a + cheapest, b + cheapest))
    assert cost_score(lo, cheapest) >= cost_score(hi, cheapest)
    assert cost_score(cheapest, cheapest) == pytest.approx(100.0)


@settings(max_examples=200, deadline=None)
@given(a=pos, b=pos, always=st.booleans(), experts=st.booleans())
def test_support_score_is_monotone(a: float, b: float, always: bool, experts: bool) -> None:
    lo, hi = sorted((a, b))
    assert support_score(always, experts, lo) >= support_score(always, experts, hi)
    assert support_score(True, experts, a) >= support_score(False, experts, a)
    assert support_score(always, True, a) >= support_score(always, False, a)
    assert support_score(True, True, 0.5) == 100.0


@settings(max_examples=200, deadline=None)
@given(a=frac, b=frac, c=frac)
def test_hardware_score_is_monotone_in_each_fraction(a: float, b: float, c: float) -> None:
    lo, hi = sorted((a, b))
    assert hardware_fraction_score(lo, c) <= hardware_fraction_score(hi, c)
    assert hardware_fraction_score(c, lo) <= hardware_fraction_score(c, hi)
    assert hardware_fraction_score(lo, None) <= hardware_fraction_score(hi, None)


def test_resolve_weights_defaults_to_the_guide() -> None:
    weights, warnings = resolve_weights(None, strict=True)
    assert dict(weights) == pytest.approx(dict(GUIDE_WEIGHTS))
    assert warnings == ()


def test_weights_not_summing_to_one_are_normalised_with_a_warning_or_refused() -> None:
    given_w = parse_weights("hardware=0.6,network=0.2,elasticity=0.2,cost=0.1,support=0.1")
    weights, warnings = resolve_weights(given_w, strict=False)
    assert sum(w for _, w in weights) == pytest.approx(1.0)
    assert dict(weights)["hardware"] == pytest.approx(0.5)
    assert len(warnings) == 1 and "sum to 1.2" in warnings[0]
    with pytest.raises(InputError, match=r"sum to 1.2, not 1"):
        resolve_weights(given_w, strict=True)


def test_named_weights_replace_the_guides_and_the_rest_keep_theirs() -> None:
    weights, warnings = resolve_weights(parse_weights("hardware=0.2,cost=0.25"), strict=True)
    assert dict(weights)["hardware"] == pytest.approx(0.2)
    assert dict(weights)["network"] == pytest.approx(0.25)
    assert warnings == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("hardwre=0.3", r"unknown criterion 'hardwre'; did you mean hardware"),
        ("hardware", r"not CRITERION=WEIGHT"),
        ("hardware=-1", r"hardware must be"),
        ("hardware=abc", r"must be a number"),
        (",", r"give CRITERION=WEIGHT"),
    ],
)
def test_bad_weights_are_one_line_errors(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_weights(text)


def _providers(tmp_path: Path, with_network: bool) -> tuple[object, ...]:
    write_bench(tmp_path / "a.json", matmul=700.0, membw=3000.0)
    write_bench(tmp_path / "b.json", matmul=600.0, membw=2500.0)
    b_net = (
        "[[provider.netcheck]]\nlatency_us = { p50 = 20.0 }\ncompliance = 0.95\n"
        if with_network
        else ""
    )
    text = f"""
[[provider]]
name = "A"
gpu_usd_per_hour = 2.0
scale_out_s = [600]
bench = {{ H100 = "a.json" }}
[[provider.netcheck]]
latency_us = {{ p50 = 2.0 }}
compliance = 0.95
[provider.support]
always_24x7 = true
gpu_experts = true
response_time_h = 1

[[provider]]
name = "B"
gpu_usd_per_hour = 1.0
scale_out_s = [300]
bench = {{ H100 = "b.json" }}
{b_net}
[provider.support]
always_24x7 = false
gpu_experts = false
response_time_h = 2
"""
    import tomllib

    return parse_vendors(tomllib.loads(text), "v.toml", tmp_path).providers


JOB = ReferenceJob(hours=10.0, gpus=1)


def test_missing_evidence_is_missing_and_the_total_is_renormalised(tmp_path: Path) -> None:
    providers = _providers(tmp_path, with_network=False)
    weights, _ = resolve_weights(None, strict=True)
    card = score_vendors(providers, weights, JOB)  # type: ignore[arg-type]
    b = next(v for v in card.vendors if v.name == "B")
    assert b.score("network") is None
    assert b.missing == ("network",)
    present = {c.criterion: c.score for c in b.criteria if c.score is not None}
    w = dict(weights)
    expected = sum(w[c] * s for c, s in present.items()) / sum(w[c] for c in present)
    assert b.total == pytest.approx(expected)
    assert b.weight_covered == pytest.approx(0.75)
    assert sum(c.points or 0.0 for c in b.contributions) == pytest.approx(b.total)
    assert next(c for c in b.contributions if c.criterion == "network").points is None


def test_what_if_says_where_a_missing_score_of_0_or_100_would_rank(tmp_path: Path) -> None:
    providers = _providers(tmp_path, with_network=False)
    weights, _ = resolve_weights(None, strict=True)
    card = score_vendors(providers, weights, JOB)  # type: ignore[arg-type]
    (what,) = card.what_if
    assert what.vendor == "B" and what.missing == ("network",)
    a = next(v for v in card.vendors if v.name == "A")
    b = next(v for v in card.vendors if v.name == "B")
    w = dict(weights)
    for fill, rank in ((0.0, what.rank_if_0), (100.0, what.rank_if_100)):
        filled = {c.criterion: (fill if c.score is None else c.score) for c in b.criteria}
        total = weighted_total(filled, w)[0]
        assert rank == (1 if total > a.total else 2)
    assert what.rank_if_0 == 2  # a 0 for network sinks B below A
    assert what.rank_if_100 == 1


def test_with_every_criterion_there_is_nothing_to_ask(tmp_path: Path) -> None:
    providers = _providers(tmp_path, with_network=True)
    weights, _ = resolve_weights(None, strict=True)
    card = score_vendors(providers, weights, JOB)  # type: ignore[arg-type]
    assert card.what_if == ()
    assert all(v.weight_covered == pytest.approx(1.0) for v in card.vendors)


def test_hardware_compares_with_the_datasheet_and_with_the_best(tmp_path: Path) -> None:
    providers = _providers(tmp_path, with_network=True)
    weights, _ = resolve_weights(None, strict=True)
    card = score_vendors(providers, weights, JOB)  # type: ignore[arg-type]
    a = next(v for v in card.vendors if v.name == "A")
    b = next(v for v in card.vendors if v.name == "B")
    sheet_a = (700 / 989 + 3000 / 3350) / 2  # H100-SXM bf16 989 TFLOP/s, 3350 GB/s
    assert a.score("hardware") == pytest.approx(100 * (sheet_a + 1.0) / 2)
    sheet_b = (600 / 989 + 2500 / 3350) / 2
    best_b = (600 / 700 + 2500 / 3000) / 2
    assert b.score("hardware") == pytest.approx(100 * (sheet_b + best_b) / 2)


def test_reference_job_cost_counts_hidden_costs_from_the_billing_table(tmp_path: Path) -> None:
    import tomllib

    text = """
[[provider]]
name = "A"
catalog = "aws"
gpu_usd_per_hour = 2.0
[provider.hidden_costs]
ip_usd_per_hour = 0.01
"""
    (p,) = parse_vendors(tomllib.loads(text), "v.toml", tmp_path).providers
    job = ReferenceJob(hours=10.0, gpus=4, egress_gb=100.0, storage_gb=730.0, public_ips=2)
    items = {i.item: i for i in job_cost(p, job) or ()}
    assert items["compute"].usd == pytest.approx(2.0 * 4 * 10)
    assert items["egress (internet)"].usd == pytest.approx(100 * 0.09)  # AWS internet egress
    assert "aws.amazon.com" in items["egress (internet)"].source
    assert items["storage"].usd == pytest.approx(730 * 0.08 * 10 / 730)  # gp3 per GB-month
    assert items["public IPs"].usd == pytest.approx(0.01 * 2 * 10)


def test_minimum_billing_from_the_file_bills_a_short_job_up(tmp_path: Path) -> None:
    import tomllib

    text = """
[[provider]]
name = "A"
gpu_usd_per_hour = 3.0
[provider.hidden_costs]
minimum_billing_h = 2
"""
    (p,) = parse_vendors(tomllib.loads(text), "v.toml", tmp_path).providers
    items = job_cost(p, ReferenceJob(hours=0.5, gpus=1)) or ()
    assert items[0].usd == pytest.approx(3.0 * 2)
    assert math.isclose(sum(i.usd for i in items), 6.0)


def test_a_gpu_only_one_provider_ran_is_judged_by_the_datasheet_alone(tmp_path: Path) -> None:
    import tomllib

    write_bench(tmp_path / "a.json", matmul=700.0, membw=3000.0)
    text = '[[provider]]\nname = "A"\nbench = { H100 = "a.json" }\n'
    providers = parse_vendors(tomllib.loads(text), "v.toml", tmp_path).providers
    weights, _ = resolve_weights(None, strict=True)
    (a,) = score_vendors(providers, weights, JOB).vendors
    assert a.score("hardware") == pytest.approx(100 * (700 / 989 + 3000 / 3350) / 2)
    assert "no other provider ran these figures" in a.criteria[0].evidence
