"""Spend across machines over real HTTP: machines and their tokens, a fake-GPU monitor pushing to
the running app, the spend against the monitor's own cost meter, series and findings, budgets
whose thresholds call a local webhook receiver once each, and the alert rules."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from gpurent.http import UrllibHttp
from gpurent.monitor.cost import InstancePrice, meter
from gpurent.monitor.fake_nvml import FakeNvml
from gpurent.monitor.probes import HostProbe, NvmlProbe
from gpurent.monitor.push import TOKEN_HEADER, Pusher
from gpurent.monitor.sample import Sample
from gpurent.monitor.scenarios import SCENARIOS
from gpurent.monitor.session import MonitorSession
from gpurent.server import ServerSettings
from tests.server.conftest import TOKEN, _serve

T0 = 1_800_000_000.0  # the fake wall clock's start, Unix seconds
AUTH = {"authorization": f"Bearer {TOKEN}"}


class Clock:
    """A wall clock the test moves (the monitor's samples and the server's `now`)."""

    def __init__(self) -> None:
        self.t = T0

    def __call__(self) -> float:
        return self.t


class Receiver:
    """A webhook receiver on 127.0.0.1: records each POSTed JSON body, answers `status`."""

    def __init__(self, status: int = 200) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.status = status
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                outer.bodies.append(json.loads(self.rfile.read(length)))
                self.send_response(outer.status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook?secret=s3cr3t"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def clock() -> Clock:
    return Clock()


@pytest.fixture(scope="module")
def fleet_url(tmp_path_factory: pytest.TempPathFactory, clock: Clock) -> Iterator[str]:
    """The app with a server token, its own SQLite store and the test's clock."""
    db = tmp_path_factory.mktemp("fleet") / "fleet.db"
    settings = ServerSettings(token=TOKEN, db=str(db))
    yield from _serve(settings, clock=clock, webhook_backoff_s=0.05)


@pytest.fixture()
def admin(fleet_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=fleet_url, headers=AUTH, timeout=30) as client:
        yield client


def _register(admin: httpx.Client, name: str, **fields: Any) -> str:
    reply = admin.post("/api/machines", json={"name": name, **fields})
    assert reply.status_code == 201, reply.text
    token: str = reply.json()["token"]
    return token


def _session(
    clock: Clock, tmp_path: Path, pusher: Pusher, scenario: str = "demo"
) -> MonitorSession:
    session = MonitorSession(
        nvml=NvmlProbe(FakeNvml(SCENARIOS[scenario], clock=clock), clock=clock),
        host=HostProbe(proc_root=tmp_path / "no-proc", clock=clock),
        wall_clock=clock,
        pusher=pusher,
        push_every_s=5.0,
    )
    session.open()
    return session


def _steps(session: MonitorSession, clock: Clock, n: int) -> list[Sample]:
    taken = []
    for _ in range(n):
        taken.append(session.step()[0])
        clock.t += 1.0
    return taken


def test_registering_needs_the_server_token_and_the_token_is_shown_once(
    fleet_url: str, admin: httpx.Client
) -> None:
    body = {"name": "reg-1", "job": "j", "price_usd_per_hour": 4.0}
    refused = httpx.post(f"{fleet_url}/api/machines", json=body, timeout=30)
    assert refused.status_code == 401
    token = _register(admin, **body)
    assert token.startswith("gpm_") and len(token) > 40
    again = admin.post("/api/machines", json=body)
    assert again.status_code == 409 and "reg-1" in again.json()["error"]
    listed = admin.get("/api/machines")
    assert listed.status_code == 200 and token not in listed.text
    assert any(m["name"] == "reg-1" for m in listed.json()["machines"])
    bad = admin.post("/api/machines", json={"name": "has space"})
    assert bad.status_code == 422 and "\n" not in bad.json()["error"]


