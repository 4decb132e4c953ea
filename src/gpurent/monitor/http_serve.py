"""A small, bounded HTTP/1.0 server for the exporter: one asyncio loop in a daemon thread.

Why not `http.server`: it spends a thread per connection (300 idle clients held 302 threads) and
its listen backlog is 5 (connections dropped under 50 scrapers). Here connections cost no thread,
the backlog is `backlog`, each connection has a deadline for the whole exchange (`timeout_s`:
read the request head, answer, close; an idle or slow client is cut off), the request head is
limited to `MAX_HEAD_BYTES`, and at most `max_connections` are open at once (more are closed at
once). Every answer closes the connection (HTTP/1.0 semantics, `Connection: close`). Each
connection is a bare `asyncio.Protocol` (no task or stream objects): the per-scrape cost is what
keeps the latency down under many concurrent scrapers.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

MAX_HEAD_BYTES = 8192
LINGER_S = 1.0
_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    431: "Request Header Fields Too Large",
}


@dataclass(frozen=True, slots=True)
class Request:
    """One HTTP request as the handler sees it: method, path and headers."""

    method: str
    path: str
    headers: Mapping[str, str]  # names lower-cased


@dataclass(frozen=True, slots=True)
class Response:
    """The handler's answer: status, body and content type."""

    status: int
    body: bytes
    content_type: str = "text/plain; charset=utf-8"
    headers: tuple[tuple[str, str], ...] = field(default=())


Handler = Callable[[Request], Response]


def _parse_head(head: bytes) -> Request | None:
    """The request line and headers; None when they are not HTTP."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        return None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            return None
        headers[name.lower()] = value.strip()
    return Request(method=parts[0], path=parts[1], headers=headers)


def _encode(response: Response, *, head_only: bool = False) -> bytes:
    reason = _REASONS.get(response.status, "")
    lines = [
        f"HTTP/1.0 {response.status} {reason}",
        f"Content-Type: {response.content_type}",
        f"Content-Length: {len(response.body)}",
        "Connection: close",
        *(f"{k}: {v}" for k, v in response.headers),
    ]
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head if head_only else head + response.body


def _plain(status: int, text: str) -> Response:
    return Response(status, text.encode())


class _Connection(asyncio.Protocol):
    """One client: read the head, answer, close; cut off at the deadline. No task, no stream."""

    def __init__(self, server: HttpServer) -> None:
        self._server = server
        self._transport: asyncio.Transport | None = None
        self._head = bytearray()
        self._answered = False
        self._timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        server = self._server
        server.connections.add(self)
        if len(server.connections) > server.max_connections:
            transport.abort()
            return
        self._timer = server.loop.call_later(server.timeout_s, self.abort)

    def data_received(self, data: bytes) -> None:
        if self._answered:
            return  # lingering: drop what the client still sends
        self._head += data
        end = self._head.find(b"\r\n\r\n")
        if (end + 4 if end >= 0 else len(self._head)) > MAX_HEAD_BYTES:
            self._answer(_encode(_plain(431, "request head too large\n")), False)
        elif end >= 0:
            self._answer(*self._server.answer(bytes(self._head[: end + 4])))

    def _answer(self, answer: bytes, complete: bool) -> None:
        transport = self._transport
        assert transport is not None
        self._answered = True
        transport.write(answer)
        if complete:
            transport.close()  # after the answer is flushed
        else:  # unread input: closing now would reset the answer away; half-close and linger
            if transport.can_write_eof():
                transport.write_eof()
            if self._timer is not None:
                self._timer.cancel()
            self._timer = self._server.loop.call_later(LINGER_S, self.abort)

    def eof_received(self) -> bool:
        return False  # the client is done (or gave up): close

    def abort(self) -> None:
        if self._transport is not None:
            self._transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._server.connections.discard(self)


class HttpServer:
    """Serves `handler` on (host, port) from a daemon thread; `start()`, then `stop()`.

    The socket is bound in the constructor, so a busy port is an `OSError` there."""

    def __init__(
        self,
        host: str,
        port: int,
        handler: Handler,
        *,
        timeout_s: float,
        backlog: int,
        max_connections: int,
    ) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._sock = socket.create_server((host.strip("[]"), port), family=family, backlog=backlog)
        self._handler = handler
        self.timeout_s = timeout_s
        self.max_connections = max_connections
        self._backlog = backlog
        self.connections: set[_Connection] = set()
        self.loop = asyncio.new_event_loop()
        self._stopping: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="gpurent-exporter")

    @property
    def port(self) -> int:
        """The TCP port the server listens on."""
        return int(self._sock.getsockname()[1])

    @property
    def open_connections(self) -> int:
        """Number of client connections open now."""
        return len(self.connections)

    def start(self) -> None:
        """Start the server thread and wait up to 10 s until it accepts connections."""
        self._thread.start()
        self._ready.wait(timeout=10)

    def stop(self) -> None:
        """Stop the server thread (waiting up to 10 s) and close the socket."""
        if self._thread.is_alive() and self._stopping is not None:
            self.loop.call_soon_threadsafe(self._stopping.set)
            self._thread.join(timeout=10)
        self._sock.close()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._serve())
        finally:
            self.loop.close()

    async def _serve(self) -> None:
        self._stopping = asyncio.Event()
        server = await self.loop.create_server(  # it listen()s again: pass the backlog on
            lambda: _Connection(self), sock=self._sock, backlog=self._backlog
        )
        self._ready.set()
        try:
            await self._stopping.wait()
        finally:
            server.close()
            for connection in list(self.connections):
                connection.abort()
            await asyncio.sleep(0)  # let the aborts run connection_lost

    def answer(self, head: bytes) -> tuple[bytes, bool]:
        """The answer's bytes to a request head, and whether the request was read to its end."""
        request = _parse_head(head)
        if request is None:
            return _encode(_plain(400, "not an HTTP request\n")), False
        if request.method not in ("GET", "HEAD"):
            return _encode(_plain(405, "only GET\n")), False
        response = self._handler(request)
        return _encode(response, head_only=request.method == "HEAD"), response.status == 200
