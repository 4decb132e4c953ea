"""`gpurent vendors score` in one pure call: scorecard, sensitivity, TOPSIS and checklist."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpurent.errors import InputError
from gpurent.vendors.checklist import ChecklistPoint, checklist
from gpurent.vendors.file import CRITERIA, ReferenceJob, VendorsFile
from gpurent.vendors.scoring import Scorecard, score_vendors
from gpurent.vendors.sensitivity import (
    RegionGrid,
    TopsisResult,
    WeightChange,
    complete,
    region_grid,
    smallest_change,
    topsis_result,
)
from gpurent.vendors.weights import resolve_weights

KIND = "gpurent.vendors.score"
SCHEMA_VERSION = 1
DEFAULT_JOB = ReferenceJob(hours=100.0, gpus=8)
GRID_STEP = 0.05


@dataclass(frozen=True, slots=True, kw_only=True)
class Evaluation:
    """A vendors file evaluated: scorecard, weight sensitivity, TOPSIS check and checklist."""

    source: str  # the vendors file
    scorecard: Scorecard
    changes: tuple[WeightChange, ...]  # L1 and max-norm
    region: RegionGrid | None  # None with a single vendor
    topsis: TopsisResult
    checklist: tuple[ChecklistPoint, ...]
    kind: str = KIND
    schema_version: int = SCHEMA_VERSION


def default_slice(weights: Sequence[tuple[str, float]]) -> tuple[str, str]:
    """The two criteria with the largest weights (the guide's: hardware and network)."""
    ordered = sorted(weights, key=lambda cw: (-cw[1], CRITERIA.index(cw[0])))
    return ordered[0][0], ordered[1][0]


def evaluate(
    doc: VendorsFile,
    *,
    weights: Sequence[tuple[str, float]] | None = None,
    strict: bool = False,
    job: ReferenceJob | None = None,
    slice_criteria: tuple[str, str] | None = None,
) -> Evaluation:
    """Everything `vendors score` reports. `weights` (from --weights) replace the file's, which
    replace the guide's; `job` (from --job) replaces the file's [job]."""
    if weights is not None:
        given, where = weights, "--weights"
    elif doc.weights is not None:
        given, where = doc.weights, f"{doc.path}: weights"
    else:
        given, where = None, "the guide's weights"
    resolved, warnings = resolve_weights(given, strict=strict, where=where)
    source = "the seed guide, section 7.1" if given is None else where
    ref = job or doc.job or DEFAULT_JOB
    card = score_vendors(doc.providers, resolved, ref, weights_source=source, warnings=warnings)
    names = [v.name for v in card.vendors]
    criteria = [c for c, _ in resolved]
    w = [x for _, x in resolved]
    raw = [[v.score(c) for c in criteria] for v in card.vendors]
    matrix = complete(raw, w)
    changes = tuple(smallest_change(names, criteria, matrix, w, norm) for norm in ("L1", "max"))
    pair = slice_criteria or default_slice(resolved)
    for c in pair:
        if c not in criteria:
            raise InputError(f"--slice: unknown criterion {c!r} (criteria: {', '.join(CRITERIA)})")
    if pair[0] == pair[1]:
        raise InputError("--slice: give two different criteria, e.g. hardware,network")
    region = (
        region_grid(names, criteria, matrix, w, pair[0], pair[1], GRID_STEP)
        if len(names) > 1
        else None
    )
    return Evaluation(
        source=doc.path,
        scorecard=card,
        changes=changes,
        region=region,
        topsis=topsis_result(names, matrix, w, names),
        checklist=checklist(doc.providers),
    )
