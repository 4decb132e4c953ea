"""The inputs of the HTML pages' content tests (monitor windows, a spot price history).

tests/report/golden/*.txt hold the visible text of the pages the string-built renderers made
from these inputs (before the port to Jinja2 templates); the tests check the templates say the
same.
"""

from __future__ import annotations

from dataclasses import replace

from gpurent.monitor.cost import CostReport, InstancePrice, meter
from gpurent.monitor.rules import Diagnosis, Thresholds, diagnose
from gpurent.monitor.sample import HostSample, Sample
from gpurent.monitor.scenarios import SCENARIOS
from gpurent.spot.analytics.history import build_series
from gpurent.spot.history_report import HistoryReport, analyse_history
from gpurent.spot.io.price_io import parse_archive_tsv
from tests.monitor.conftest import Clock, run_probe
from tests.spot.test_history_analytics import _tsv

MONITOR_SCENARIOS = ("busy", "idle", "lost")


def monitor_window(
    scenario: str,
) -> tuple[Diagnosis, CostReport | None, list[Sample], Thresholds]:
    """Five samples of a fake-GPU scenario with host metrics; the idle one priced."""
    samples, _ = run_probe(SCENARIOS[scenario], Clock(), steps=5)
    samples = [
        replace(s, host=HostSample(cpu_util_pct=10.0 + 7 * i, disk_util_pct=50.0 + 9 * i))
        for i, s in enumerate(samples)
    ]
    th = Thresholds()
    cost = meter(samples, InstancePrice.given(98.32), th) if scenario == "idle" else None
    return diagnose(samples, th), cost, samples, th


def spot_history() -> HistoryReport:
    """Three weeks of hourly prices, weekday evenings 10% cheaper."""
    return analyse_history(build_series(parse_archive_tsv(_tsv(21, 0.1), "h.tsv")))
