"""`plan.serving.plan_serving` through its public API: the fleet meets the SLOs it claims,
and cost moves the right way with the rate and the SLOs (issue 19)."""

from __future__ import annotations

import dataclasses
import math

import pytest

from gpurent.catalog import get_gpu
from gpurent.catalog.offer import Offer
from gpurent.estimate.serving import max_load_meeting_slo, operating_point
from gpurent.plan.serving import (
    HOURS_PER_MONTH,
    ServeOptions,
    TrafficProfile,
    plan_serving,
    profile_from_shares,
    replicas_for,
    spot_replicas,
)
from gpurent.workload.presets import serving_preset
from gpurent.workload.serving import ServingSlo


def _offer(name: str, gpu: str, count: int, price: float, spot: float | None = None) -> Offer:
    spec = get_gpu(gpu)
    return Offer(
        provider="testcloud",
        instance_type=name,
        region="r1",
        gpu_name=spec.name,
        gpu_count=count,
        gpu_memory_gib=spec.memory_gib,
        vcpus=None,
        memory_gib=None,
        price_usd_per_hour=price,
        spot_price_usd_per_hour=spot,
        as_of="2026-11-01",
        source="test fixture",
    )


OFFERS = (
    _offer("h100x1", "H100", 1, 3.0, 1.2),
    _offer("h100x8", "H100", 8, 24.0, 9.0),
    _offer("l4x1", "L4", 1, 0.8, 0.3),
    _offer("l4x4", "L4", 4, 3.2, 1.2),
    _offer("a100x2", "A100-SXM4-80GB", 2, 3.6),
)
CHAT = serving_preset("llama3-8b-chat")


def _with(rate: float | None = None, **slo: float) -> object:
    wl = CHAT if rate is None else dataclasses.replace(CHAT, request_rate_per_s=rate)
    if slo:
        wl = dataclasses.replace(wl, slo=dataclasses.replace(wl.slo, **slo))
    return wl


def test_every_ranked_fleet_meets_the_slos_at_the_rate():
    plan = plan_serving(CHAT, OFFERS, ServeOptions(top_n=50))
    assert plan.feasible and plan.best is not None
    rate = CHAT.request_rate_per_s
    assert rate is not None
    costs = [c.cost_usd_per_month for c in plan.candidates]
    assert costs == sorted(costs)
    for c in plan.candidates:
        assert c.replicas * c.load_per_replica_per_s.value * (1 - 0.1) >= rate * (1 - 1e-9)
        assert c.replicas_low <= c.replicas <= c.replicas_high
        assert c.cost_low_usd_per_month <= c.cost_usd_per_month <= c.cost_high_usd_per_month
        assert c.instances * c.replicas_per_instance >= c.replicas
        assert math.isclose(c.cost_usd_per_hour, c.instances * c.price_usd_per_hour)
        assert math.isclose(c.cost_usd_per_month, c.cost_usd_per_hour * HOURS_PER_MONTH)
        tokens = rate * CHAT.output.mean * 3600 * HOURS_PER_MONTH
        assert math.isclose(
            c.cost_per_million_output_tokens_usd, c.cost_usd_per_month / tokens * 1e6
        )
        p = operating_point(
            CHAT, get_gpu(c.gpu_name), c.tensor_parallel, request_rate_per_s=rate,
            replicas=c.replicas,
        )  # fmt: skip
        assert p.stable
        assert p.ttft_p99_ms.value <= CHAT.slo.ttft_p99_ms  # type: ignore[operator]
        assert p.tpot_p99_ms.value <= CHAT.slo.tpot_ms  # type: ignore[operator]


