"""Bad input is a 4xx one-line JSON error; the token and the size limit guard every route."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.conftest import TOKEN, free_port


def _one_line_error(reply: httpx.Response, status: int) -> str:
    assert reply.status_code == status, reply.text
    assert reply.headers["content-type"].startswith("application/json")
    doc = reply.json()
    message = doc["error"]
    assert isinstance(message, str) and message
    assert "\n" not in message and "Traceback" not in message
    return message


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status", "says"),
    [
        ("GET", "/api/gpus", {"params": {"min_memory": "-1"}}, 422, "min_memory"),
        ("GET", "/api/gpus", {"params": {"min_memory": "inf"}}, 422, "min_memory"),
        ("GET", "/api/gpus", {"params": {"min_memory": "lots"}}, 422, "min_memory"),
        ("GET", "/api/offers", {"params": {"gpu": "no-such-gpu"}}, 404, "no-such-gpu"),
        ("GET", "/api/offers", {"params": {"sort": "sideways"}}, 422, "sort"),
        ("GET", "/api/offers", {"params": {"limit": "-3"}}, 422, "limit"),
        ("GET", "/api/offers", {"params": {"min_gpus": "0"}}, 422, "min_gpus"),
        ("POST", "/api/estimate", {"json": {"preset": "llama-lora"}}, 422, "gpu"),
        ("POST", "/api/estimate", {"json": {"gpu": "H100"}}, 422, "preset"),
        ("POST", "/api/estimate", {"json": {"gpu": "H999", "preset": "llama-lora"}}, 404, "H999"),
        ("POST", "/api/estimate", {"json": {"gpu": "H100", "model": "gpt-17"}}, 404, "gpt-17"),
        (
            "POST",
            "/api/estimate",
            {"json": {"gpu": "H100", "preset": "llama-lora", "gpus": 0}},
            422,
            "gpus",
        ),
        (
            "POST",
            "/api/estimate",
            {"json": {"gpu": "H100", "preset": "llama-lora", "bogus": 1}},
            422,
            "bogus",
        ),
        (
            "POST",
            "/api/estimate",
            {"json": {"gpu": "H100", "preset": "llama-lora", "task": "x"}},
            422,
            "task",
        ),
        ("POST", "/api/plan", {"json": {}}, 422, "preset"),
        ("POST", "/api/plan", {"json": {"preset": "nope"}}, 404, "nope"),
        (
            "POST",
            "/api/plan",
            {"json": {"preset": "llama-lora", "model": "llama3-8b"}},
            422,
            "not both",
        ),
        (
            "POST",
            "/api/plan",
            {"json": {"preset": "llama-lora", "deadline_hours": -2}},
            422,
            "deadline_hours",
        ),
        (
            "POST",
            "/api/plan",
            {"json": {"preset": "llama-lora", "pricing": ["cheap"]}},
            404,
            "cheap",
        ),
        ("POST", "/api/plan", {"json": {"preset": "llama-lora", "top": 0}}, 422, "top"),
        (
            "POST",
            "/api/plan",
            {"content": b"{not json", "headers": {"content-type": "application/json"}},
            422,
            "JSON",
        ),
        ("POST", "/api/plan", {"json": [1, 2]}, 422, "body"),
        ("GET", "/api/nowhere", {}, 404, "Not Found"),
        ("DELETE", "/api/gpus", {}, 405, "Method Not Allowed"),
    ],
)
def test_bad_requests_get_a_4xx_one_line_error(
    api: httpx.Client, method: str, path: str, kwargs: dict[str, Any], status: int, says: str
) -> None:
    message = _one_line_error(api.request(method, path, **kwargs), status)
    assert says.lower() in message.lower()


def test_openapi_schema_and_docs_are_served(api: httpx.Client) -> None:
    schema = api.get("/openapi.json").json()
    assert {"/api/gpus", "/api/offers", "/api/estimate", "/api/plan", "/api/health"} <= set(
        schema["paths"]
    )
    docs = api.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()


def test_a_body_over_the_limit_is_413(small_limit_url: str) -> None:
    auth = {"authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=small_limit_url, headers=auth, timeout=30) as client:
        big = {"preset": "llama-lora", "providers": ["x" * 2000]}
        assert "1024 bytes" in _one_line_error(client.post("/api/plan", json=big), 413)

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it streams in
            yield b'{"preset": "llama-lora", "providers": ["'
            for _ in range(10):
                yield b"y" * 500
            yield b'"]}'

        streamed = client.post(
            "/api/plan", content=chunks(), headers={"content-type": "application/json"}
        )
        _one_line_error(streamed, 413)
        small = client.post("/api/plan", json={"preset": "nope"})  # under the limit: read
        _one_line_error(small, 404)


@pytest.mark.parametrize("path", ["/api/health", "/api/gpus", "/openapi.json", "/docs"])
def test_with_a_token_every_route_needs_it(small_limit_url: str, path: str) -> None:
    with httpx.Client(base_url=small_limit_url, timeout=30) as client:
        assert "token" in _one_line_error(client.get(path), 401)
        wrong = client.get(path, headers={"authorization": "Bearer not-the-token-at-all"})
        _one_line_error(wrong, 401)
        assert client.get(path, headers={"authorization": TOKEN}).status_code == 401
        right = client.get(path, headers={"authorization": f"Bearer {TOKEN}"})
        assert right.status_code == 200


def _serve(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "gpurent", "serve", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {k: v for k, v in os.environ.items() if k != "GPURENT_SERVE_TOKEN"}
    return {**env, "PYTHONPATH": src, "GPURENT_HOME": str(tmp_path / "home"), **extra}


def test_binding_all_addresses_without_a_token_is_refused(tmp_path: Path) -> None:
    proc = _serve(["--host", "0.0.0.0", "--port", str(free_port())], _env(tmp_path))
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 2
    lines = out.strip().splitlines()
    assert len(lines) == 1 and "--token" in lines[0] and "Traceback" not in out


def test_binding_all_addresses_checks_the_token_of_every_request(tmp_path: Path) -> None:
    port = free_port()
    proc = _serve(
        ["--host", "0.0.0.0", "--port", str(port)], _env(tmp_path, GPURENT_SERVE_TOKEN=TOKEN)
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                reply = httpx.get(f"{url}/api/health", timeout=5)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.communicate()[0]
                assert time.monotonic() < deadline, "gpurent serve did not answer within 60 s"
                time.sleep(0.1)
        _one_line_error(reply, 401)
        _one_line_error(httpx.get(f"{url}/api/gpus", timeout=5), 401)
        ok = httpx.get(f"{url}/api/gpus", headers={"authorization": f"Bearer {TOKEN}"}, timeout=30)
        assert ok.status_code == 200 and ok.json()["count"] > 0
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
    assert "token required" in out
    assert TOKEN not in out  # never in the log
    assert "/api/gpus" in out  # the access log is on


def test_a_short_token_is_refused(tmp_path: Path) -> None:
    proc = _serve(["--port", str(free_port()), "--token", "short"], _env(tmp_path))
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "too short (5 characters)" in out
    assert "'short'" not in out  # the message gives the length, never the token
