"""Where offers come from: the bundled snapshot, SkyPilot catalog files, plain CSVs, and
`gpurent catalog update`. Everyone else calls `load_offers()`.

The names are imported on first use: loading offers (every `gpurent plan`) does not load the
fetcher and its HTTP client.
"""

from typing import TYPE_CHECKING

from gpurent.exports import lazy

if TYPE_CHECKING:
    from gpurent.catalog.sources.fetch import (
        DEFAULT_CLOUDS,
        DEFAULT_URL_BASE,
        URL_ENV,
        FetchError,
        UpdateResult,
        update_catalogs,
    )
    from gpurent.catalog.sources.load import detect_format, load_file, load_offers
    from gpurent.catalog.sources.skypilot import parse_skypilot_csv, resolve_gpu_name
    from gpurent.catalog.sources.snapshot import CloudMeta, read_meta

_FETCH = "gpurent.catalog.sources.fetch"
_LOAD = "gpurent.catalog.sources.load"
_SKYPILOT = "gpurent.catalog.sources.skypilot"
_SNAPSHOT = "gpurent.catalog.sources.snapshot"
_EXPORTS = {
    "DEFAULT_CLOUDS": _FETCH,
    "DEFAULT_URL_BASE": _FETCH,
    "URL_ENV": _FETCH,
    "CloudMeta": _SNAPSHOT,
    "FetchError": _FETCH,
    "UpdateResult": _FETCH,
    "detect_format": _LOAD,
    "load_file": _LOAD,
    "load_offers": _LOAD,
    "parse_skypilot_csv": _SKYPILOT,
    "read_meta": _SNAPSHOT,
    "resolve_gpu_name": _SKYPILOT,
    "update_catalogs": _FETCH,
}
__all__ = [
    "DEFAULT_CLOUDS",
    "DEFAULT_URL_BASE",
    "URL_ENV",
    "CloudMeta",
    "FetchError",
    "UpdateResult",
    "detect_format",
    "load_file",
    "load_offers",
    "parse_skypilot_csv",
    "read_meta",
    "resolve_gpu_name",
    "update_catalogs",
]
__getattr__ = lazy(__name__, _EXPORTS)
