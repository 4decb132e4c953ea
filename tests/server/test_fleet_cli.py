"""`gpurent monitor --push` and `gpurent serve --db/--demo` through the real CLI, against the
running app over HTTP; the exporter's cost labels the budget rules select on."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from gpurent.monitor.cost import InstancePrice, meter
from gpurent.monitor.exporter import render_metrics
from gpurent.monitor.sample import GpuSample, Sample
from gpurent.server import ServerSettings
from tests.conftest import run_cli
from tests.server.conftest import _serve, free_port


@pytest.fixture(scope="module")
def open_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app without a server token, on its own store."""
    db = tmp_path_factory.mktemp("fleet-cli") / "fleet.db"
    yield from _serve(ServerSettings(db=str(db)))


def test_monitor_push_sends_the_fake_gpus_samples(
    open_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    reply = httpx.post(f"{open_url}/api/machines", json={"name": "cli-1", "job": "cli-job"})
    token = reply.json()["token"]
    monkeypatch.setenv("GPURENT_PUSH_TOKEN", token)
    args = ("monitor", "--fake-gpus", "busy", "--duration", "2", "--interval", "0.5", "--json")
    code, out, err = run_cli(*args, "--push", open_url, "--machine", "cli-1")
    assert code == 0, err
    assert token not in out + err
    series = httpx.get(f"{open_url}/api/monitor/series", params={"machine": "cli-1"}).json()
    assert len(series["gpus"]) >= 1 and len(series["gpus"][0]["timestamp_s"]) >= 4


def test_monitor_push_without_a_token_or_with_a_bad_url_is_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GPURENT_PUSH_TOKEN", raising=False)
    for extra, says in (
        (["--push", "http://127.0.0.1:9"], "GPURENT_PUSH_TOKEN"),
        (["--push", "ftp://x", "--push-token", "t"], "http(s)"),
        (["--push", "http://127.0.0.1:9", "--push-token", "t", "--machine", "a b"], "--machine"),
    ):
        code, _, err = run_cli("monitor", "--fake-gpus", "busy", "--duration", "1", *extra)
        assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err


def test_a_wrong_push_token_is_a_note_and_the_monitor_goes_on(
    open_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPURENT_PUSH_TOKEN", "gpm_not-a-real-token")
    args = ("monitor", "--fake-gpus", "busy", "--duration", "1", "--interval", "0.5", "--json")
    code, out, err = run_cli(*args, "--push", open_url)
    assert code == 0, err
    assert "HTTP 401" in err and "gpm_not-a-real-token" not in err
    assert '"samples": 3' in out


def test_the_exporter_labels_its_cost_metrics_for_the_budget_rules() -> None:
    samples = [
        Sample(timestamp_s=t, gpus=(GpuSample(index=0, sm_util_pct=50.0),)) for t in (0.0, 1.0)
    ]
    cost = meter(samples, InstancePrice.given(3.6))
    labels = (("machine", "m1"), ("gpurent_job", "train"), ("gpurent_project", "lab"))
    text = render_metrics(samples[-1], hostname="h", cost=cost, cost_labels=labels)
    line = next(x for x in text.splitlines() if x.startswith("gpurent_cost_spent_usd{"))
    assert 'gpurent_job="train"' in line and 'machine="m1"' in line
    assert line.endswith(" 0.002")  # 2 s at 0.001 USD/s
    plain = render_metrics(samples[-1], hostname="h", cost=cost)
    assert "gpurent_cost_spent_usd 0.002" in plain  # unchanged without labels


def _env(tmp_path: Path) -> dict[str, str]:
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {k: v for k, v in os.environ.items() if k != "GPURENT_SERVE_TOKEN"}
    return {**env, "PYTHONPATH": src, "GPURENT_HOME": str(tmp_path / "home")}


def test_serve_demo_shows_live_spend_over_http(tmp_path: Path) -> None:
    port = free_port()
    db = tmp_path / "demo.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpurent", "serve", "--demo", "--port", str(port), "--db", str(db)],
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        seen: list[int] = []
        spent: list[float] = []
        while len(seen) < 2 or seen[-1] <= seen[0]:
            assert proc.poll() is None, proc.communicate()[0]
            assert time.monotonic() < deadline, f"no live demo spend within 60 s: {seen}"
            try:
                doc = httpx.get(f"{url}/api/spend", timeout=5).json()
            except httpx.TransportError:
                time.sleep(0.2)
                continue
            demo = [m for m in doc["machines"] if m["machine"] == "demo"]
            if demo and demo[0]["samples"] > 0:
                seen.append(demo[0]["samples"])
                spent.append(demo[0]["spent_usd"])
            time.sleep(0.5)
        assert spent[-1] > spent[0] >= 0.0
        budgets = httpx.get(f"{url}/api/budgets", timeout=5).json()["budgets"]
        assert [(b["scope"], b["name"]) for b in budgets] == [("job", "demo")]
        found = httpx.get(f"{url}/api/monitor/findings", params={"machine": "demo"}, timeout=5)
        assert found.status_code == 200 and found.json()["diagnosis"]["samples"] >= 2
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
    assert db.is_file() and "gpm_" not in out  # the demo's token is never logged


def test_serve_with_a_store_that_cannot_open_is_one_line(tmp_path: Path) -> None:
    code, _, err = run_cli("serve", "--port", "0", "--db", "nosuchdb://x")
    assert code == 2 and "nosuchdb" in err and len(err.strip().splitlines()) == 1, err
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    code, _, err = run_cli("serve", "--port", "0", "--db", str(blocked / "serve.db"))
    assert code == 1 and "cannot open the store" in err, err


def test_monitor_job_labels_reach_the_exporters_cost_metrics(tmp_path: Path) -> None:
    args = ["--fake-gpus", "busy", "--exporter", "--port", "0", "--price-usd-per-hour", "3.6"]
    labels = ["--job", "ft-1", "--project", "lab", "--machine", "m-1"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpurent", "monitor", *args, *labels, "--duration", "20", "--json"],
        env=_env(tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = ""
        while "/metrics" not in line:
            line = proc.stderr.readline()
            assert line, "the exporter did not start"
        url = next(w for w in line.split() if w.startswith("http://"))
        deadline = time.monotonic() + 15
        while True:
            text = httpx.get(url, timeout=5).text
            spent = [x for x in text.splitlines() if x.startswith("gpurent_cost_spent_usd{")]
            if spent or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert spent, text[-500:]
        assert 'gpurent_job="ft-1"' in spent[0] and 'gpurent_project="lab"' in spent[0]
        assert 'machine="m-1"' in spent[0]
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