def test_more_replicas_never_lower_the_load_met():
    best = plan_serving(CHAT, OFFERS).best
    assert best is not None
    gpu = get_gpu(best.gpu_name)
    loads = [
        max_load_meeting_slo(CHAT, gpu, best.tensor_parallel, replicas=n).request_rate_per_s.value
        for n in (1, 2, 3, 5, 8)
    ]
    assert loads == sorted(loads) and loads[-1] > loads[0]
    ttfts = [
        operating_point(CHAT, gpu, best.tensor_parallel, request_rate_per_s=20, replicas=n)
        for n in (best.replicas, best.replicas + 1, best.replicas + 4)
    ]
    values = [p.ttft_p99_ms.value for p in ttfts]
    assert values == sorted(values, reverse=True)


def test_raising_the_rate_never_lowers_the_cost():
    best_costs = []
    by_config: dict[tuple[str, int, str], list[float]] = {}
    for rate in (0.5, 2.0, 8.0, 20.0, 45.0, 120.0):
        plan = plan_serving(_with(rate), OFFERS, ServeOptions(top_n=100))
        assert plan.best is not None
        best_costs.append(plan.best.cost_usd_per_month)
        for c in plan.candidates:
            by_config.setdefault((c.instance_type, c.tensor_parallel, c.pricing), []).append(
                c.cost_usd_per_month
            )
    assert best_costs == sorted(best_costs) and best_costs[-1] > best_costs[0]
    for costs in by_config.values():
        assert costs == sorted(costs)


def test_a_tighter_slo_never_lowers_the_cost():
    costs = []
    for ttft in (3000.0, 1000.0, 250.0, 100.0):
        plan = plan_serving(_with(ttft_p99_ms=ttft), OFFERS)
        assert plan.best is not None
        costs.append(plan.best.cost_usd_per_month)
    assert costs == sorted(costs) and costs[-1] > costs[0]
    tpots = []
    for tpot in (80.0, 30.0, 15.0):
        best = plan_serving(_with(tpot_ms=tpot), OFFERS).best
        assert best is not None
        tpots.append(best.cost_usd_per_month)
    assert tpots == sorted(tpots)


def test_an_slo_no_configuration_meets_names_the_closest_and_its_miss():
    plan = plan_serving(_with(ttft_p99_ms=5.0), OFFERS)
    assert not plan.feasible and plan.closest is not None
    assert plan.closest.limiting == "ttft_p99_ms" and plan.closest.miss > 1
    line = plan.infeasible_line()
    assert "\n" not in line and "ttft_p99_ms <= 5 ms" in line
    assert f"{plan.closest.miss:.2f}x the target" in line
    assert plan.closest.gpu_name in line


def test_a_model_that_fits_nowhere_says_so():
    big = dataclasses.replace(
        serving_preset("llama3-70b-chat"), weights=CHAT.weights, kv_cache=None
    )
    plan = plan_serving(big, (_offer("l4x1", "L4", 1, 0.8),))
    assert not plan.feasible and plan.closest is not None
    assert plan.closest.limiting == "memory"
    assert "does not fit" in plan.infeasible_line()


def test_pareto_front_is_not_dominated():
    plan = plan_serving(CHAT, OFFERS, ServeOptions(top_n=100))
    front = plan.pareto
    assert front and front[0].cost_usd_per_hour == min(c.cost_usd_per_hour for c in plan.candidates)
    for f in front:
        assert not any(
            c.cost_usd_per_hour < f.cost_usd_per_hour and c.ttft_p99_ms.value < f.ttft_p99_ms.value
            for c in plan.candidates
        )


def test_explanation_names_the_limit_and_the_next_cost():
    plan = plan_serving(CHAT, OFFERS)
    e = plan.explanation
    assert e is not None and plan.best is not None
    assert plan.best.gpu_name in e.headline and "/month" in e.headline
    assert any(plan.best.limiting in line for line in e.why)
    assert "more (+" in e.next_cost


