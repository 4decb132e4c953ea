"""POST /api/vendors/score: the weighted provider scorecard, the document of
`gpurent vendors score FILE --json`. The vendors document comes in the body as JSON (the TOML
file's tables as objects), its evidence files (bench results, netcheck results, scale-out
timings, SLA terms) beside it by the relative names the document gives them; no path on the
server is read."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from gpurent.server.uploads import MAX_FILES, SentFile, unfoldered, written

router = APIRouter(prefix="/api", tags=["vendors"])
NAME_PATTERN = r"^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}$"


class ScoreRequest(BaseModel):
    """The vendors file as JSON with its evidence, and `gpurent vendors score`'s flags."""

    model_config = ConfigDict(extra="forbid")

    document: dict[str, Any] = Field(
        ..., description="The vendors file's content: weights, job, provider (a list), ..."
    )
    name: str = Field(
        "vendors.toml", pattern=NAME_PATTERN, description="The document's name in the reply."
    )
    evidence: list[SentFile] = Field(
        [], max_length=MAX_FILES, description="The files the document names, by those names."
    )
    weights: str | None = Field(None, max_length=500, description="e.g. hardware=0.3,cost=0.2")
    strict: bool = Field(False, description="Refuse weights that do not sum to 1.")
    job: str | None = Field(None, max_length=100, description="HOURSxGPUS, e.g. 100x8.")
    egress_gb: float | None = Field(None, description="Reference job's egress in GB.")
    storage_gb: float | None = Field(None, description="Reference job's storage in GB.")
    slice: str | None = Field(None, max_length=100, description="Two criteria, e.g. hardware,cost")


@router.post(
    "/vendors/score",
    summary="Rank providers from evidence (as `gpurent vendors score --json`)",
)
def vendors_score(req: ScoreRequest) -> Any:
    """The evaluation `gpurent vendors score FILE --json` prints for the same document."""
    from gpurent.report.jsonable import to_jsonable
    from gpurent.server.params import items
    from gpurent.vendors.evaluation import evaluate
    from gpurent.vendors.fields import evidence_confined_to
    from gpurent.vendors.file import parse_vendors
    from gpurent.vendors.score_options import job_with, slice_pair
    from gpurent.vendors.weights import parse_weights

    given = parse_weights(req.weights) if req.weights is not None else None
    pair = slice_pair(items([req.slice]), req.slice) if req.slice is not None else None
    with written(req.evidence) as folder, evidence_confined_to(folder):
        doc = parse_vendors(req.document, req.name, folder)
        ev = evaluate(
            doc,
            weights=given,
            strict=req.strict,
            job=job_with(doc.job, req.job, req.egress_gb, req.storage_gb),
            slice_criteria=pair,
        )
        return unfoldered(to_jsonable(ev), folder)
