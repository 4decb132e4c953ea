"""The results `gpurent bench` has saved (`$GPURENT_HOME/bench/*.json`, or a `--out` folder),
read back newest first, each with its verdict (measured against expected); a file that is not
a bench result is listed with its one-line reason rather than stopping the listing. The document
of `gpurent bench results --json` and of `GET /api/bench/results`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpurent.bench.result import BenchResult, Status, load_result, result_to_dict
from gpurent.errors import GpurentError, InputError
from gpurent.userdata import data_home

KIND = "gpurent.bench.results"
DEFAULT_LIMIT = 50
MAX_FILES = 10_000  # files looked at in one folder


def results_dir() -> Path:
    """Where `gpurent bench` saves its results by default."""
    return data_home() / "bench"


@dataclass(frozen=True, slots=True, kw_only=True)
class SavedResult:
    """One saved result and the name of its file."""

    file: str
    result: BenchResult


@dataclass(frozen=True, slots=True, kw_only=True)
class Unreadable:
    """A JSON file in the folder that is not a readable bench result, and why."""

    file: str
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SavedResults:
    """The newest `limit` results of a folder and the files that could not be read."""

    total: int  # readable results in the folder, before the limit
    results: tuple[SavedResult, ...]
    unreadable: tuple[Unreadable, ...]


def read_saved(folder: Path, limit: int = DEFAULT_LIMIT) -> SavedResults:
    """The bench results in `folder`, newest first (by their run time, then file name); an
    absent folder has none."""
    if folder.exists() and not folder.is_dir():
        raise InputError(f"{folder}: not a folder; give the folder bench results are saved in")
    paths = sorted(folder.glob("*.json"))[:MAX_FILES] if folder.is_dir() else []
    read: list[SavedResult] = []
    bad: list[Unreadable] = []
    for path in paths:
        try:
            read.append(SavedResult(file=path.name, result=load_result(path)))
        except GpurentError as exc:
            bad.append(Unreadable(file=path.name, error=exc.message.replace(f"{folder}/", "")))
    read.sort(key=lambda s: (s.result.created_at, s.file), reverse=True)
    return SavedResults(total=len(read), results=tuple(read[:limit]), unreadable=tuple(bad))


def verdict_counts(result: BenchResult) -> dict[str, int]:
    """How many checks of `result` have each status (every status named, zeros included)."""
    return {str(s): sum(1 for row in result.verdict if row.status == s) for s in Status}


def saved_document(saved: SavedResults) -> dict[str, Any]:
    """The JSON document: each result as `gpurent bench --json` printed it, with its file's
    name and the count of its verdict's statuses."""
    return {
        "kind": KIND,
        "total": saved.total,
        "count": len(saved.results),
        "results": [
            {"file": s.file, "verdict_counts": verdict_counts(s.result), **result_to_dict(s.result)}
            for s in saved.results
        ],
        "unreadable": [{"file": u.file, "error": u.error} for u in saved.unreadable],
    }
