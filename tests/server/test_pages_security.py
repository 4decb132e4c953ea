"""The pages' security: CSRF on every form (double submit, 403 without a match), the token
reachable from a browser (`?token=T` once sets an HttpOnly SameSite=Strict cookie; Bearer still
works), and the token never in a page, a redirect or the access log."""

from __future__ import annotations

import re
import time
from pathlib import Path

import httpx
import pytest

from tests.server.conftest import TOKEN, free_port
from tests.server.test_api_guard import _env, _serve

CSRF = re.compile(r'name="csrf" value="([^"]+)"')
FORM = {"preset": "llama-lora", "pricing": ["on-demand", "spot"]}


def _csrf(client: httpx.Client) -> str:
    page = client.get("/plan")
    assert page.status_code == 200
    match = CSRF.search(page.text)
    assert match is not None
    return match.group(1)


def test_csrf_cookie_is_httponly_strict_and_matches_the_field(base_url: str) -> None:
    with httpx.Client(base_url=base_url, timeout=30) as client:
        page = client.get("/plan")
        cookie = page.headers["set-cookie"]
        assert cookie.startswith("gpurent_csrf=")
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
        match = CSRF.search(page.text)
        assert match is not None and client.cookies["gpurent_csrf"] == match.group(1)
        # the same browser keeps its token from page to page
        assert CSRF.search(client.get("/").text).group(1) == match.group(1)  # type: ignore[union-attr]


@pytest.mark.parametrize("field", [None, "", "forged-" + "x" * 40])
def test_a_post_without_the_matching_token_is_403(base_url: str, field: str | None) -> None:
    with httpx.Client(base_url=base_url, timeout=30) as client:
        _csrf(client)  # the browser has its cookie ...
        data = dict(FORM) if field is None else {**FORM, "csrf": field}
        reply = client.post("/plan", data=data)  # ... but the form did not come from the page
        assert reply.status_code == 403
        assert "CSRF token does not match" in reply.text
        assert "Ranked candidates" not in reply.text


def test_a_cross_site_post_without_the_cookie_is_403(base_url: str) -> None:
    with httpx.Client(base_url=base_url, timeout=30) as client:
        token = _csrf(client)
    with httpx.Client(base_url=base_url, timeout=30) as other:  # a field, no cookie
        assert other.post("/plan", data={**FORM, "csrf": token}).status_code == 403


def test_a_form_post_that_is_not_urlencoded_is_refused(base_url: str) -> None:
    with httpx.Client(base_url=base_url, timeout=30) as client:
        _csrf(client)
        assert client.post("/plan", json=FORM).status_code == 415


def test_token_once_in_the_url_sets_the_cookie_and_leaves_the_address(
    small_limit_url: str,
) -> None:
    with httpx.Client(base_url=small_limit_url, timeout=30) as client:
        assert client.get("/plan").status_code == 401
        assert client.get("/plan", params={"token": "wrong-" + TOKEN}).status_code == 401
        login = client.get("/offers", params={"gpu": "H100", "token": TOKEN})
        assert login.status_code == 303
        assert login.headers["location"] == "/offers?gpu=H100"
        cookie = login.headers["set-cookie"]
        assert cookie.startswith("gpurent_token=")
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
        assert TOKEN not in cookie  # a value derived from the token, not the token
        page = client.get(login.headers["location"])
        assert page.status_code == 200 and TOKEN not in page.text
        token = CSRF.search(client.get("/plan").text).group(1)  # type: ignore[union-attr]
        planned = client.post("/plan", data={**FORM, "csrf": token})
        assert planned.status_code == 200 and TOKEN not in planned.text
        assert client.get("/api/gpus").status_code == 200  # the cookie opens the API too


def test_bearer_still_works_and_a_post_cannot_log_in(small_limit_url: str) -> None:
    with httpx.Client(base_url=small_limit_url, timeout=30) as client:
        bearer = {"authorization": f"Bearer {TOKEN}"}
        assert client.get("/api/gpus", headers=bearer).status_code == 200
        assert client.get("/plan", headers=bearer).status_code == 200
        assert client.post("/plan", params={"token": TOKEN}, data=FORM).status_code == 401
        assert "gpurent_token" not in client.cookies


def test_the_token_is_never_in_the_access_log(tmp_path: Path) -> None:
    port = free_port()
    proc = _serve(["--port", str(port)], _env(tmp_path, GPURENT_SERVE_TOKEN=TOKEN))
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{url}/api/health", timeout=5)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.communicate()[0]
                assert time.monotonic() < deadline, "gpurent serve did not answer within 60 s"
                time.sleep(0.1)
        with httpx.Client(base_url=url, timeout=30, follow_redirects=True) as browser:
            page = browser.get("/offers", params={"token": TOKEN, "gpu": "A100"})
            assert page.status_code == 200 and 'value="A100"' in page.text
        wrong = httpx.get(f"{url}/offers", params={"token": "wrong-" + TOKEN}, timeout=30)
        assert wrong.status_code == 401  # a browser without the cookie
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
    assert "/offers?gpu=A100" in out  # the access log is on ...
    assert TOKEN not in out  # ... and has neither the right token nor a wrong one
