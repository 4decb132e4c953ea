"""Measured serving rows: `data_home()/serve_calibration.csv` (edge module: file I/O).

The training calibration store (`calibration.csv`, `estimate.calibration_file`) keys a row by
zoo model, precision and per-GPU batch and holds one throughput; a serving measurement is keyed
by GPU, served model and engine and holds a load level with its TTFT, time per output token and
throughput, so it lives in this file of its own. `gpurent bench serve --calibrate` appends to
it; a serving estimate may read it (`load_serve_rows`). The format is the CSV of `FIELDS`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from gpurent.catalog.specs import find_gpu
from gpurent.errors import DataError, GpurentError, InputError, NotFoundError
from gpurent.inputs import files
from gpurent.inputs import values as v
from gpurent.textsafe import clean
from gpurent.userdata import data_home

FILE_NAME = "serve_calibration.csv"
ENGINES = ("vllm", "sglang", "tensorrt-llm", "tgi", "other")
FIELDS = (
    "gpu",
    "model",
    "engine",
    "mode",
    "level",
    "prompt_tokens_mean",
    "output_tokens_mean",
    "requests_per_s",
    "output_tok_s",
    "ttft_p50_ms",
    "ttft_p99_ms",
    "tpot_p50_ms",
    "measured_at",
)
MAX_MODEL_CHARS = 200


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeMeasuredRow:
    """One load level measured on a live endpoint (`gpurent bench serve`)."""

    gpu: str  # canonical catalog name
    model: str  # the served model's name, as the endpoint calls it
    engine: str  # one of ENGINES
    mode: Literal["concurrency", "rate"]
    level: float  # concurrency, or requests/s
    prompt_tokens_mean: float
    output_tokens_mean: float
    requests_per_s: float
    output_tok_s: float
    ttft_p50_ms: float
    ttft_p99_ms: float
    tpot_p50_ms: float | None
    measured_at: str


def store_path() -> Path:
    """Path of the user's serving calibration file in the data home."""
    return data_home() / FILE_NAME


def check_gpu(name: str, where: str = "--gpu") -> str:
    """The canonical name of GPU name; InputError naming where if the catalog does not know it."""
    spec = find_gpu(name)
    if spec is None:
        raise InputError(f"{where}: unknown GPU {name!r}; see `gpurent gpus`")
    return spec.name


def check_engine(name: str) -> str:
    """The engine name in lower case; NotFoundError if it is not a known serving engine."""
    key = name.strip().lower()
    if key not in ENGINES:
        raise NotFoundError("engine", name, ENGINES)
    return key


def check_model(name: str, where: str = "model") -> str:
    """The model name cleaned of control characters; InputError if empty or too long."""
    text = clean(name).strip()
    if not text or len(text) > MAX_MODEL_CHARS:
        raise InputError(f"{where} must be a name of 1-{MAX_MODEL_CHARS} characters")
    return text


def row_from_mapping(raw: Mapping[str, str], where: str) -> ServeMeasuredRow:
    """One serving measurement parsed from a CSV row; InputError naming where on a bad field."""
    missing = [k for k in FIELDS if k != "tpot_p50_ms" and not raw.get(k)]
    if missing:
        raise InputError(f"{where}: missing {', '.join(missing)}")
    try:
        mode = raw["mode"]
        if mode not in ("concurrency", "rate"):
            raise InputError(f"{where}: mode must be concurrency or rate, got {mode!r}")
        tpot = raw.get("tpot_p50_ms")
        return ServeMeasuredRow(
            gpu=check_gpu(raw["gpu"], f"{where}: gpu"),
            model=check_model(raw["model"], f"{where}: model"),
            engine=check_engine(raw["engine"]),
            mode="rate" if mode == "rate" else "concurrency",
            level=v.positive(raw["level"], f"{where}: level"),
            prompt_tokens_mean=v.non_negative(raw["prompt_tokens_mean"], f"{where}: prompt"),
            output_tokens_mean=v.non_negative(raw["output_tokens_mean"], f"{where}: output"),
            requests_per_s=v.non_negative(raw["requests_per_s"], f"{where}: requests_per_s"),
            output_tok_s=v.non_negative(raw["output_tok_s"], f"{where}: output_tok_s"),
            ttft_p50_ms=v.positive(raw["ttft_p50_ms"], f"{where}: ttft_p50_ms"),
            ttft_p99_ms=v.positive(raw["ttft_p99_ms"], f"{where}: ttft_p99_ms"),
            tpot_p50_ms=v.positive(tpot, f"{where}: tpot_p50_ms") if tpot else None,
            measured_at=clean(raw["measured_at"])[:40],
        )
    except GpurentError as exc:
        raise InputError(
            exc.message if exc.message.startswith(where) else f"{where}: {exc.message}"
        ) from None


