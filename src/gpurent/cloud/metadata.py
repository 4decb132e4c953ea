"""Cloud instance metadata services: where they answer, and the one HTTP seam that asks them.

Shared by `gpurent.runtime.notices` (interruption notices) and `gpurent.monitor.instance`
(which instance this is). Base URLs are overridable by environment variable (tests, proxies) and
by argument; all HTTP goes through `Http`, whose default, `urllib_http`, ignores proxies (the
services are link-local) and bounds the answer's size and reading time.
"""

from __future__ import annotations

import http.client
import os
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any, Protocol

AWS_BASE_URL = "http://169.254.169.254"
GCP_BASE_URL = "http://metadata.google.internal"
AZURE_BASE_URL = "http://169.254.169.254"
MAX_BODY_BYTES = 64 * 1024  # metadata answers are tiny; more is junk
# Environment variables that point a provider's metadata base URL elsewhere (tests, proxies);
# read by `gpurent run` (notices) and `gpurent monitor --instance auto` (instance detection).
METADATA_URL_ENV = {
    "aws": "GPURENT_AWS_METADATA_URL",
    "gcp": "GPURENT_GCP_METADATA_URL",
    "azure": "GPURENT_AZURE_METADATA_URL",
}


def base_urls_from_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The metadata base URLs set in the environment, by provider (`aws`, `gcp`, `azure`)."""
    env = os.environ if environ is None else environ
    return {name: env[var] for name, var in METADATA_URL_ENV.items() if env.get(var)}


class Http(Protocol):
    """The HTTP seam: (status, body); raises OSError when the server cannot be reached."""

    def __call__(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        timeout_s: float,
        body: bytes | None = None,
    ) -> tuple[int, bytes]: ...


class JunkAnswerError(ValueError):
    """A metadata service answered something that is not what its documentation says."""


def urllib_http(
    method: str,
    url: str,
    headers: Mapping[str, str],
    timeout_s: float,
    body: bytes | None = None,
) -> tuple[int, bytes]:
    """`Http` over urllib, ignoring proxies (metadata services are link-local).

    The body is read within `timeout_s` in all (not per read, so a server that trickles bytes
    cannot hold a poll for long) and at most `MAX_BODY_BYTES`; a truncated or broken answer is an
    `OSError` like an unreachable server."""
    request = urllib.request.Request(url, data=body, method=method, headers=dict(headers))
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    deadline = time.monotonic() + timeout_s
    try:
        with opener.open(request, timeout=timeout_s) as response:
            return int(response.status), _read_bounded(response, deadline)
    except urllib.error.HTTPError as exc:
        try:
            return int(exc.code), _read_bounded(exc, deadline)
        except (OSError, http.client.HTTPException, ValueError):
            return int(exc.code), b""
    except (http.client.HTTPException, ValueError) as exc:  # truncated, bad status line, ...
        raise OSError(f"broken HTTP answer from {url}: {type(exc).__name__}: {exc}") from None


def _read_bounded(response: Any, deadline: float) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() > deadline:
            raise OSError("metadata answer too slow (read deadline passed)")
        chunk = bytes(response.read1(4096) if hasattr(response, "read1") else response.read(4096))
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise JunkAnswerError(f"metadata answer over {MAX_BODY_BYTES} bytes")
        chunks.append(chunk)
