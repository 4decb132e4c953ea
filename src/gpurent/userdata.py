"""Where gpurent keeps the user's data: fetched catalogs, calibrations, monitor recordings.

`$GPURENT_HOME` wins; else `$XDG_DATA_HOME/gpurent`; else `~/.local/share/gpurent`.
This is an edge module (it reads the environment); the pure core never calls it.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from gpurent.errors import InputError


def data_home() -> Path:
    """The user's data directory: $GPURENT_HOME, else $XDG_DATA_HOME/gpurent, else
    ~/.local/share/gpurent."""
    explicit = os.environ.get("GPURENT_HOME")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "gpurent"


NOW_ENV = "GPURENT_NOW"
"""An ISO date or timestamp that stands in for the clock (tests, reproducible reports)."""


def now_utc() -> datetime:
    """The current time in UTC, or `$GPURENT_NOW` when set (an ISO date or timestamp)."""
    given = os.environ.get(NOW_ENV)
    if not given:
        return datetime.now(UTC)
    try:
        when = datetime.fromisoformat(given)
    except ValueError:
        raise InputError(
            f"${NOW_ENV}: cannot read {given!r}; use an ISO date like 2026-12-01"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def cache_home() -> Path:
    """Where gpurent keeps rebuildable caches: `$GPURENT_HOME/cache` when `$GPURENT_HOME` is
    set, else `$XDG_CACHE_HOME/gpurent`, else `~/.cache/gpurent`."""
    explicit = os.environ.get("GPURENT_HOME")
    if explicit:
        return Path(explicit).expanduser() / "cache"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "gpurent"
