"""Real Chromium (Debian's /usr/bin/chromium, never a downloaded browser) driven by Playwright
against a real uvicorn on 127.0.0.1. Without Chromium or Playwright the tests skip with the
reason; under CI=true (.ci/run installs Chromium first, .ci/browser-up.sh) they fail instead.
Each test saves a screenshot of its page under test-artifacts/screenshots/ (git-ignored)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"


def _missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (the dev extra)"
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        return "the server extra is not installed"
    if not os.access(CHROMIUM, os.X_OK):
        return f"no Chromium at {CHROMIUM} (.ci/browser-up.sh installs Debian's)"
    return None


def _require() -> None:
    reason = _missing()
    if reason is None:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"browser tests cannot run under CI=true: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser_context() -> Iterator[Any]:
    """One Chromium for the session, with a fresh user-data dir; a new page per test."""
    _require()
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="gpurent-chromium-")
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=ARGS,
            viewport={"width": 1280, "height": 900},
        )
        context.set_default_timeout(20_000)
        try:
            yield context
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def app_url() -> Iterator[str]:
    """The app with the default settings on a free loopback port."""
    _require()
    from gpurent.server import ServerSettings
    from tests.server.conftest import _serve

    yield from _serve(ServerSettings())


class Page:
    """A Playwright page plus the console errors and page errors it saw (a CSP violation is a
    console error)."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def screenshot(self, name: str) -> Path:
        """A full-page PNG under test-artifacts/screenshots/; its path is printed."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        print(f"screenshot: {path}")
        return path


@pytest.fixture()
def page(browser_context: Any) -> Iterator[Page]:
    tab = browser_context.new_page()
    try:
        yield Page(tab)
    finally:
        tab.close()
