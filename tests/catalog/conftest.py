"""Fixtures of the catalog tests: hand-made SkyPilot/plain files and a local HTTP server."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


@pytest.fixture()
def data() -> Path:
    """Folder of the hand-made catalog fixtures (small, mirroring the SkyPilot v8 formats)."""
    return DATA


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture()
def http_root(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A static HTTP server on 127.0.0.1 serving a temp folder: (base URL, folder)."""
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/catalogs/v8", root / "catalogs" / "v8"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
