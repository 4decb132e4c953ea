from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpurent.catalog import bundled_offers
from gpurent.errors import InputError, NotFoundError
from gpurent.monitor.cost import InstancePrice, meter, price_from_catalog
from gpurent.monitor.idle import IdleWatcher
from gpurent.monitor.rules import FindingKind, Severity, Thresholds, diagnose
from gpurent.monitor.sample import GpuSample, HostSample, Sample
from gpurent.monitor.scenarios import SCENARIOS

from .conftest import Clock, run_probe


def window(n: int = 10, host: HostSample | None = None, **gpu: object) -> list[Sample]:
    return [
        Sample(
            timestamp_s=float(i),
            host=host or HostSample(),
            gpus=(GpuSample(index=0, **gpu),),  # type: ignore[arg-type]
        )
        for i in range(n)
    ]


def kinds(samples: list[Sample], t: Thresholds | None = None) -> set[FindingKind]:
    return {f.kind for f in diagnose(samples, t).findings}


def test_scenarios_through_probe_give_expected_findings(clock: Clock) -> None:
    expected = {
        "busy": set(),
        "idle": {FindingKind.IDLE},
        "throttled": {FindingKind.THERMAL_THROTTLED},
        "pcie-downtrained": {FindingKind.PCIE_DEGRADED},
        "ampere": {FindingKind.BUSY_ONLY},
        "lost": {FindingKind.GPU_LOST, FindingKind.XID},
    }
    for name, want in expected.items():
        samples, _ = run_probe(SCENARIOS[name], clock, steps=6)
        assert kinds(samples) == want, name


def test_starved_gpu_with_busy_cpu_is_input_bound() -> None:
    host = HostSample(cpu_util_pct=95.0, disk_util_pct=20.0)
    found = diagnose(window(host=host, sm_util_pct=20.0, gpu_busy_pct=100.0)).findings
    assert found[0].kind is FindingKind.INPUT_BOUND
    assert any("CPU 95%" in e for e in found[0].evidence)
    # the same GPU with a quiet host is just under-used
    assert kinds(window(host=HostSample(cpu_util_pct=10.0), sm_util_pct=20.0)) == {
        FindingKind.UNDERUSED
    }
    # a runtime data-wait signal alone is enough
    assert FindingKind.INPUT_BOUND in kinds(
        window(host=HostSample(data_wait_pct=40.0), sm_util_pct=30.0)
    )


def test_memory_bound_and_disk_busy() -> None:
    assert kinds(window(sm_util_pct=50.0, dram_bw_util_pct=90.0)) == {FindingKind.MEMORY_BOUND}
    busy_disk = HostSample(disk_util_pct=80.0)
    assert {FindingKind.DISK_BUSY, FindingKind.INPUT_BOUND} <= kinds(
        window(host=busy_disk, sm_util_pct=40.0)
    )


def test_health_findings() -> None:
    ecc = diagnose(window(sm_util_pct=90.0, ecc_uncorrected=2)).findings
    assert ecc[0].kind is FindingKind.ECC and ecc[0].severity is Severity.CRITICAL
    app = diagnose(window(sm_util_pct=90.0, xids=(13,))).findings
    assert app[0].kind is FindingKind.XID and app[0].severity is Severity.WARNING
    power = kinds(window(sm_util_pct=90.0, throttle_reasons=0x4))
    assert power == {FindingKind.POWER_THROTTLED}
    # a link downtrained at idle is normal (power saving), not a finding
    assert kinds(window(gpu_busy_pct=0.0, pcie_gen=1, pcie_gen_max=5)) == {FindingKind.IDLE}


def test_unbalanced_gpus_and_configurable_thresholds() -> None:
    samples = [
        Sample(
            timestamp_s=float(i),
            gpus=(GpuSample(index=0, sm_util_pct=95.0), GpuSample(index=1, sm_util_pct=60.0)),
        )
        for i in range(5)
    ]
    assert FindingKind.UNBALANCED in kinds(samples)
    relaxed = Thresholds(imbalance_spread_pct=50.0, sm_util_low_pct=50.0)
    assert kinds(samples, relaxed) == set()


def test_cost_meter_math() -> None:
    price = InstancePrice.given(8.0, gpu_count=2)
    samples = [
        Sample(
            timestamp_s=i * 60.0,
            gpus=(GpuSample(index=0, sm_util_pct=0.0), GpuSample(index=1, sm_util_pct=75.0)),
        )
        for i in range(30)
    ]
    report = meter(samples, price)
    assert report.elapsed_s == 1800.0
    assert report.spent_usd == pytest.approx(4.0)  # half an hour at $8/h
    assert report.idle_wasted_usd == pytest.approx(2.0)  # GPU 0: its full half
    assert report.underused_wasted_usd == pytest.approx(0.5)  # GPU 1: 25% of $2
    assert report.projected_monthly_usd == pytest.approx(8.0 * 730)


