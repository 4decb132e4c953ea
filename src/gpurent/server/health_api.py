"""GET /api/health: the server answers, with its version (for probes and load balancers)."""

from __future__ import annotations

from fastapi import APIRouter

from gpurent import __version__

router = APIRouter(prefix="/api", tags=["server"])


@router.get("/health", summary="The server answers, and which version it is")
def health() -> dict[str, str]:
    """`ok` and the gpurent version."""
    return {"status": "ok", "version": __version__}
