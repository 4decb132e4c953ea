"""`gpurent serve --demo`: a stand-in GPU machine inside the server process, so a fresh clone
shows live spend. It registers the machine `demo` (job `demo`, project `demo`, a made-up price
and plan) with a $5 budget, and runs a fake-GPU monitor session (the `demo` scenario) in a
thread that pushes to the server over HTTP every second, as `gpurent monitor --push` would."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from gpurent.http import DIRECT_HTTP, Http, HttpError
from gpurent.monitor.cost import InstancePrice
from gpurent.monitor.push import Pusher

DEMO_MACHINE = "demo"
DEMO_PRICE_USD_PER_HOUR = 24.0  # illustrative: 8 GPUs at $3/GPU-hour, not a quote
DEMO_GPUS = 8
DEMO_PLAN_HOURS = 2.0
DEMO_BUDGET_USD = 5.0


def register_demo(fleet: Any) -> str:
    """Register (or re-register) the demo machine and its budget; returns its push token."""
    from gpurent.store.fleet import Machine, add_budget, add_machine

    machine = Machine(
        name=DEMO_MACHINE,
        job=DEMO_MACHINE,
        project=DEMO_MACHINE,
        price_usd_per_hour=DEMO_PRICE_USD_PER_HOUR,
        gpu_count=DEMO_GPUS,
        plan_hours=DEMO_PLAN_HOURS,
        plan_cost_usd=DEMO_PRICE_USD_PER_HOUR * DEMO_PLAN_HOURS,
        created_s=fleet.clock(),
    )
    with fleet.lock, fleet.engine.begin() as conn:
        token = add_machine(conn, machine, replace=True)
        add_budget(
            conn,
            scope="job",
            name=DEMO_MACHINE,
            limit_usd=DEMO_BUDGET_USD,
            thresholds=(0.5, 0.8, 1.0),
            webhook_url="",
            created_s=fleet.clock(),
        )  # None (kept as it was) when it exists
    fleet.forget()
    assert token is not None  # replace=True always gives one
    return token


def _wait_for(url: str, http: Http, stop: threading.Event, timeout_s: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not stop.is_set() and time.monotonic() < deadline:
        try:
            if http.get(f"{url}/api/health", timeout_s=2.0, max_bytes=4096).ok:
                return True
        except HttpError:
            pass
        stop.wait(0.2)
    return False


def run_demo(
    url: str,
    token: str,
    stop: threading.Event,
    *,
    http: Http = DIRECT_HTTP,
    interval_s: float = 1.0,
) -> None:
    """Sample the stand-in GPUs every `interval_s` and push each sample until `stop` is set."""
    from gpurent.monitor.fake_nvml import FakeNvml
    from gpurent.monitor.probes import HostProbe, NvmlProbe
    from gpurent.monitor.scenarios import load_scenario
    from gpurent.monitor.session import MonitorSession

    if not _wait_for(url, http, stop):
        return
    session = MonitorSession(
        nvml=NvmlProbe(FakeNvml(load_scenario("demo"))),
        host=HostProbe(proc_root=Path("/proc")),
        price=InstancePrice.given(DEMO_PRICE_USD_PER_HOUR, DEMO_GPUS),
        pusher=Pusher(url, machine=DEMO_MACHINE, token=token, http=http),
        push_every_s=interval_s / 2,  # every step, whatever the jitter
        hostname=DEMO_MACHINE,
    )
    session.open()
    try:
        while not stop.is_set():
            session.step()
            stop.wait(interval_s)
    finally:
        session.close()


def start_demo(app: Any, url: str) -> threading.Event:
    """Register the demo machine in `app`'s store and start its monitor thread; set the returned
    event to stop it."""
    token = register_demo(app.app.state.fleet)  # app: the Guard around the FastAPI app
    stop = threading.Event()
    threading.Thread(
        target=run_demo, args=(url, token, stop), name="gpurent-demo", daemon=True
    ).start()
    return stop
