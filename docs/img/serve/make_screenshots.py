"""The screenshots of docs/serve.md: each dashboard page in Debian's Chromium (Playwright, no
browser download) against `gpurent serve`'s app on a free loopback port, with a fresh gpurent
home (the bundled catalog, the shipped spot example, examples/vendors.toml, the example bench
result examples/vendors/a-bench-h100.json, which says it is example evidence, and the `--demo`
machine pushing fake-GPU samples for the monitor page). Run by hand:

    PYTHONPATH=src python docs/img/serve/make_screenshots.py

Writes docs/img/serve/*.png (the top 1280 x 1100 px of each page) and prints their sizes; each
must stay under 300 KB.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))
# the browser and its flags as the browser tests launch it (one list for both)
from tests.browser.conftest import ARGS, CHROMIUM  # noqa: E402

MAX_BYTES = 300_000
HEIGHT = 1100
DEMO_S = 40.0
"""Seconds of the `--demo` machine's pushes (1 Hz) before the monitor page's shot."""


def _serve() -> tuple[str, object, threading.Event]:
    """The app on a free loopback port, with the `--demo` machine pushing to it."""
    import uvicorn

    from gpurent.server import ServerSettings, create_app
    from gpurent.server.demo import start_demo

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    app = create_app(ServerSettings())
    config = uvicorn.Config(app, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    while not server.started:
        time.sleep(0.02)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    return url, server, start_demo(app, url)


def main() -> None:
    """Open each page and save its screenshot."""
    from playwright.sync_api import sync_playwright

    home = Path(tempfile.mkdtemp(prefix="gpurent-shots-"))
    os.environ["GPURENT_HOME"] = str(home)
    (home / "bench").mkdir()
    shutil.copy(ROOT / "examples/vendors/a-bench-h100.json", home / "bench/bench-example.json")
    url, server, demo = _serve()
    started = time.monotonic()
    profile = tempfile.mkdtemp(prefix="gpurent-chromium-")
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=ARGS,
            viewport={"width": 1280, "height": HEIGHT},
        )
        page = context.new_page()

        def shot(name: str) -> None:
            path = HERE / f"{name}.png"
            page.screenshot(path=str(path), full_page=False)
            size = path.stat().st_size
            print(f"{path.relative_to(ROOT)}: {size / 1000:.0f} KB")
            assert size < MAX_BYTES, f"{path} is {size} bytes, over {MAX_BYTES}"

        page.goto(f"{url}/plan")
        page.click("#plan-form button[type=submit]")
        page.wait_for_selector("#plan-chart .main-svg")
        shot("plan")
        page.locator("#plan-chart").scroll_into_view_if_needed()
        page.evaluate("window.scrollBy(0, -80)")
        shot("plan-chart")
        page.goto(f"{url}/offers?gpu=H100&pricing=spot")
        shot("offers")
        page.goto(f"{url}/spot")
        page.wait_for_selector("#spot-heatmap .main-svg")
        shot("spot")
        page.goto(f"{url}/bench")
        shot("bench")
        page.goto(f"{url}/vendors")
        page.wait_for_selector("#vendors-sensitivity .main-svg")
        page.locator("#vendors-sensitivity").scroll_into_view_if_needed()
        shot("vendors")
        time.sleep(max(0.0, DEMO_S - (time.monotonic() - started)))  # the demo's samples
        page.goto(f"{url}/monitor?machine=demo")
        page.wait_for_selector("#monitor-activity .main-svg")
        page.wait_for_selector("#monitor-power .main-svg")
        shot("monitor")
        page.evaluate("document.getElementById('findings').scrollIntoView()")
        page.evaluate("window.scrollBy(0, -80)")
        shot("monitor-money")
        context.close()
    demo.set()
    server.should_exit = True  # type: ignore[attr-defined]
    shutil.rmtree(profile, ignore_errors=True)
    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
