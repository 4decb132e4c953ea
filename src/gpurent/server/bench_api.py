"""GET /api/bench/results: the results `gpurent bench` saved in the server's user data folder,
newest first, each with its verdict; the document of `gpurent bench results --json`. No folder
is taken from the client."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from gpurent.bench.saved import DEFAULT_LIMIT, read_saved, results_dir, saved_document
from gpurent.inputs import values as v
from gpurent.server.params import required

router = APIRouter(prefix="/api", tags=["bench"])


@router.get(
    "/bench/results",
    summary="Saved bench results with their verdicts (as `gpurent bench results --json`)",
)
def bench_results(limit: int = Query(DEFAULT_LIMIT, description="The newest this many.")) -> Any:
    """The saved results, newest first, and the files that are not readable results."""
    newest = required(limit, "limit", v.bounded(v.positive_int, most=10_000))
    return saved_document(read_saved(results_dir(), newest))
