"""The ASGI guard in front of every route (API, pages, /docs, /openapi.json): the token and the
request size limit. Pure ASGI, so a refused body is never read past the limit.

The token comes as `Authorization: Bearer T` (the API's clients) or, from a browser, as the
HttpOnly SameSite=Strict cookie (a value derived from the token, not the token) that opening any
page once with `?token=T` sets: that request is answered with a redirect to the same address
without the token (so it stays out of the address bar, the history and the pages), and the token
is taken out of the request before anything, the access log included, sees it."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]
TOKEN_COOKIE = "gpurent_token"
TOKEN_QUERY = "token"
COOKIE_MAX_AGE_S = 7 * 86400


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


def _cookie(scope: Scope, name: str) -> bytes | None:
    raw = _header(scope, b"cookie")
    if raw is None:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw.decode("latin-1"))
    except CookieError:
        return None
    morsel = jar.get(name)
    if morsel is None:
        return None
    value: str = morsel.value
    return value.encode("latin-1", errors="replace")


def _take_query_token(scope: Scope) -> bytes | None:
    """The `token` query parameter, removed from the request's query string (so that neither
    the app nor the access log sees it); None without one."""
    query: bytes = scope.get("query_string", b"")
    if b"token=" not in query:
        return None
    pairs = parse_qsl(query.decode("latin-1"), keep_blank_values=True)
    given = [value for key, value in pairs if key == TOKEN_QUERY]
    if not given:
        return None
    scope["query_string"] = urlencode([(k, v) for k, v in pairs if k != TOKEN_QUERY]).encode()
    return given[0].encode()


class Guard:
    """Refuses a request without the token (401, when a token is set: `Authorization: Bearer
    <token>` or the browser's token cookie) and one whose body is over `max_body_bytes` (413), by
    its Content-Length or as it streams in. A GET with `?token=<token>` sets the cookie.
    `own_token_paths` (the monitor push) skip this token check: their route checks a token of
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
        self._token = None if token is None else token.encode()
        # the cookie holds a value derived from the token (hex: no quoting whatever the token's
        # characters), never the token itself
        self._cookie_value = (
            None
            if token is None
            else hmac.new(token.encode(), b"gpurent serve cookie", hashlib.sha256).hexdigest()
        )
        self.own_token_paths = frozenset(own_token_paths)
        self._expected = None if token is None else f"Bearer {token}".encode()
        self.max_body_bytes = max_body_bytes

    def _allowed(self, scope: Scope) -> bool:
        assert self._expected is not None and self._token is not None
        given = _header(scope, b"authorization") or b""
        bearer_ok = hmac.compare_digest(given, self._expected)
        assert self._cookie_value is not None
        cookie_ok = hmac.compare_digest(
            _cookie(scope, TOKEN_COOKIE) or b"", self._cookie_value.encode()
        )
        return bearer_ok or cookie_ok

    async def _login(self, scope: Scope, send: Send) -> None:
        """303 to the same address without the token, setting the token cookie."""
        path = scope.get("path", "/")
        query = scope.get("query_string", b"").decode("latin-1")
        location = path + (f"?{query}" if query else "")
        cookie = (
            f"{TOKEN_COOKIE}={self._cookie_value}; HttpOnly; SameSite=Strict; "
            f"Path=/; Max-Age={COOKIE_MAX_AGE_S}"
        )
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [
                    (b"location", location.encode("latin-1")),
                    (b"set-cookie", cookie.encode("latin-1")),
                    (b"cache-control", b"no-store"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"content-length", b"0"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": b""})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the token and the body size of an HTTP request, then pass it on."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        query_token = _take_query_token(scope)
        if self._expected is not None and scope.get("path") not in self.own_token_paths:
            assert self._token is not None
            if (
                query_token is not None
                and scope.get("method") == "GET"
                and hmac.compare_digest(query_token, self._token)
            ):
                await self._login(scope, send)
                return
            if not self._allowed(scope):
                await _refuse(
                    send,
                    401,
                    "missing or wrong token: send 'Authorization: Bearer <token>' (the token "
                    "`gpurent serve` was started with); in a browser, open any page once with "
                    "?token=<token>",
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