def test_push_needs_the_machine_token_not_the_server_token(
    fleet_url: str, admin: httpx.Client
) -> None:
    token = _register(admin, "tok-1")
    rows = {"rows": [{"timestamp": T0, "gpu": 0, "gpu_busy_pct": 50.0}]}
    url = f"{fleet_url}/api/monitor/push"
    for headers in ({}, {TOKEN_HEADER: "gpm_wrong"}, AUTH, {TOKEN_HEADER: token[:-1]}):
        reply = httpx.post(url, json=rows, headers=headers, timeout=30)
        assert reply.status_code == 401, headers
        assert token not in reply.text and TOKEN not in reply.text
    ok = httpx.post(url, json=rows, headers={TOKEN_HEADER: token}, timeout=30)
    assert ok.status_code == 200 and ok.json()["rows"] == 1
    other = httpx.post(url, json={**rows, "machine": "reg-1"}, headers={TOKEN_HEADER: token})
    assert other.status_code == 403


@pytest.mark.parametrize(
    ("rows", "says"),
    [
        ([{"timestamp": T0, "bogus": 1}], "unknown column 'bogus'"),
        ([{"gpu": 0}], "timestamp"),
        ([{"timestamp": T0, "power_w": "lots"}], "power_w"),
        ([{"timestamp": T0, "gpu": -1}], "gpu"),
        ([{"timestamp": T0, "gpu": 0, "lost": "yes"}], "lost"),
        ([{"timestamp": T0, "gpu_name": "x" * 500}], "gpu_name"),
        (["not a row"], "rows[0]"),
    ],
)
def test_bad_rows_are_422_one_line(
    fleet_url: str, admin: httpx.Client, rows: list[Any], says: str
) -> None:
    token = _register(admin, f"bad-{abs(hash(says)) % 10**8}")
    reply = httpx.post(
        f"{fleet_url}/api/monitor/push", json={"rows": rows}, headers={TOKEN_HEADER: token}
    )
    assert reply.status_code == 422, reply.text
    message = reply.json()["error"]
    assert says in message and "\n" not in message


def test_a_non_finite_number_and_an_oversized_batch_are_refused(
    fleet_url: str, admin: httpx.Client
) -> None:
    token = _register(admin, "big-1")
    url = f"{fleet_url}/api/monitor/push"
    nan = b'{"rows": [{"timestamp": 1.0, "power_w": NaN}]}'  # Python's json would read it
    reply = httpx.post(url, content=nan, headers={TOKEN_HEADER: token, "content-type": "json"})
    assert reply.status_code == 422 and "power_w" in reply.json()["error"]
    many = {"rows": [{"timestamp": T0 + i} for i in range(2001)]}
    reply = httpx.post(url, json=many, headers={TOKEN_HEADER: token})
    assert reply.status_code == 413 and "2000" in reply.json()["error"]
    huge = {"rows": [{"timestamp": T0, "sources": "x" * 4000} for _ in range(300)]}
    reply = httpx.post(url, json=huge, headers={TOKEN_HEADER: token})  # over 1 MiB
    assert reply.status_code == 413


