"""The ASGI guard in front of every route (API, /docs, /openapi.json): the bearer token and the
request size limit. Pure ASGI, so a refused body is never read past the limit."""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]


async def _refuse(
    send: Send, status: int, message: str, headers: list[tuple[bytes, bytes]]
) -> None:
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value)
    return None


class Guard:
    """Refuses a request without `Authorization: Bearer <token>` (401, when a token is set) and
    one whose body is over `max_body_bytes` (413), by its Content-Length or as it streams in.
    `own_token_paths` (the monitor push) skip the bearer check: their route checks a token of
    its own (each machine's), so a machine that only pushes never holds the server's token."""

    def __init__(
        self,
        app: Asgi,
        *,
        token: str | None,
        max_body_bytes: int,
        own_token_paths: tuple[str, ...] = (),
    ) -> None:
        self.app = app
        self.own_token_paths = frozenset(own_token_paths)
        self._expected = None if token is None else f"Bearer {token}".encode()
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the token and the body size of an HTTP request, then pass it on."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self._expected is not None and scope.get("path") not in self.own_token_paths:
            given = _header(scope, b"authorization") or b""
            if not hmac.compare_digest(given, self._expected):
                await _refuse(
                    send,
                    401,
                    "missing or wrong token: send 'Authorization: Bearer <token>' (the token "
                    "`gpurent serve` was started with)",
                    [(b"www-authenticate", b"Bearer")],
                )
                return
        length = _header(scope, b"content-length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                await _refuse(send, 400, "Content-Length is not a number", [])
                return
            if declared > self.max_body_bytes:
                await self._too_large(send)
                return
        body, whole = await self._read_body(receive)
        if not whole:
            await self._too_large(send)
            return
        await self.app(scope, _replay(body, receive), send)

    async def _too_large(self, send: Send) -> None:
        await _refuse(
            send,
            413,
            f"request body over {self.max_body_bytes} bytes; send a smaller one",
            [(b"connection", b"close")],
        )

    async def _read_body(self, receive: Receive) -> tuple[bytes, bool]:
        """The body, and False when it grew past the limit (reading stops there)."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"".join(chunks), True
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                return b"", False
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks), True


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that hands the buffered body over once, then waits on the real one (for the
    disconnect message)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
