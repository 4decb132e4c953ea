"""What `gpurent bench serve` runs: the endpoint, the load levels and the bounds (pure).

Every value a user gives enters here and is validated once: the URL (http/https, a host; the
OpenAI path is appended), the level list (`1,2,4,8` concurrency or `5,10.5` requests/s), token
lengths (`128` or `64-256`), bounds. The API key is not part of the config (it is never
printed, logged or saved); the runner takes it separately.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from gpurent.errors import InputError
from gpurent.inputs import values as v

Mode = Literal["concurrency", "rate"]
Endpoint = Literal["completions", "chat"]

MAX_LEVELS = 64
MAX_CONCURRENCY = 4096
MAX_RATE = 100_000.0  # requests/s
MAX_TOKENS = 1_000_000
MAX_REQUESTS = 10_000_000
PATHS: dict[str, str] = {"completions": "/v1/completions", "chat": "/v1/chat/completions"}
_USERINFO = re.compile(r"//[^/@]*@")
_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenRange:
    """Tokens per request: fixed (`lo == hi`) or drawn uniformly in [lo, hi] (seeded)."""

    lo: int
    hi: int

    @property
    def mean(self) -> float:
        """The range's midpoint in tokens."""
        return (self.lo + self.hi) / 2

    def __str__(self) -> str:
        return str(self.lo) if self.lo == self.hi else f"{self.lo}-{self.hi}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeConfig:
    """One `bench serve` run. Bounds are per level: a level stops issuing requests after
    `max_requests` or `duration_s`, whichever comes first; each request is bounded by
    `timeout_s` and fails as a stall when no byte arrives for `stall_timeout_s`."""

    url: str  # the full endpoint URL, e.g. http://host:8000/v1/completions
    endpoint: Endpoint
    model: str  # "" = ask the endpoint's /v1/models for its first model
    mode: Mode
    levels: tuple[float, ...]  # concurrency (whole numbers) or requests/s, ascending
    prompt_tokens: TokenRange
    output_tokens: TokenRange
    max_requests: int
    duration_s: float
    timeout_s: float
    stall_timeout_s: float
    seed: int = 0
    ignore_eos: bool = True
    max_inflight: int = 1024  # rate mode: at most this many requests in flight
    saturation_gain: float = 0.10  # see `serve_result.saturation_level`


def endpoint_url(url: str, endpoint: Endpoint) -> str:
    """`url` with the OpenAI path of `endpoint` appended, unless it already ends with one.
    `http://h:8000`, `http://h:8000/v1` and `http://h:8000/v1/completions` all work. Error
    messages show the URL without its user info (which may hold a password)."""
    text = _USERINFO.sub("//***@", url.strip())
    url = url.strip()
    try:
        parts = urlsplit(url)
        port = parts.port  # raises ValueError on a bad port
    except ValueError as exc:
        raise InputError(f"--url {text!r} is not a URL ({exc}); give http://HOST:PORT") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(
            f"--url {text!r} is not an http(s) URL with a host; give e.g. http://127.0.0.1:8000"
        )
    if port == 0:
        raise InputError(f"--url {text!r}: port 0 cannot be reached; give the server's port")
    path = parts.path.rstrip("/")
    if not any(path.endswith(p) for p in PATHS.values()):
        path = path.removesuffix("/v1") + PATHS[endpoint]
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def models_url(url: str) -> str:
    """The `/v1/models` URL next to an endpoint URL made by `endpoint_url`."""
    parts = urlsplit(url)
    path = parts.path
    for p in PATHS.values():
        if path.endswith(p):
            path = path[: -len(p)]
            break
    return urlunsplit((parts.scheme, parts.netloc, path + "/v1/models", "", ""))


def parse_levels(text: str, mode: Mode, flag: str) -> tuple[float, ...]:
    """`1,2,4,8` (concurrency: whole numbers >= 1) or `0.5,2,10` (requests/s > 0), ascending
    and without repeats."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise InputError(f"{flag} needs at least one level, e.g. {flag} 1,2,4,8")
    if len(items) > MAX_LEVELS:
        raise InputError(f"{flag}: at most {MAX_LEVELS} levels, got {len(items)}")
    if mode == "concurrency":
        levels = [float(v.integer(t, flag, least=1, most=MAX_CONCURRENCY)) for t in items]
    else:
        levels = [v.positive(t, flag, most=MAX_RATE) for t in items]
    if len(set(levels)) != len(levels):
        raise InputError(f"{flag} {text!r} repeats a level; give each once")
    return tuple(sorted(levels))


def parse_token_range(text: str, flag: str) -> TokenRange:
    """`128` (fixed) or `64-256` (uniform, inclusive)."""
    match = _RANGE.match(text)
    if not match:
        raise InputError(
            f"{flag} must be a token count like 128 or a range like 64-256, got {text!r}"
        )
    lo = v.integer(match.group(1), flag, least=1, most=MAX_TOKENS)
    hi = v.integer(match.group(2) or match.group(1), flag, least=1, most=MAX_TOKENS)
    if hi < lo:
        raise InputError(f"{flag} {text!r}: the range's low end is above its high end")
    return TokenRange(lo=lo, hi=hi)


def check_config(cfg: ServeConfig) -> ServeConfig:
    """Cross-field checks the flags alone cannot make; returns `cfg` unchanged."""
    if cfg.stall_timeout_s > cfg.timeout_s:
        raise InputError(
            f"--stall-timeout {cfg.stall_timeout_s:g} is longer than --timeout "
            f"{cfg.timeout_s:g}; a stall could never fire"
        )
    return cfg