@given(
    st.lists(st.floats(0, 100), min_size=1, max_size=30),
    st.floats(0.01, 200),
)
def test_waste_never_exceeds_spend(activities: list[float], price_per_h: float) -> None:
    samples = [
        Sample(timestamp_s=float(i), gpus=(GpuSample(index=0, sm_util_pct=a),))
        for i, a in enumerate(activities)
    ]
    r = meter(samples, InstancePrice.given(price_per_h, gpu_count=1))
    assert 0 <= r.idle_wasted_usd + r.underused_wasted_usd <= r.spent_usd * (1 + 1e-9) + 1e-12


def test_price_from_catalog_and_errors() -> None:
    offers = bundled_offers()
    some = next(o for o in offers if o.price_usd_per_hour)
    price = price_from_catalog(offers, some.instance_type.upper(), provider=some.provider)
    assert price.gpu_count == some.gpu_count and price.price_usd_per_hour > 0
    with pytest.raises(NotFoundError):
        price_from_catalog(offers, "p9.mega")
    with pytest.raises(InputError):
        InstancePrice.given(-1.0)


def test_idle_action_fires_once_after_n_minutes() -> None:
    ran: list[str] = []
    watcher = IdleWatcher("touch stopped", 2.0, runner=lambda c: ran.append(c) or 0)
    idle = GpuSample(index=0, sm_util_pct=0.0)
    busy = dataclasses.replace(idle, sm_util_pct=90.0)
    events = [watcher.observe(Sample(timestamp_s=t * 30.0, gpus=(idle,))) for t in range(6)]
    fired = [e for e in events if e is not None]
    assert len(fired) == 1 and fired[0].fired_at_s == 120.0 and ran == ["touch stopped"]
    assert watcher.observe(Sample(timestamp_s=200.0, gpus=(busy,))) is None
    assert watcher.observe(Sample(timestamp_s=400.0, gpus=(idle,))) is None  # a new stretch


def test_same_problem_on_many_gpus_is_one_finding_naming_them() -> None:
    def node(n_gpus: int) -> list[Sample]:
        return [
            Sample(
                timestamp_s=float(i),
                gpus=tuple(
                    GpuSample(index=g, sm_util_pct=45.0, gpu_busy_pct=90.0, mem_copy_util_pct=40.0)
                    for g in range(n_gpus)
                ),
            )
            for i in range(10)
        ]

    findings = diagnose(node(4)).findings
    under = [f for f in findings if f.kind is FindingKind.UNDERUSED]
    assert len(under) == 1
    assert under[0].gpus == (0, 1, 2, 3)
    assert "GPUs 0-3" in under[0].summary
    # One GPU alone still reads as "GPU 0".
    single = [f for f in diagnose(node(1)).findings if f.kind is FindingKind.UNDERUSED]
    assert len(single) == 1 and "GPU 0" in single[0].summary


def test_findings_carry_their_figures_and_merge_on_the_figures_shown() -> None:
    def node(utils: list[float]) -> list[Sample]:
        return [
            Sample(
                timestamp_s=float(i),
                gpus=tuple(
                    GpuSample(index=g, sm_util_pct=u, gpu_busy_pct=90.0, mem_copy_util_pct=40.0)
                    for g, u in enumerate(utils)
                ),
            )
            for i in range(10)
        ]

    # 45.2 and 44.9 both show as "45%": one finding; 30 shows differently: its own finding.
    under = [
        f for f in diagnose(node([45.2, 44.9, 30.0])).findings if f.kind is FindingKind.UNDERUSED
    ]
    assert [f.gpus for f in under] == [(0, 1), (2,)]
    assert under[0].figure("activity_pct") == pytest.approx(45.2)
    assert under[0].figure("source") == "sm_util_pct"
    assert under[0].summary == "GPUs 0, 1 under-used: sm_util_pct 45%"
    assert under[1].summary == "GPU 2 under-used: sm_util_pct 30%"
    assert under[1].evidence == (
        "mean sm_util_pct 30% (keep > 70%)",
        "memory-copy peak 40% (< 80%)",
    )
    # The text is rendered from the templates, never stored: change a figure, the text follows.
    bumped = dataclasses.replace(
        under[1],
        figures=tuple((k, 31.0 if k == "activity_pct" else v) for k, v in under[1].figures),
    )
    assert bumped.summary == "GPU 2 under-used: sm_util_pct 31%"
    assert under[1].json_view()["summary"] == under[1].summary


def _direct_cost(samples: list[Sample], price: InstancePrice) -> tuple[float, float, float]:
    """The meter's definition written out: each sample held until the next, the last for the
    median of the gaps; (spent, idle waste, under-use waste) in USD."""
    gaps = [b.timestamp_s - a.timestamp_s for a, b in itertools.pairwise(samples)]
    gaps.append(_median(gaps))
    n = price.gpu_count or max(len(s.gpus) for s in samples)
    share = price.price_usd_per_hour / n / 3600.0
    idle = under = 0.0
    for s, dt in zip(samples, gaps, strict=True):
        for g in s.gpus:
            if g.activity_pct is None:
                continue
            if g.activity_pct <= Thresholds().idle_activity_pct:
                idle += share * dt
            else:
                under += share * dt * (1 - g.activity_pct / 100.0)
    return price.price_usd_per_hour * sum(gaps) / 3600.0, idle, under