def test_a_fake_gpu_monitor_pushes_the_series_grows_and_spend_matches_the_meter(
    fleet_url: str, admin: httpx.Client, clock: Clock, tmp_path: Path
) -> None:
    price = 36.0  # USD per hour: 1 cent a second
    token = _register(
        admin,
        "fake-1",
        job="train-x",
        project="lab",
        price_usd_per_hour=price,
        gpu_count=4,
        plan={"hours": 1.0, "cost_usd": 36.0},
    )
    pusher = Pusher(fleet_url, machine="fake-1", token=token, http=UrllibHttp(proxies=False))
    session = _session(clock, tmp_path, pusher)
    taken = _steps(session, clock, 6)  # one push at the first step, the rest buffered
    series = admin.get("/api/monitor/series", params={"machine": "fake-1"}).json()
    first = len(series["gpus"][0]["timestamp_s"])
    assert len(series["gpus"]) == 4 and first >= 1  # the demo scenario has 4
    taken += _steps(session, clock, 24)
    session.close()  # pushes what is left
    assert pusher.pending_samples == 0 and pusher.last_error == ""
    series = admin.get("/api/monitor/series", params={"machine": "fake-1"}).json()
    assert len(series["gpus"][0]["timestamp_s"]) == 30 > first
    gpu0 = series["gpus"][0]
    assert gpu0["timestamp_s"] == [s.timestamp_s for s in taken]
    assert gpu0["power_w"] == [s.gpus[0].power_w for s in taken]

    clock.t = taken[-1].timestamp_s + 1.0
    doc = admin.get("/api/spend").json()
    mine = next(m for m in doc["machines"] if m["machine"] == "fake-1")
    expected = meter(taken, InstancePrice.given(price, 4))
    assert mine["samples"] == 30
    assert math.isclose(mine["spent_usd"], expected.spent_usd, rel_tol=1e-9)
    assert math.isclose(
        mine["idle_wasted_usd"], expected.idle_wasted_usd, rel_tol=1e-9, abs_tol=1e-12
    )
    assert expected.underused_wasted_usd > 0  # the demo scenario under-uses its GPUs
    assert math.isclose(mine["underused_wasted_usd"], expected.underused_wasted_usd, rel_tol=1e-9)
    assert math.isclose(mine["spent_usd"], 0.30, rel_tol=1e-9)  # 30 samples x 1 s x 1 cent
    assert math.isclose(mine["burn_usd_per_hour"], price, rel_tol=1e-6)
    remaining_h = 1.0 - 30 / 3600
    assert math.isclose(mine["projected_cost_usd"], 0.30 + remaining_h * price, rel_tol=1e-6)
    job = next(j for j in doc["jobs"] if j["name"] == "train-x")
    assert job["machines"] == ["fake-1"] and math.isclose(job["spent_usd"], 0.30, rel_tol=1e-9)

    found = admin.get("/api/monitor/findings", params={"machine": "fake-1"}).json()
    diagnosis = session.diagnosis()
    assert found["diagnosis"]["samples"] == diagnosis.samples == 30
    assert [f["kind"] for f in found["diagnosis"]["findings"]] == [
        f.kind.value for f in diagnosis.findings
    ]
    missing = admin.get("/api/monitor/findings", params={"machine": "fake-9"})
    assert missing.status_code == 404 and "fake-1" in missing.json()["error"]


def test_spend_read_between_pushes_equals_the_meter_over_every_sample(
    fleet_url: str, admin: httpx.Client, clock: Clock, tmp_path: Path
) -> None:
    """/api/spend meters each machine's history incrementally (only the rows stored since the
    last read): after several reads between pushes it still equals one meter over all samples."""
    price = 7.2
    token = _register(admin, "incr-1", price_usd_per_hour=price, gpu_count=4)
    pusher = Pusher(fleet_url, machine="incr-1", token=token, http=UrllibHttp(proxies=False))
    session = _session(clock, tmp_path, pusher)
    taken: list[Sample] = []
    for _ in range(4):
        taken += _steps(session, clock, 5)
        pusher.flush()
        clock.t = taken[-1].timestamp_s + 1.0
        doc = admin.get("/api/spend").json()
        mine = next(m for m in doc["machines"] if m["machine"] == "incr-1")
        expected = meter(taken, InstancePrice.given(price, 4))
        assert mine["samples"] == len(taken)
        assert math.isclose(mine["spent_usd"], expected.spent_usd, rel_tol=1e-9)
        assert math.isclose(
            mine["underused_wasted_usd"], expected.underused_wasted_usd, rel_tol=1e-9
        )
    session.close()


def test_a_push_that_fails_keeps_the_rows_and_the_loop_goes_on(
    fleet_url: str, admin: httpx.Client, clock: Clock, tmp_path: Path
) -> None:
    token = _register(admin, "flaky-1", price_usd_per_hour=3.6)
    down = Pusher("http://127.0.0.1:9", machine="flaky-1", token=token, timeout_s=2.0)
    session = _session(clock, tmp_path, down)
    _steps(session, clock, 12)
    notes = [n for n in session.state.notes if "push to" in n]
    assert len(notes) == 1 and token not in notes[0]  # noted once, the token never shown
    assert down.pending_samples == 12
    down.url = f"{fleet_url}/api/monitor/push"  # the server is back
    assert down.flush() is None and down.pending_samples == 0 and down.sent_rows == 12 * 4


