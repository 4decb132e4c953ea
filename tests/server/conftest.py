"""A real uvicorn server on 127.0.0.1 on a free port, in a thread of the test process (so it sees
each test's isolated GPURENT_HOME), and an httpx client for it."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi", reason="the server extra is not installed")
uvicorn = pytest.importorskip("uvicorn", reason="the server extra is not installed")

from gpurent.server import ServerSettings, create_app  # noqa: E402

TOKEN = "test-token-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _serve(settings: ServerSettings, **app_options: Any) -> Iterator[str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = create_app(settings, **app_options)
    config = uvicorn.Config(app, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start within 10 s"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """The app with the default settings (loopback, no token, 1 MiB limit)."""
    yield from _serve(ServerSettings())


@pytest.fixture(scope="module")
def small_limit_url() -> Iterator[str]:
    """The app with a 1 KiB request limit and a token."""
    yield from _serve(ServerSettings(token=TOKEN, max_body_bytes=1024))


@pytest.fixture()
def api(base_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=30) as client:
        yield client