def test_spot_replicas_price_in_the_downtime():
    # 0.2 interruptions/h x 600 s down: q = 120 / 3720, so needed / (1 - q) = needed x 31 / 30
    assert spot_replicas(30, 0.2, 600.0) == 31  # exactly 31: no rounding up
    assert spot_replicas(40, 0.2, 600.0) == 42  # 41.33
    assert spot_replicas(1, 0.2, 600.0) == 2
    assert spot_replicas(7, 0.0, 600.0) == 7
    opts = ServeOptions(spot=True, top_n=100)
    plan = plan_serving(CHAT, OFFERS, opts)
    spot = [c for c in plan.candidates if c.pricing == "spot"]
    assert spot
    for c in spot:
        assert c.spot is not None and c.replicas == spot_replicas(c.spot.replicas_needed, 0.2, 600)
        assert c.replicas > c.spot.replicas_needed
    free = plan_serving(CHAT, OFFERS, dataclasses.replace(opts, spot_interruptions_per_hour=0.0))
    assert all(c.spot is None or c.spot.replicas == c.spot.replicas_needed for c in free.candidates)


def test_headroom_adds_replicas():
    assert replicas_for(20.0, 10.0, 0.0) == 2
    assert replicas_for(20.0, 10.0, 0.1) == 3
    assert replicas_for(0.0, 10.0, 0.1) == 1


def test_traffic_profile_schedule_frees_gpus_at_night():
    shares = [0.01] * 8 + [0.06] * 16  # quiet 00-07
    rates = profile_from_shares(shares, 20.0)
    assert math.isclose(sum(rates) / 24, 20.0)
    profile = TrafficProfile(rates_per_s=rates, source="test")
    plan = plan_serving(CHAT, OFFERS, ServeOptions(profile=profile, top_n=100))
    flat = plan_serving(
        dataclasses.replace(CHAT, request_rate_per_s=max(rates)), OFFERS, ServeOptions(top_n=100)
    )
    best = plan.best
    assert best is not None and best.schedule is not None and flat.best is not None
    sch = best.schedule
    assert [r.hour for r in sch.hours] == list(range(24))
    assert all(r.replicas >= 1 for r in sch.hours)
    night = max(r.replicas for r in sch.hours[:8])
    day = min(r.replicas for r in sch.hours[8:])
    assert night < day
    assert math.isclose(sch.cost_usd_per_day, sum(r.cost_usd for r in sch.hours))
    assert best.cost_usd_per_month <= flat.best.cost_usd_per_month
    assert sch.gpu_hours_free_per_day > 0 and set(sch.free_hours) == set(range(8))
    assert sch.gpu_hours_free_per_day == sum(
        (sch.peak_instances - r.instances) * best.gpus_per_instance for r in sch.hours
    )


def test_slo_fields_are_what_the_plan_reports():
    wl = dataclasses.replace(CHAT, slo=ServingSlo(ttft_p99_ms=800.0))
    plan = plan_serving(wl, OFFERS)
    assert plan.best is not None and plan.best.limiting in ("ttft_p99_ms", "capacity")


@pytest.mark.parametrize("rate", [0.0, -1.0])
def test_a_plan_needs_a_positive_rate(rate):
    from gpurent.errors import GpurentError

    with pytest.raises(GpurentError, match="request rate"):
        plan_serving(_with(rate), OFFERS)


@pytest.mark.parametrize("rate", [3.0, 200.0])
def test_the_search_cut_never_changes_the_rows_shown(rate):
    from gpurent.catalog import bundled_offers

    offers = tuple(bundled_offers())
    wl = _with(rate)
    cut = plan_serving(wl, offers, ServeOptions(top_n=5, spot=True))
    full = plan_serving(wl, offers, ServeOptions(top_n=100_000, spot=True))
    assert cut.configurations < full.configurations

    def shown(plan):
        return [(c.label, round(c.cost_usd_per_month, 6)) for c in plan.top[:5]]

    assert shown(cut) == shown(full)
    assert cut.explanation is not None and full.explanation is not None
    assert cut.explanation.next_cost == full.explanation.next_cost