def _wait(predicate: Any, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_budget_thresholds_fire_one_webhook_each(
    fleet_url: str, admin: httpx.Client, clock: Clock, tmp_path: Path
) -> None:
    receiver = Receiver()
    failing = Receiver(status=500)
    try:
        token = _register(admin, "budget-1", job="fine-tune", price_usd_per_hour=36.0)
        made = admin.post(
            "/api/budgets",
            json={
                "scope": "job",
                "name": "fine-tune",
                "limit_usd": 1.0,
                "thresholds": [0.5, 0.8, 1.0],
                "webhook_url": receiver.url,
            },
        )
        assert made.status_code == 201, made.text
        assert made.json()["state"] == "ok" and receiver.url not in made.text
        again = admin.post(
            "/api/budgets", json={"scope": "job", "name": "fine-tune", "limit_usd": 2}
        )
        assert again.status_code == 409
        pusher = Pusher(fleet_url, machine="budget-1", token=token, http=UrllibHttp(proxies=False))
        session = _session(clock, tmp_path, pusher, scenario="busy")
        _steps(session, clock, 150)  # 1.5 USD at a cent a second, in 30 pushes
        session.close()
        _wait(lambda: len(receiver.bodies) >= 3)
        time.sleep(0.3)  # a fourth would have come by now
        assert [b["threshold"] for b in receiver.bodies] == [0.5, 0.8, 1.0]
        for body in receiver.bodies:
            assert body["budget"] == {"scope": "job", "name": "fine-tune"}
            assert body["limit_usd"] == 1.0 and body["spend_usd"] >= body["threshold"] * 1.0
        budgets = admin.get("/api/budgets").json()["budgets"]
        mine = next(b for b in budgets if b["name"] == "fine-tune")
        assert mine["state"] == "exceeded" and mine["spend_usd"] >= 1.0
        _wait(lambda: all(a["webhook_state"] for a in _alerts(admin, "fine-tune")))
        assert [a["webhook_state"] for a in _alerts(admin, "fine-tune")] == ["sent HTTP 200"] * 3

        # a webhook that fails: recorded, retried 3 times, and the push still answers 200
        failing_budget = {"scope": "project", "name": "p-fail", "limit_usd": 0.5}
        made = admin.post(
            "/api/budgets", json={**failing_budget, "thresholds": [1.0], "webhook_url": failing.url}
        )
        assert made.status_code == 201, made.text
        token2 = _register(admin, "budget-2", project="p-fail", price_usd_per_hour=360.0)
        rows = [{"timestamp": clock.t + i, "gpu": 0, "gpu_busy_pct": 90.0} for i in range(10)]
        reply = httpx.post(
            f"{fleet_url}/api/monitor/push", json={"rows": rows}, headers={TOKEN_HEADER: token2}
        )
        assert reply.status_code == 200 and [a["threshold"] for a in reply.json()["alerts"]] == [
            1.0
        ]
        _wait(lambda: all(a["webhook_state"] for a in _alerts(admin, "p-fail")))
        (alert,) = _alerts(admin, "p-fail")
        assert alert["webhook_state"] == "failed: HTTP 500" and alert["webhook_attempts"] == 3
        assert len(failing.bodies) == 3
    finally:
        receiver.close()
        failing.close()


def _alerts(admin: httpx.Client, name: str) -> list[dict[str, Any]]:
    budgets = admin.get("/api/budgets").json()["budgets"]
    alerts: list[dict[str, Any]] = next(b for b in budgets if b["name"] == name)["alerts"]
    return alerts


def test_bad_budgets_are_422(admin: httpx.Client) -> None:
    for body, says in (
        ({"scope": "team", "name": "x", "limit_usd": 1}, "scope"),
        ({"scope": "job", "name": "x", "limit_usd": -1}, "limit_usd"),
        ({"scope": "job", "name": "x", "limit_usd": 1, "thresholds": [0]}, "thresholds"),
        ({"scope": "job", "name": "x", "limit_usd": 1, "webhook_url": "file:///etc"}, "webhook"),
    ):
        reply = admin.post("/api/budgets", json=body)
        assert reply.status_code == 422 and says in reply.json()["error"], reply.text


def test_the_alert_rules_are_valid_prometheus_rules(admin: httpx.Client, tmp_path: Path) -> None:
    import yaml

    admin.post("/api/budgets", json={"scope": "project", "name": "rules-p", "limit_usd": 200})
    reply = admin.get("/api/budgets/rules")
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("application/yaml")
    doc = yaml.safe_load(reply.text)
    rules = [r for r in doc["groups"][0]["rules"] if r["labels"]["gpurent_budget"] == "rules-p"]
    assert [r["expr"] for r in rules] == [
        f'sum(gpurent_cost_spent_usd{{gpurent_project="rules-p"}}) >= {v}' for v in (100, 160, 200)
    ]
    promtool = shutil.which("promtool")
    if promtool is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("promtool is missing in CI: .ci/promtool-up.sh installs it")
        pytest.skip("promtool (Debian's prometheus package) is not installed")
    path = tmp_path / "rules.yml"
    path.write_text(reply.text)
    check = subprocess.run(
        [promtool, "check", "rules", str(path)], check=False, capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
    # and they fire as meant: a monitor's spend climbing 20 USD a minute against the 200 USD
    # budget is over 50% from minute 5 (firing a minute later), over 80% only from minute 8
    labels = {"severity": "warning", "gpurent_scope": "project", "gpurent_budget": "rules-p"}
    summary = "project rules-p spent {} USD, over {} of its 200 USD budget"
    unit = {
        "rule_files": [path.name],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    {
                        "series": 'gpurent_cost_spent_usd{gpurent_project="rules-p",machine="m1"}',
                        "values": "0+20x20",
                    },
                    {  # another project's machine counts for nothing here
                        "series": 'gpurent_cost_spent_usd{gpurent_project="other",machine="m2"}',
                        "values": "1000+0x20",
                    },
                ],
                "alert_rule_test": [
                    {"eval_time": "5m", "alertname": "GpurentBudgetThreshold", "exp_alerts": []},
                    {
                        "eval_time": "8m",
                        "alertname": "GpurentBudgetThreshold",
                        "exp_alerts": [
                            {
                                "exp_labels": {**labels, "threshold": "0.5"},
                                "exp_annotations": {"summary": summary.format("160.00", "50%")},
                            }
                        ],
                    },
                ],
            }
        ],
    }
    (tmp_path / "unit.yml").write_text(yaml.safe_dump(unit))
    tested = subprocess.run(
        [promtool, "test", "rules", str(tmp_path / "unit.yml")],
        check=False,
        capture_output=True,
        text=True,
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_after_a_restart_budgets_count_the_stored_spend_once(tmp_path: Path) -> None:
    """A second server on the same store picks up the spend pushed to the first (no more, no
    less): 30 s before the restart and 10 s after, at a cent a second, is 0.40 USD."""
    db = str(tmp_path / "restart.db")
    clock = Clock()
    rows = [{"timestamp": T0 + i, "gpu": 0, "gpu_busy_pct": 90.0} for i in range(40)]
    first = _serve(ServerSettings(db=db), clock=clock)
    url = next(first)
    token = httpx.post(
        f"{url}/api/machines", json={"name": "r-1", "job": "r-job", "price_usd_per_hour": 36.0}
    ).json()["token"]
    push = f"{url}/api/monitor/push"
    assert httpx.post(push, json={"rows": rows[:30]}, headers={TOKEN_HEADER: token}).is_success
    first.close()  # stops the server

    second = _serve(ServerSettings(db=db), clock=clock)
    url = next(second)
    try:
        budget = {"scope": "job", "name": "r-job", "limit_usd": 0.5, "thresholds": [0.5, 1.0]}
        assert httpx.post(f"{url}/api/budgets", json=budget).status_code == 201
        reply = httpx.post(
            f"{url}/api/monitor/push", json={"rows": rows[30:]}, headers={TOKEN_HEADER: token}
        )
        assert reply.status_code == 200
        (alert,) = reply.json()["alerts"]
        assert alert["threshold"] == 0.5 and math.isclose(alert["spend_usd"], 0.40, rel_tol=1e-6)
    finally:
        second.close()
