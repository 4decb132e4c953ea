"""The monitor page in Chromium, fed by a fake-GPU monitor session pushing to the running app:
the utilisation chart's data grows between two reads (the series moves) and the spend cells
follow; a budget added through the page's form with a webhook at a local receiver fires when
the pushed spend crosses it, and the page shows the fired alert."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from gpurent.http import UrllibHttp
from gpurent.monitor.fake_nvml import FakeNvml
from gpurent.monitor.probes import HostProbe, NvmlProbe
from gpurent.monitor.push import Pusher
from gpurent.monitor.scenarios import SCENARIOS
from gpurent.monitor.session import MonitorSession
from gpurent.report.pages_monitor import series_figure
from tests.browser.conftest import Page
from tests.server.test_fleet_push import Clock, Receiver

MACHINE = "browser-gpu"
JOB = "browser-job"
PRICE_USD_PER_HOUR = 36.0  # a cent a fake second


@pytest.fixture(scope="module")
def clock() -> Clock:
    return Clock()


@pytest.fixture(scope="module")
def monitor_url(tmp_path_factory: pytest.TempPathFactory, clock: Clock) -> Iterator[str]:
    from tests.browser.conftest import _require

    _require()
    from gpurent.server import ServerSettings
    from tests.server.conftest import _serve

    db = tmp_path_factory.mktemp("monitor-page") / "fleet.db"
    yield from _serve(ServerSettings(db=str(db)), clock=clock, webhook_backoff_s=0.05)


class Feeder:
    """A fake-GPU monitor session in a thread: a fake second per step, 20 steps a real
    second, pushing every 5 fake seconds; `pause`/`resume` hold it between steps."""

    def __init__(self, url: str, token: str, clock: Clock, tmp: Path) -> None:
        self.clock = clock
        self.session = MonitorSession(
            nvml=NvmlProbe(FakeNvml(SCENARIOS["busy"], clock=clock), clock=clock),
            host=HostProbe(proc_root=tmp / "no-proc", clock=clock),
            wall_clock=clock,
            pusher=Pusher(url, machine=MACHINE, token=token, http=UrllibHttp(proxies=False)),
            push_every_s=5.0,
        )
        self.session.open()
        self.go = threading.Event()
        self.idle = threading.Event()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.go.set()
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            if not self.go.is_set():
                self.idle.set()
                self.go.wait(0.1)
                continue
            self.idle.clear()
            self.session.step()
            self.clock.t += 1.0
            time.sleep(0.05)

    def pause(self) -> None:
        self.go.clear()
        assert self.idle.wait(5)

    def resume(self) -> None:
        self.go.set()

    def close(self) -> None:
        self.stop.set()
        self.go.set()
        self.thread.join(timeout=5)
        self.session.close()


def _until(check: Callable[[], bool], within_s: float = 15.0) -> None:
    deadline = time.monotonic() + within_s
    while not check():
        assert time.monotonic() < deadline, "not within the deadline"
        time.sleep(0.05)


def _points(page: Page) -> int:
    n: int = page.page.evaluate(
        "() => document.getElementById('monitor-activity').data[0].x.length"
    )
    return n


def test_monitor_page_moves_and_a_budget_alert_reaches_the_webhook(
    monitor_url: str, clock: Clock, page: Page, tmp_path: Path
) -> None:
    api = httpx.Client(base_url=monitor_url, timeout=30)
    receiver = Receiver()
    reply = api.post(
        "/api/machines",
        json={"name": MACHINE, "job": JOB, "price_usd_per_hour": PRICE_USD_PER_HOUR},
    )
    assert reply.status_code == 201, reply.text
    feeder = Feeder(monitor_url, reply.json()["token"], clock, tmp_path)
    try:
        series = f"/api/monitor/series?machine={MACHINE}"
        _until(lambda: bool(api.get(series).json()["gpus"]))
        page.page.goto(f"{monitor_url}/monitor?machine={MACHINE}")
        page.page.wait_for_selector("#monitor-activity .main-svg")
        first = _points(page)
        spent_cell = f'#spend tr[data-machine="{MACHINE}"] td[data-key="spent_usd"]'
        spent_before = page.page.inner_text(spent_cell)
        page.page.wait_for_function(
            "n => document.getElementById('monitor-activity').data[0].x.length > n",
            arg=first,
            timeout=10_000,
        )
        assert _points(page) > first  # the series moves
        page.page.wait_for_function(
            "([sel, text]) => document.querySelector(sel).textContent !== text",
            arg=[spent_cell, spent_before],
            timeout=10_000,
        )
        assert re.fullmatch(r"\$[\d,]+\.\d\d", page.page.inner_text(spent_cell))
        page.screenshot("monitor")

        # a budget the pushed spend will cross, added through the page's form
        feeder.pause()
        # with the store still, the next live redraw is the series reply, as the server drew it
        updated = page.page.get_attribute("#monitor-activity", "data-live-updated")
        page.page.wait_for_function(
            "u => document.getElementById('monitor-activity')"
            ".getAttribute('data-live-updated') !== u",
            arg=updated,
            timeout=10_000,
        )
        drawn = page.page.evaluate(
            """() => document.getElementById('monitor-activity').data.map(t => ({
                name: t.name, x: t.x, y: t.y}))"""
        )
        reply = api.get(series).json()
        expected = series_figure(reply, "activity_pct", "GPU utilisation (%)")["data"]
        assert drawn == [{k: t[k] for k in ("name", "x", "y")} for t in expected]
        spent = next(m for m in api.get("/api/spend").json()["machines"] if m["machine"] == MACHINE)
        limit = round(spent["spent_usd"] + 0.3, 2)
        page.page.select_option("#budget-form select[name=scope]", "job")
        page.page.fill("#budget-form input[name=name]", JOB)
        page.page.fill("#budget-form input[name=limit_usd]", f"{limit}")
        page.page.fill("#budget-form input[name=thresholds]", "1")
        page.page.fill("#budget-form input[name=webhook_url]", receiver.url)
        page.page.click("#budget-form button[type=submit]")
        page.page.wait_for_url(f"**/monitor?machine={MACHINE}")
        row = page.page.locator(f'#budgets tr[data-budget="job:{JOB}"]')
        assert "ok" in row.inner_text() and "none" in row.inner_text()
        assert receiver.bodies == []
        feeder.resume()
        _until(lambda: len(receiver.bodies) >= 1)
        (body,) = receiver.bodies
        assert body["budget"] == {"scope": "job", "name": JOB} and body["limit_usd"] == limit
        assert body["spend_usd"] >= limit

        def sent() -> bool:
            budgets = api.get("/api/budgets").json()["budgets"]
            mine = next(b for b in budgets if b["name"] == JOB)
            return bool(mine["alerts"]) and bool(mine["alerts"][0]["webhook_state"])

        _until(sent)
        page.page.reload()
        row = page.page.locator(f'#budgets tr[data-budget="job:{JOB}"]')
        alert = row.locator("ul.alerts li").all_inner_texts()
        assert len(alert) == 1 and "webhook: sent HTTP 200" in alert[0]
        assert f"${limit:,.2f}" in alert[0]
        assert "exceeded" in row.inner_text()
        page.page.locator("#budgets").scroll_into_view_if_needed()
        page.screenshot("monitor-budget-alert")
        assert page.errors == []
    finally:
        feeder.close()
        receiver.close()
        api.close()