def _median(xs: list[float]) -> float:
    if not xs:
        return 0.0
    ys = sorted(xs)
    mid = len(ys) // 2
    return ys[mid] if len(ys) % 2 else (ys[mid - 1] + ys[mid]) / 2


@given(
    st.lists(
        st.tuples(st.floats(0.1, 30.0), st.floats(0, 100), st.integers(1, 3)),
        min_size=1,
        max_size=40,
    )
)
def test_running_meter_matches_the_definition_after_every_sample(
    steps: list[tuple[float, float, int]],
) -> None:
    """The session's running meter, read after each sample, equals the meter's definition over
    all samples so far, also when later samples show more GPUs than earlier ones."""
    from gpurent.monitor.cost import CostMeter

    price = InstancePrice.given(6.0)
    m = CostMeter(price)
    samples: list[Sample] = []
    t = 0.0
    for gap, activity, n_gpus in steps:
        t += gap
        samples.append(
            Sample(
                timestamp_s=t,
                gpus=tuple(GpuSample(index=i, sm_util_pct=activity) for i in range(n_gpus)),
            )
        )
        m.add(samples[-1])
        r = m.report()
        spent, idle, under = _direct_cost(samples, price)
        assert r.spent_usd == pytest.approx(spent, abs=1e-12)
        assert r.idle_wasted_usd == pytest.approx(idle, abs=1e-12)
        assert r.underused_wasted_usd == pytest.approx(under, abs=1e-12)
        assert r == meter(samples, price)


def test_session_cost_covers_every_sample_since_the_start(tmp_path: Path, clock: Clock) -> None:
    """The session's meter runs over the whole session (no sample cap), equal to the meter
    over every sample it took."""
    from gpurent.monitor.fake_nvml import FakeNvml
    from gpurent.monitor.probes.nvml import NvmlProbe
    from gpurent.monitor.session import MonitorSession

    from .conftest import host_probe, write_proc

    write_proc(tmp_path, cpu=(1, 2, 3, 4), disk_ms=0, sectors=0, rx=0)
    price = InstancePrice.given(4.0)
    session = MonitorSession(
        nvml=NvmlProbe(FakeNvml(SCENARIOS["idle"], clock=clock), clock=clock),
        host=host_probe(tmp_path, clock),
        price=price,
        wall_clock=clock,
    )
    session.open()
    taken = []
    for _ in range(50):
        taken.append(session.step()[0])
        clock.t += 2.0
    cost = session.cost()
    assert cost is not None and cost == meter(taken, price)
    assert cost.elapsed_s == pytest.approx(100.0)
    assert cost.idle_wasted_usd == pytest.approx(cost.spent_usd)  # the idle scenario
    assert session.state.last_sample is taken[-1]


def _at(t: float, activity: float = 50.0, n_gpus: int = 1) -> Sample:
    return Sample(
        timestamp_s=t, gpus=tuple(GpuSample(index=i, sm_util_pct=activity) for i in range(n_gpus))
    )


def test_meter_edge_cases_one_sample_equal_times_and_a_clock_going_back() -> None:
    from gpurent.monitor.cost import CostMeter

    price = InstancePrice.given(3.6)  # 0.001 USD per second
    empty = CostMeter(price).report()
    assert empty.elapsed_s == 0.0 and empty.spent_usd == 0.0 and empty.gpu_count == 0
    one = meter([_at(100.0)], price)  # no interval known yet: nothing spent, no division by 0
    assert one.elapsed_s == 0.0 and one.spent_usd == 0.0 and one.wasted_share == 0.0
    assert one.activity_source == "sm_util_pct" and one.gpu_count == 1
    same = meter([_at(5.0), _at(5.0), _at(5.0)], price)
    assert same.elapsed_s == 0.0 and same.spent_usd == 0.0
    # a wall clock stepped back (NTP) costs nothing for that interval, never a negative amount
    back = meter([_at(10.0), _at(20.0), _at(15.0), _at(25.0)], price)
    assert back.elapsed_s == pytest.approx(10.0 + 0.0 + 10.0 + 10.0)
    assert back.spent_usd == pytest.approx(0.03)
    assert back.underused_wasted_usd == pytest.approx(0.015)  # 50 % activity


def test_reading_the_meter_changes_nothing() -> None:
    """`report()` is a pure read: reading it between samples, any number of times, gives the
    same totals as reading it once at the end."""
    from gpurent.monitor.cost import CostMeter

    price = InstancePrice.given(7.2)
    read, unread = CostMeter(price), CostMeter(price)
    samples = [_at(0.0, 0.0, 2), _at(2.0, 30.0), _at(3.0, 90.0, 4), _at(7.0, 0.0)]
    for s in samples:
        read.add(s)
        unread.add(s)
        first = read.report()
        assert read.report() == first
    assert read.report() == unread.report() == meter(samples, price)
