"""What `gpurent serve` runs with, checked before anything binds a port."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from gpurent.errors import InputError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_MAX_BODY_BYTES = 1 << 20  # 1 MiB: a workload or plan request is a few hundred bytes
TOKEN_ENV = "GPURENT_SERVE_TOKEN"
MIN_TOKEN_CHARS = 16


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerSettings:
    """Where to listen and what every request must carry. `token`: None for none (loopback only);
    `max_body_bytes`: larger request bodies are refused with 413; `db`: the fleet store."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    token: str | None = None
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    db: str | None = None  # the fleet store: a SQLite path or SQLAlchemy URL; None: serve.db

    def __repr__(self) -> str:  # never show the token or a database password
        shown = "set" if self.token else "none"
        db = None if self.db is None else re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", self.db)
        return (
            f"ServerSettings(host={self.host!r}, port={self.port}, token={shown}, "
            f"max_body_bytes={self.max_body_bytes}, db={db!r})"
        )


def is_loopback(host: str) -> bool:
    """True for 'localhost' and loopback addresses (127.0.0.0/8, ::1); names other than localhost
    may resolve anywhere, so they count as not loopback."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def checked_settings(settings: ServerSettings) -> ServerSettings:
    """The settings, or an InputError saying what to change: a port in 0-65535 (0: any free one),
    a positive size limit, and a token of at least 16 characters wherever the address is not
    loopback (anyone who can reach the port could otherwise use it)."""
    if not 0 <= settings.port <= 65535:
        raise InputError(f"--port must be in 0-65535, got {settings.port}")
    if settings.max_body_bytes <= 0:
        raise InputError(f"the request size limit must be > 0 bytes, got {settings.max_body_bytes}")
    if settings.token is not None and len(settings.token) < MIN_TOKEN_CHARS:
        raise InputError(
            f"the token is too short ({len(settings.token)} characters); give at least "
            f"{MIN_TOKEN_CHARS}, e.g. `python -c 'import secrets; print(secrets.token_urlsafe())'`"
        )
    if settings.token is None and not is_loopback(settings.host):
        raise InputError(
            f"--host {settings.host} is reachable from other machines: give --token T or set "
            f"${TOKEN_ENV} (every request must then send 'Authorization: Bearer T'), or bind "
            "127.0.0.1"
        )
    return settings
