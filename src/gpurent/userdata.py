"""Where gpurent keeps the user's data: fetched catalogs, calibrations, monitor recordings.

`$GPURENT_HOME` wins; else `$XDG_DATA_HOME/gpurent`; else `~/.local/share/gpurent`.
This is an edge module (it reads the environment); the pure core never calls it.
"""

from __future__ import annotations

import os
from pathlib import Path


def data_home() -> Path:
    explicit = os.environ.get("GPURENT_HOME")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "gpurent"
