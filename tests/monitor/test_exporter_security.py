"""The exporter: loopback by default, a bearer token (or an explicit --insecure-public) for any
other address, and idle connections closed by a timeout instead of holding a thread each."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest
from typer.testing import CliRunner

from gpurent.cli.main import app
from gpurent.errors import InputError
from gpurent.monitor.exporter import Exporter, render_metrics
from gpurent.monitor.scenarios import SCENARIOS

from .conftest import Clock, run_probe

runner = CliRunner()
TOKEN = "0123456789abcdef0123"
ARGS = ["monitor", "--fake-gpus", "busy", "--duration", "0", "--json", "--exporter", "--port", "0"]


def _get(port: int, auth: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics")
    if auth is not None:
        request.add_header("Authorization", auth)
    try:
        with urllib.request.urlopen(request, timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_cli_binds_loopback_and_refuses_public_without_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GPURENT_EXPORTER_TOKEN", raising=False)
    r = runner.invoke(app, ARGS)
    assert r.exit_code == 0, r.stderr
    assert "exporter: http://127.0.0.1:" in r.stderr
    for listen in ("0.0.0.0", "::", "10.1.2.3", "my-host"):
        r = runner.invoke(app, [*ARGS, "--listen", listen])
        assert r.exit_code == 2, (listen, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "--token" in lines[0] and "--insecure-public" in lines[0]
    r = runner.invoke(app, [*ARGS, "--listen", "0.0.0.0", "--token", "short"])
    assert r.exit_code == 2 and "at least 16" in r.stderr
    r = runner.invoke(app, [*ARGS, "--listen", "0.0.0.0", "--insecure-public"])
    assert r.exit_code == 0, r.stderr
    monkeypatch.setenv("GPURENT_EXPORTER_TOKEN", TOKEN)
    r = runner.invoke(app, [*ARGS, "--listen", "0.0.0.0"])
    assert r.exit_code == 0, r.stderr
    assert "Bearer token required" in r.stderr


def test_token_is_checked_on_every_request(clock: Clock) -> None:
    with pytest.raises(InputError, match="--token"):
        Exporter(port=0, host="0.0.0.0")
    samples, _ = run_probe(SCENARIOS["busy"], clock, steps=2)
    exporter = Exporter(port=0, host="0.0.0.0", token=TOKEN).start()
    try:
        exporter.update(render_metrics(samples[-1], hostname="node-1"))
        for auth in (None, "Bearer", f"Bearer {TOKEN}x", f"Basic {TOKEN}", TOKEN, "Bearer é"):
            code, body = _get(exporter.port, auth)
            assert code == 401 and "DCGM" not in body and "node-1" not in body, auth
        for _ in range(3):
            code, body = _get(exporter.port, f"Bearer {TOKEN}")
            assert code == 200 and "DCGM_FI_DEV_GPU_UTIL" in body
    finally:
        exporter.stop()


def test_idle_connections_are_closed_by_the_timeout() -> None:
    exporter = Exporter(port=0, host="127.0.0.1", idle_timeout_s=2.0).start()
    baseline = threading.active_count()
    clients: list[socket.socket] = []
    try:
        t0 = time.monotonic()
        for _ in range(300):
            clients.append(socket.create_connection(("127.0.0.1", exporter.port), timeout=10))
        deadline = time.monotonic() + 10
        while exporter.open_connections < 300 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert exporter.open_connections == 300  # all accepted and held open...
        assert threading.active_count() <= baseline + 2  # ...without a thread each
        for c in clients:  # the server hangs up on every idle client after the timeout
            assert c.recv(1) == b""
        assert time.monotonic() - t0 >= 2.0
        deadline = time.monotonic() + 5
        while exporter.open_connections and time.monotonic() < deadline:
            time.sleep(0.01)
        assert exporter.open_connections == 0
        assert _get(exporter.port)[0] == 200  # still serving
    finally:
        for c in clients:
            c.close()
        exporter.stop()


def test_slow_and_malformed_requests_get_bounded_answers() -> None:
    exporter = Exporter(port=0, host="127.0.0.1", idle_timeout_s=0.5, max_connections=4).start()
    try:

        def exchange(data: bytes) -> bytes:
            with socket.create_connection(("127.0.0.1", exporter.port), timeout=5) as c:
                c.sendall(data)
                chunks = []
                while chunk := c.recv(65536):
                    chunks.append(chunk)
                return b"".join(chunks)

        assert exchange(b"hello\r\n\r\n").startswith(b"HTTP/1.0 400")
        assert exchange(b"POST /metrics HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.0 405")
        assert exchange(b"GET /x HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.0 404")
        huge = b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 20000 + b"\r\n\r\n"
        assert exchange(huge).startswith(b"HTTP/1.0 431")
        t0 = time.monotonic()
        assert exchange(b"GET /metrics HTTP/1.1\r\nHost: x\r\n") == b""  # never finished
        assert 0.4 < time.monotonic() - t0 < 3
        held = [socket.create_connection(("127.0.0.1", exporter.port)) for _ in range(4)]
        try:
            deadline = time.monotonic() + 5
            while exporter.open_connections < 4 and time.monotonic() < deadline:
                time.sleep(0.01)
            with contextlib.suppress(ConnectionResetError):  # over the cap: closed, unanswered
                assert exchange(b"GET /metrics HTTP/1.0\r\n\r\n") == b""
        finally:
            for c in held:
                c.close()
    finally:
        exporter.stop()


def test_without_prometheus_client_only_the_exporter_needs_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "prometheus_client", None)  # `import` fails
    r = runner.invoke(app, ARGS[:-3])  # the monitor itself, no exporter
    assert r.exit_code == 0, r.stderr
    r = runner.invoke(app, ARGS)
    assert r.exit_code == 1 and "pip install 'gpurent[monitor]'" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
