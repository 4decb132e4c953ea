"""The one HTTP seam: a small `Http` protocol, its urllib implementation and an in-memory stand-in.

Every room that speaks HTTP (catalog downloads, cloud metadata services, the supervisor's rebuild
webhook) takes an `Http` by argument, defaulting to `URLLIB_HTTP` (or `DIRECT_HTTP`, which ignores
proxy settings, for the link-local metadata services). Tests and callers without a network pass
`FakeHttp`, which answers from a table of routes the way the real endpoints do.

The contract, the same for every implementation:

- any status the server sends (2xx, 3xx not followed, 4xx, 5xx) is an `HttpResponse`, never an
  exception; `HttpResponse.raise_for_status` turns a non-2xx one into an `HttpError`;
- a server that cannot be reached, a timeout (`timeout_s` per connect and read, `deadline_s` for
  the whole answer), an answer over `max_bytes`, a broken answer (truncated, not HTTP) and a URL
  that is not http(s) raise `HttpError`, with `reason` saying which;
- GET follows redirects (at most 10, as urllib does); other methods return the 3xx.

stdlib only; `urllib.request` is imported when the first request is made (it pulls in http,
email and ssl) and nowhere else in `src/` (ruff TID251).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from gpurent.errors import GpurentError

__all__ = [
    "DIRECT_HTTP",
    "URLLIB_HTTP",
    "FakeHttp",
    "Http",
    "HttpError",
    "HttpRequest",
    "HttpResponse",
    "OnChunk",
    "UrllibHttp",
]

Reason = Literal["unreachable", "timeout", "too_large", "broken", "bad_url", "status"]
OnChunk = Callable[[int, int | None], None]
"""on_chunk(bytes_so_far, total_bytes_or_None), called as the body arrives."""

_CHUNK_BYTES = 64 * 1024


class HttpError(GpurentError):
    """An HTTP exchange failed; `reason` says how (`unreachable`, `timeout`, `too_large`,
    `broken`, `bad_url`, or `status` from `raise_for_status`), `url` where."""

    def __init__(self, message: str, *, url: str, reason: Reason) -> None:
        super().__init__(message)
        self.url = url
        self.reason = reason


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpRequest:
    """One request as an `Http` implementation received it (what `FakeHttp` records)."""

    method: str
    url: str
    headers: Mapping[str, str]
    body: bytes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpResponse:
    """An answer: status code and phrase, headers (names lower-cased) and the body."""

    status: int
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    reason: str = ""

    @property
    def ok(self) -> bool:
        """True for a 2xx status."""
        return 200 <= self.status < 300

    def raise_for_status(self, url: str) -> HttpResponse:
        """This response if it is 2xx; else an `HttpError` (reason `status`) naming `url`."""
        if not self.ok:
            phrase = f" {self.reason}" if self.reason else ""
            raise HttpError(f"{url}: HTTP {self.status}{phrase}", url=url, reason="status")
        return self


class Http(Protocol):
    """The HTTP seam (see the module docstring for the contract every implementation keeps)."""

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
        timeout_s: float,
        max_bytes: int,
        deadline_s: float | None = None,
        on_chunk: OnChunk | None = None,
    ) -> HttpResponse:
        """Send one request and return the answer, or raise `HttpError`."""
        ...

    def get(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout_s: float,
        max_bytes: int,
        deadline_s: float | None = None,
        on_chunk: OnChunk | None = None,
    ) -> HttpResponse:
        """`request("GET", ...)`."""
        ...

    def put(
        self,
        url: str,
        *,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout_s: float,
        max_bytes: int,
        deadline_s: float | None = None,
    ) -> HttpResponse:
        """`request("PUT", ...)`."""
        ...

    def post(
        self,
        url: str,
        *,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout_s: float,
        max_bytes: int,
        deadline_s: float | None = None,
    ) -> HttpResponse:
        """`request("POST", ...)`."""
        ...


class _Verbs:
    """`get`, `put` and `post` in terms of `request`, shared by the implementations."""

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
        timeout_s: float,
        max_bytes: int,
        deadline_s: float | None = None,
        on_chunk: OnChunk | None = None,
    ) -> HttpResponse:
        raise NotImplementedError

    def get(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout_s: float,
        max_bytes: int,
        deadline_s: float | None = None,
        on_chunk: OnChunk | None = None,
    ) -> HttpResponse:
        """`request("GET", ...)`."""
        return self.request(
            "GET",
            url,
            headers=headers,
            timeout_s=timeout_s,
            max_bytes=max_bytes,
            deadline_s=deadline_s,
            on_chunk=on_chunk,
        )

    def put(
        self,
        url: str,
        *,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout_s: float,
        max_bytes: int,
        deadline_s: float | None = None,
    ) -> HttpResponse:
        """`request("PUT", ...)`."""
        return self.request(
            "PUT",
            url,
            headers=headers,
            body=body,
            timeout_s=timeout_s,
            max_bytes=max_bytes,
            deadline_s=deadline_s,
        )

    def post(
        self,
        url: str,
        *,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout_s: float,
        max_bytes: int,
        deadline_s: float | None = None,
    ) -> HttpResponse:
        """`request("POST", ...)`."""
        return self.request(
            "POST",
            url,
            headers=headers,
            body=body,
            timeout_s=timeout_s,
            max_bytes=max_bytes,
            deadline_s=deadline_s,
        )


class UrllibHttp(_Verbs):
    """`Http` over `urllib.request`. `proxies=False` ignores `$http_proxy` and friends (for
    link-local services); `user_agent` is sent unless the caller sets its own."""

    def __init__(self, *, proxies: bool = True, user_agent: str = "gpurent") -> None:
        self.proxies = proxies
        self.user_agent = user_agent

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
        timeout_s: float,
        max_bytes: int,
        deadline_s: float | None = None,
        on_chunk: OnChunk | None = None,
    ) -> HttpResponse:
        """Send one request over urllib (see the module docstring for the contract)."""
        import http.client
        import urllib.error
        import urllib.request

        if not url.lower().startswith(("http://", "https://")):
            raise HttpError(f"{url}: not an http(s) URL", url=url, reason="bad_url")
        sent = {"User-Agent": self.user_agent, **dict(headers or {})}
        try:
            req = urllib.request.Request(url, data=body, method=method, headers=sent)
        except ValueError as exc:
            raise HttpError(f"{url}: bad URL ({exc})", url=url, reason="bad_url") from None
        handlers = [] if self.proxies else [urllib.request.ProxyHandler({})]
        opener = urllib.request.build_opener(*handlers)
        until = float("inf") if deadline_s is None else time.monotonic() + deadline_s
        limits = _Limits(url, until, max_bytes)
        try:
            with opener.open(req, timeout=timeout_s) as answer:
                return _response(answer, int(answer.status), answer.reason, limits, on_chunk)
        except urllib.error.HTTPError as exc:  # 4xx/5xx, and 3xx not followed: an answer
            try:
                return _response(exc, int(exc.code), str(exc.reason), limits, None)
            except HttpError as broken:
                if broken.reason == "too_large":
                    raise
                return HttpResponse(
                    status=int(exc.code), reason=str(exc.reason), headers=_headers(exc)
                )
        except urllib.error.URLError as exc:
            raise _unreachable(url, exc.reason) from None
        except (http.client.HTTPException, ValueError) as exc:  # bad status line, truncated
            raise HttpError(
                f"broken HTTP answer from {url}: {type(exc).__name__}: {exc}",
                url=url,
                reason="broken",
            ) from None
        except OSError as exc:  # timeouts while reading, resets
            raise _unreachable(url, exc) from None


def _unreachable(url: str, why: object) -> HttpError:
    if isinstance(why, TimeoutError) or "timed out" in str(why):
        return HttpError(f"cannot reach {url}: timed out", url=url, reason="timeout")
    text = str(why) or type(why).__name__
    return HttpError(f"cannot reach {url}: {text} (offline?)", url=url, reason="unreachable")


def _headers(answer: Any) -> dict[str, str]:
    raw = getattr(answer, "headers", None)
    return {} if raw is None else {k.lower(): v for k, v in raw.items()}


@dataclass(frozen=True, slots=True)
class _Limits:
    url: str
    until: float  # time.monotonic() by which the whole answer must be in
    max_bytes: int


def _response(
    answer: Any, status: int, reason: str, limits: _Limits, on_chunk: OnChunk | None
) -> HttpResponse:
    url, until, max_bytes = limits.url, limits.until, limits.max_bytes
    headers = _headers(answer)
    length = headers.get("content-length", "")
    total = int(length) if length.isdigit() else None
    if total is not None and total > max_bytes:
        raise HttpError(
            f"{url}: answer of {total} bytes is over {max_bytes}", url=url, reason="too_large"
        )
    chunks: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() > until:
            raise HttpError(f"{url}: answer too slow (deadline passed)", url=url, reason="timeout")
        read = answer.read1 if hasattr(answer, "read1") else answer.read
        chunk = bytes(read(_CHUNK_BYTES))
        if not chunk:
            if total is not None and size < total:
                raise HttpError(
                    f"broken HTTP answer from {url}: {size} of {total} bytes",
                    url=url,
                    reason="broken",
                )
            break
        size += len(chunk)
        if size > max_bytes:
            raise HttpError(f"{url}: answer over {max_bytes} bytes", url=url, reason="too_large")
        chunks.append(chunk)
        if on_chunk is not None:
            on_chunk(size, total)
    return HttpResponse(status=status, reason=reason, headers=headers, body=b"".join(chunks))


URLLIB_HTTP = UrllibHttp()
"""The default seam: urllib, honouring proxy settings."""

DIRECT_HTTP = UrllibHttp(proxies=False)
"""urllib ignoring proxy settings: for link-local services (cloud metadata)."""

Route = HttpResponse | HttpError | Callable[[HttpRequest], HttpResponse]


class FakeHttp(_Verbs):
    """An in-memory `Http`: answers from `routes`, keyed by `(METHOD, url)` or by `url` (any
    method); a route is an `HttpResponse`, an `HttpError` to raise (an unreachable or slow
    server), or a function of the `HttpRequest`. Unknown URLs answer 404, like a real server.
    The size limit and `on_chunk` apply as in `UrllibHttp`; every request is kept in
    `requests`."""

    def __init__(self, routes: Mapping[str | tuple[str, str], Route] | None = None) -> None:
        self.routes: dict[str | tuple[str, str], Route] = dict(routes or {})
        self.requests: list[HttpRequest] = []

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
        timeout_s: float,
        max_bytes: int,
        deadline_s: float | None = None,
        on_chunk: OnChunk | None = None,
    ) -> HttpResponse:
        """Answer from the routes (see the class docstring)."""
        if not url.lower().startswith(("http://", "https://")):
            raise HttpError(f"{url}: not an http(s) URL", url=url, reason="bad_url")
        seen = HttpRequest(method=method.upper(), url=url, headers=dict(headers or {}), body=body)
        self.requests.append(seen)
        route = self.routes.get((seen.method, url), self.routes.get(url))
        if route is None:
            answer = HttpResponse(status=404, reason="Not Found")
        elif isinstance(route, HttpError):
            raise route
        elif isinstance(route, HttpResponse):
            answer = route
        else:
            answer = route(seen)
        if len(answer.body) > max_bytes:
            raise HttpError(f"{url}: answer over {max_bytes} bytes", url=url, reason="too_large")
        if on_chunk is not None and answer.body:
            on_chunk(len(answer.body), len(answer.body))
        return answer