def rows_to_csv(rows: Iterable[ServeMeasuredRow]) -> str:
    """The rows as CSV text with a header line, in the serving calibration file's columns."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(FIELDS)
    for r in rows:
        w.writerow(["" if getattr(r, f) is None else getattr(r, f) for f in FIELDS])
    return out.getvalue()


def load_serve_rows(path: Path | None = None) -> tuple[ServeMeasuredRow, ...]:
    """The stored serving measurements (none when the file does not exist)."""
    p = path or store_path()
    if not p.exists():
        return ()
    try:
        text = files.read_text(p, what="serving calibration store", error=DataError)
        header, records = files.csv_records(text, files.shown(p))
        lacking = [f for f in FIELDS if f not in header]
        if lacking:
            raise InputError(f"{files.shown(p)}: header lacks {', '.join(lacking)}")
        return tuple(
            row_from_mapping({k: c.strip() for k, c in row.items()}, f"{files.shown(p)}:{line}")
            for line, row in records
        )
    except InputError as exc:
        raise DataError(f"{exc.message}; fix or delete {files.shown(p)}") from None


def add_serve_rows(rows: Iterable[ServeMeasuredRow]) -> Path:
    """Append `rows` to the store (written whole, then renamed); returns its path."""
    new = tuple(rows)
    if not new:
        raise InputError("no level with successful requests to add to the calibration")
    old = load_serve_rows()
    p = store_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(".tmp")
    tmp.write_text(rows_to_csv((*old, *new)), encoding="utf-8")
    tmp.replace(p)
    return p


BENCH_SERVE_KIND = "gpurent.bench.serve"


def rows_from_bench_serve(text: str, source: str) -> tuple[ServeMeasuredRow, ...] | None:
    """The `calibration_rows` of a `gpurent bench serve` result JSON, validated; None when
    `text` is not such a result (then it is a training measurements file)."""
    if not text.lstrip().startswith("{"):
        return None
    doc = files.parse_json(text, source)
    if not isinstance(doc, dict) or doc.get("kind") != BENCH_SERVE_KIND:
        return None
    items = doc.get("calibration_rows")
    if not isinstance(items, list) or not items:
        raise InputError(
            f"{source}: no serving rows; run `gpurent bench serve` with --gpu and --engine"
        )
    rows = []
    for i, item in enumerate(items):
        raw = item if isinstance(item, dict) else {}
        cells = {k: "" if raw.get(k) is None else str(raw[k]) for k in FIELDS}
        rows.append(row_from_mapping(cells, f"{source}: calibration_rows[{i}]"))
    return tuple(rows)


def add_bench_serve_file(source: Path) -> tuple[tuple[ServeMeasuredRow, ...], Path] | None:
    """`gpurent calibrate add FILE` for a bench-serve result: its rows appended to this store
    (and the store's path); None when FILE is not a bench-serve result."""
    text = files.read_text(source, what="measurements file")
    rows = rows_from_bench_serve(text, files.shown(source))
    if rows is None:
        return None
    return rows, add_serve_rows(rows)
