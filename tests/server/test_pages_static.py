"""The dashboard's static files: plotly.min.js from the installed plotly package, the app's own
script and styles, long cache headers, and one line naming the extra when plotly is missing."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from importlib import metadata, resources

import httpx


def test_plotly_is_served_from_the_installed_package(api: httpx.Client) -> None:
    reply = api.get("/static/plotly.min.js")
    assert reply.status_code == 200
    installed = (resources.files("plotly") / "package_data" / "plotly.min.js").read_bytes()
    assert reply.content == installed
    assert reply.headers["content-type"].startswith("text/javascript")
    assert "max-age=31536000" in reply.headers["cache-control"]


def test_own_script_and_styles_are_package_data(api: httpx.Client) -> None:
    js = api.get("/static/gpurent.js")
    css = api.get("/static/gpurent.css")
    assert js.status_code == css.status_code == 200
    assert "function live(url, div, everyS, transform)" in js.text
    assert css.headers["content-type"].startswith("text/css")
    assert "immutable" in js.headers["cache-control"]


def test_pages_ask_for_versioned_assets_and_no_inline_script(api: httpx.Client) -> None:
    page = api.get("/plan")
    assert f"/static/plotly.min.js?v={metadata.version('plotly')}" in page.text
    # every <script> is either a file of the app or a JSON island: nothing needs 'unsafe-inline'
    for tag in page.text.split("<script")[1:]:
        head = tag.split(">", 1)[0]
        assert 'src="/static/' in head or 'type="application/json"' in head, head
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert "unsafe-eval" not in page.headers["content-security-policy"]


def test_missing_plotly_is_one_line_naming_the_extra() -> None:
    script = textwrap.dedent(
        """
        import sys
        sys.modules["plotly"] = None  # as if the server extra were not installed
        from starlette.testclient import TestClient
        from gpurent.server import ServerSettings, create_app
        client = TestClient(create_app(ServerSettings()))
        reply = client.get("/static/plotly.min.js")
        print(reply.status_code)
        print(reply.text, end="")
        print(client.get("/plan").status_code)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    status, line, page_status = done.stdout.splitlines()
    assert status == "503"
    assert line == (
        "plotly is not installed, so the dashboard draws no charts: pip install 'gpurent[server]'"
    )
    assert page_status == "200"  # the pages still work, without charts
    assert "plotly is not installed" in done.stderr  # logged once
