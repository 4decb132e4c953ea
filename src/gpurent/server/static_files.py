"""GET /static/...: plotly.min.js from the installed plotly package (the `server` extra; never a
CDN, never a copy in this repository) and the app's own gpurent.js and gpurent.css (package data
beside this module). Each file is read once; the pages ask for it with a version in the query, so
the replies may be cached for a year."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cache
from importlib import metadata, resources

from fastapi import APIRouter, Response

LOG = logging.getLogger("gpurent.server")
router = APIRouter(include_in_schema=False)
CACHE_FOREVER = "public, max-age=31536000, immutable"
MISSING_PLOTLY = (
    "plotly is not installed, so the dashboard draws no charts: pip install 'gpurent[server]'"
)


@dataclass(frozen=True, slots=True)
class Asset:
    """A static file's bytes and media type."""

    body: bytes
    media_type: str


@cache
def plotly_asset() -> Asset | None:
    """plotly.min.js of the installed plotly package, or None (logged once) when it is missing."""
    try:
        script = resources.files("plotly") / "package_data" / "plotly.min.js"
        body = script.read_bytes()
    except (ModuleNotFoundError, FileNotFoundError, OSError):
        LOG.warning("%s", MISSING_PLOTLY)
        return None
    return Asset(body, "text/javascript; charset=utf-8")


@cache
def plotly_version() -> str:
    """The installed plotly's version (the script URL's cache key), "missing" without one."""
    try:
        return metadata.version("plotly")
    except metadata.PackageNotFoundError:
        return "missing"


OWN = {"gpurent.js": "text/javascript; charset=utf-8", "gpurent.css": "text/css; charset=utf-8"}


@cache
def own_asset(name: str) -> Asset:
    """One of the app's own static files (shipped as package data)."""
    body = (resources.files("gpurent.server") / "static" / name).read_bytes()
    return Asset(body, OWN[name])


def _reply(asset: Asset) -> Response:
    return Response(
        asset.body,
        media_type=asset.media_type,
        headers={"cache-control": CACHE_FOREVER, "x-content-type-options": "nosniff"},
    )


@router.get("/static/plotly.min.js")
async def plotly_script() -> Response:
    """The charting library, or 503 with one line saying which extra to install."""
    asset = plotly_asset()
    if asset is None:
        return Response(MISSING_PLOTLY + "\n", status_code=503, media_type="text/plain")
    return _reply(asset)


@router.get("/static/gpurent.js")
async def gpurent_script() -> Response:
    """The dashboard's helpers: draw a chart from a page's JSON, follow a JSON endpoint."""
    return _reply(own_asset("gpurent.js"))


@router.get("/static/gpurent.css")
async def gpurent_styles() -> Response:
    """The dashboard's styles."""
    return _reply(own_asset("gpurent.css"))


@router.get("/favicon.ico")
async def favicon() -> Response:
    """No icon (204), so that a browser's automatic request is not a 404 in its console."""
    return Response(status_code=204, headers={"cache-control": CACHE_FOREVER})
