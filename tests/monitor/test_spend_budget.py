"""The pure spend and budget cores: burn rate over the window, the projection to the plan's end,
group sums, thresholds that fire once, the budget state and checked values."""

from __future__ import annotations

import math

import pytest

from gpurent.errors import InputError
from gpurent.monitor import budget
from gpurent.monitor.cost import meter
from gpurent.monitor.sample import GpuSample, Sample, to_rows
from gpurent.monitor.spend import (
    MachinePlan,
    SpendTracker,
    cost_samples,
    group_spend,
    machine_spend,
)

PLAN = MachinePlan(name="m", job="j", project="p", price_usd_per_hour=36.0, gpu_count=2)


def _samples(start: float, n: int, activity: float = 50.0) -> list[Sample]:
    return [
        Sample(
            timestamp_s=start + i,
            gpus=(
                GpuSample(index=0, sm_util_pct=activity, power_w=300.0, name="H100"),
                GpuSample(index=1, gpu_busy_pct=0.0, xids=(79,) if i == 3 else ()),
            ),
        )
        for i in range(n)
    ]


def test_burn_rate_is_the_price_while_sending_and_zero_once_the_machine_stops() -> None:
    samples = _samples(0.0, 600)
    live = machine_spend(PLAN, samples, now_s=600.0, window_s=300.0)
    assert math.isclose(live.spent_usd or 0, 6.0) and math.isclose(
        live.burn_usd_per_hour or 0, 36.0
    )
    young = machine_spend(PLAN, samples[:60], now_s=60.0, window_s=300.0)  # 1 minute old
    assert math.isclose(young.burn_usd_per_hour or 0, 36.0)
    stopped = machine_spend(PLAN, samples, now_s=600.0 + 301.0, window_s=300.0)
    assert stopped.burn_usd_per_hour == 0.0 and stopped.spent_usd == live.spent_usd


def test_projection_runs_the_plans_remaining_hours_at_the_burn_rate() -> None:
    plan = MachinePlan(name="m", price_usd_per_hour=36.0, plan_hours=1.0, plan_cost_usd=36.0)
    s = machine_spend(plan, _samples(0.0, 900), now_s=900.0)  # a quarter of the hour done
    assert math.isclose(s.projected_cost_usd or 0, 9.0 + 0.75 * 36.0)
    late = machine_spend(plan, _samples(0.0, 4000), now_s=4000.0)  # past the plan's hours
    assert math.isclose(late.projected_cost_usd or 0, late.spent_usd or 0)
    unpriced = machine_spend(MachinePlan(name="u", plan_hours=1.0), _samples(0.0, 10), now_s=10.0)
    assert unpriced.spent_usd is None and unpriced.projected_cost_usd is None
    assert unpriced.samples == 10 and unpriced.elapsed_s == 9.0


def test_cost_samples_meter_the_same_as_the_full_samples() -> None:
    samples = _samples(100.0, 50, activity=30.0)
    rows = [row for s in samples for row in to_rows(s)]
    price = PLAN.price()
    assert price is not None
    assert meter(cost_samples(reversed(rows)), price) == meter(samples, price)


def test_groups_sum_their_machines_and_the_tracker_matches_the_meter() -> None:
    a = machine_spend(PLAN, _samples(0.0, 100), now_s=100.0)
    b = machine_spend(
        MachinePlan(name="n", job="j", price_usd_per_hour=3.6), _samples(0.0, 100), now_s=100.0
    )
    c = machine_spend(MachinePlan(name="o", job="other"), _samples(0.0, 100), now_s=100.0)
    (job,) = [g for g in group_spend("job", [a, b, c]) if g.name == "j"]
    assert job.machines == ("m", "n")
    assert math.isclose(job.spent_usd, (a.spent_usd or 0) + (b.spent_usd or 0))
    assert job.projected_cost_usd is None  # neither has a plan
    assert [g.name for g in group_spend("project", [a, b, c])] == ["p"]
    tracker = SpendTracker()
    tracker.start(PLAN, _samples(0.0, 40))
    tracker.add("m", _samples(40.0, 60))
    assert math.isclose(tracker.spent_usd(job="j"), a.spent_usd or 0)
    assert tracker.spent_usd(project="p") == tracker.spent_usd(job="j")
    assert tracker.spent_usd(job="other") == 0.0


def test_thresholds_fire_once_each_and_the_state_follows_the_spend() -> None:
    t = (0.5, 0.8, 1.0)
    assert budget.crossed(t, 100.0, 49.9, []) == []
    assert budget.crossed(t, 100.0, 85.0, []) == [0.5, 0.8]
    assert budget.crossed(t, 100.0, 85.0, [0.5, 0.8]) == []
    assert budget.crossed(t, 100.0, 100.0, [0.5, 0.8]) == [1.0]
    assert [budget.state(t, 100.0, x) for x in (10.0, 50.0, 99.0, 100.0)] == [
        "ok",
        "warning",
        "warning",
        "exceeded",
    ]


@pytest.mark.parametrize(
    ("check", "value"),
    [
        (lambda x: budget.check_name(x, "name"), "a b"),
        (lambda x: budget.check_name(x, "name"), 'x"}) or vector(1'),
        (lambda x: budget.check_name(x, "name"), "x" * 129),
        (budget.check_scope, "team"),
        (budget.check_limit, math.nan),
        (budget.check_limit, 0.0),
        (budget.check_thresholds, []),
        (budget.check_thresholds, [0.5, 0.5]),
        (budget.check_thresholds, [math.inf]),
        (budget.check_webhook_url, "file:///etc/passwd"),
        (budget.check_webhook_url, "http://"),
    ],
)
def test_bad_budget_values_are_one_line_input_errors(check: object, value: object) -> None:
    with pytest.raises(InputError) as err:
        check(value)  # type: ignore[operator]
    assert "\n" not in str(err.value)


def test_alert_rules_name_the_scopes_label_and_each_threshold() -> None:
    rules = budget.alert_rules(
        [budget.BudgetRule(scope="job", name="ft-1", limit_usd=1000.0, thresholds=(0.5, 1.0))]
    )
    (group,) = rules["groups"]
    assert [r["expr"] for r in group["rules"]] == [
        'sum(gpurent_cost_spent_usd{gpurent_job="ft-1"}) >= 500',
        'sum(gpurent_cost_spent_usd{gpurent_job="ft-1"}) >= 1000',
    ]
    assert [r["labels"]["severity"] for r in group["rules"]] == ["warning", "critical"]
