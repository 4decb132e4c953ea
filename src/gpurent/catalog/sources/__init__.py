"""Where offers come from: the bundled snapshot, SkyPilot catalog files, plain CSVs, and
`gpurent catalog update`. Everyone else calls `load_offers()`.
"""

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
