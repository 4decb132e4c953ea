"""Local HTTP servers that answer like the clouds' metadata endpoints (notices, and the
instance identity that `gpurent monitor --instance auto` reads)."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class MetadataState:
    """What the fake metadata service currently says."""

    def __init__(self) -> None:
        self.aws_action: dict[str, str] | None = None
        self.aws_rebalance: dict[str, str] | None = None
        self.gcp_preempted = False
        self.azure_events: list[dict[str, Any]] = []
        self.requests: list[tuple[str, str]] = []
        self.token = "tok-123"
        # instance identity; None answers 404 (bytes are sent as they are)
        self.aws_instance_type: str | None = None
        self.aws_region: str | None = None
        self.gcp_machine_type: str | None = None  # projects/123/machineTypes/a2-highgpu-1g
        self.gcp_zone: str | None = None  # projects/123/zones/us-central1-a
        self.azure_compute: dict[str, Any] | bytes | None = None
        # hostile answers: path -> (status, body, Content-Length to claim or None for the real
        # one; a larger claim is a truncated body); and seconds between body bytes (a trickle)
        self.raw: dict[str, tuple[int, bytes, int | None]] = {}
        self.trickle_s = 0.0
        # set when the test is over: a trickling answer stops instead of outliving the test
        self.closing = threading.Event()


def _handler(state: MetadataState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, body: bytes = b"", length: int | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Length", str(len(body) if length is None else length))
            self.end_headers()
            if state.trickle_s <= 0:
                self.wfile.write(body)
                return
            for i in range(len(body)):
                if state.closing.wait(state.trickle_s if i else 0.0):
                    return
                self.wfile.write(body[i : i + 1])
                self.wfile.flush()

        def _raw(self) -> bool:
            if self.path not in state.raw:
                return False
            status, body, length = state.raw[self.path]
            self._send(status, body, length)
            self.close_connection = True
            return True

        def do_PUT(self) -> None:
            state.requests.append(("PUT", self.path))
            if self._raw():
                return
            if self.path == "/latest/api/token" and self.headers.get(
                "X-aws-ec2-metadata-token-ttl-seconds"
            ):
                self._send(200, state.token.encode())
            else:
                self._send(400)

        def do_GET(self) -> None:
            state.requests.append(("GET", self.path))
            if self._raw():
                return
            if self.path.startswith("/latest/"):
                if self.headers.get("X-aws-ec2-metadata-token") != state.token:
                    self._send(401)
                elif self.path == "/latest/meta-data/spot/instance-action" and state.aws_action:
                    self._send(200, json.dumps(state.aws_action).encode())
                elif (
                    self.path == "/latest/meta-data/events/recommendations/rebalance"
                    and state.aws_rebalance
                ):
                    self._send(200, json.dumps(state.aws_rebalance).encode())
                elif self.path == "/latest/meta-data/instance-type" and state.aws_instance_type:
                    self._send(200, state.aws_instance_type.encode())
                elif self.path == "/latest/meta-data/placement/region" and state.aws_region:
                    self._send(200, state.aws_region.encode())
                else:
                    self._send(404)
            elif self.path == "/computeMetadata/v1/instance/preempted":
                if self.headers.get("Metadata-Flavor") != "Google":
                    self._send(403)
                else:
                    self._send(200, b"TRUE" if state.gcp_preempted else b"FALSE")
            elif self.path.startswith("/computeMetadata/v1/instance/"):
                value = {
                    "/computeMetadata/v1/instance/machine-type": state.gcp_machine_type,
                    "/computeMetadata/v1/instance/zone": state.gcp_zone,
                }.get(self.path)
                if self.headers.get("Metadata-Flavor") != "Google":
                    self._send(403)
                elif value:
                    self._send(200, value.encode())
                else:
                    self._send(404)
            elif (
                self.path == "/metadata/instance/compute?api-version=2021-02-01"
                and state.azure_compute is not None
            ):
                if self.headers.get("Metadata") != "true":
                    self._send(400)
                elif isinstance(state.azure_compute, bytes):
                    self._send(200, state.azure_compute)
                else:
                    self._send(200, json.dumps(state.azure_compute).encode())
            elif self.path == "/metadata/scheduledevents?api-version=2020-07-01":
                if self.headers.get("Metadata") != "true":
                    self._send(400)
                else:
                    body = {"DocumentIncarnation": 1, "Events": state.azure_events}
                    self._send(200, json.dumps(body).encode())
            else:
                self._send(404)

    return Handler


class _Server(ThreadingHTTPServer):
    """Joins its handler threads on close, so none writes into a later test's captured
    stderr, and takes a client that hung up (the client's timeout did its job) as no error."""

    daemon_threads = False
    block_on_close = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


@contextmanager
def metadata_server() -> Iterator[tuple[str, MetadataState]]:
    state = MetadataState()
    server = _Server(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", state
    finally:
        state.closing.set()
        server.shutdown()
        server.server_close()
