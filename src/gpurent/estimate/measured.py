"""User measurements ("calibration rows") and how an estimate prefers them.

A row says: model M on `num_gpus` GPUs G in precision P at per-GPU batch B ran at `throughput`
(total, in the model's unit). When an estimate asks for the same (gpu, model, precision), the
closest row (same GPU count and batch first) anchors it: the estimate becomes
measured x model(asked) / model(measured), so the model only carries the ratio between the two
configurations. Parsing is pure (text in, rows out); `gpurent.estimate.calibration_file` does
the file I/O.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpurent.catalog.precision import Precision, parse_precision
from gpurent.catalog.specs import find_gpu
from gpurent.errors import GpurentError, InputError
from gpurent.inputs import files
from gpurent.inputs import values as v
from gpurent.workload.models import get_model

REQUIRED = ("model", "gpu", "num_gpus", "precision", "batch_size", "throughput")
FIELDS = (*REQUIRED, "seq_len", "throughput_unit")


@dataclass(frozen=True, slots=True, kw_only=True)
class MeasuredRow:
    """One measured training throughput: model, GPU, GPU count, precision and batch size."""

    model: str  # canonical zoo name
    gpu: str  # canonical GPU name
    num_gpus: int
    precision: Precision
    batch_size: int  # per GPU
    throughput: float  # total across GPUs, in the model's unit
    seq_len: int | None = None
    throughput_unit: str = ""


@dataclass(frozen=True, slots=True)
class Calibration:
    """A set of measured rows, indexed by (gpu, model, precision) for fast lookup."""

    rows: tuple[MeasuredRow, ...] = ()
    _index: dict[tuple[str, str, Precision], tuple[MeasuredRow, ...]] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        groups: dict[tuple[str, str, Precision], list[MeasuredRow]] = {}
        for r in self.rows:
            groups.setdefault((r.gpu, r.model, r.precision), []).append(r)
        object.__setattr__(self, "_index", {k: tuple(v) for k, v in groups.items()})

    def matches(self, gpu: str, model: str, precision: Precision) -> tuple[MeasuredRow, ...]:
        """Rows for this canonical GPU name, zoo model name and precision."""
        return self._index.get((gpu, model, precision), ())

    def __len__(self) -> int:
        return len(self.rows)


def best_match(
    rows: Iterable[MeasuredRow], num_gpus: int, batch: int, seq_len: int | None
) -> MeasuredRow:
    """The row closest to the asked configuration: same GPU count, then batch, then length."""

    def distance(r: MeasuredRow) -> tuple[float, float, float]:
        return (
            abs(math.log(r.num_gpus / num_gpus)),
            abs(math.log(r.batch_size / batch)),
            abs(math.log((r.seq_len or 1) / (seq_len or r.seq_len or 1))),
        )

    return min(rows, key=distance)


def row_from_mapping(raw: Mapping[str, Any], where: str) -> MeasuredRow:
    """Validate one measurement; `where` names it in errors (file:line)."""
    missing = [k for k in REQUIRED if raw.get(k) in (None, "")]
    if missing:
        raise InputError(f"{where}: missing {', '.join(missing)}")
    try:
        model = get_model(str(raw["model"])).name
        gpu_spec = find_gpu(str(raw["gpu"]))
        if gpu_spec is None:
            raise InputError(f"{where}: unknown GPU {raw['gpu']!r}; see `gpurent gpus`")
        precision = parse_precision(str(raw["precision"]))
        num_gpus = v.positive_int(raw["num_gpus"], f"{where}: num_gpus", most=v.MAX_GPUS)
        batch = v.positive_int(raw["batch_size"], f"{where}: batch_size", most=v.MAX_BATCH)
        throughput = v.positive(raw["throughput"], f"{where}: throughput")
        seq_raw = raw.get("seq_len")
        seq_len = (
            v.positive_int(seq_raw, f"{where}: seq_len", most=v.MAX_SEQ_LEN)
            if seq_raw not in (None, "")
            else None
        )
    except GpurentError as exc:
        raise InputError(
            exc.message if exc.message.startswith(where) else f"{where}: {exc.message}"
        ) from None
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where}: bad number ({exc})") from None
    if num_gpus < 1 or batch < 1 or not (throughput > 0 and math.isfinite(throughput)):
        raise InputError(f"{where}: num_gpus, batch_size and throughput must be positive")
    return MeasuredRow(
        model=model,
        gpu=gpu_spec.name,
        num_gpus=num_gpus,
        precision=precision,
        batch_size=batch,
        throughput=throughput,
        seq_len=seq_len,
        throughput_unit=str(raw.get("throughput_unit") or ""),
    )


def parse_measurements(text: str, source: str) -> tuple[MeasuredRow, ...]:
    """Rows from a measurements CSV or a `gpurent bench` JSON (top-level `calibration_rows`)."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        doc = files.parse_json(text, source)
        items = doc.get("calibration_rows") if isinstance(doc, dict) else None
        if not isinstance(items, list):
            raise InputError(f"{source}: JSON needs a top-level list 'calibration_rows'")
        if not items:
            raise InputError(
                f"{source}: no GPU model-benchmark rows to learn from (a bench run on the CPU, or "
                "with --only that skipped the models, has none); run `gpurent bench` on the GPU"
            )
        return tuple(
            row_from_mapping(
                item if isinstance(item, dict) else {}, f"{source}: calibration_rows[{i}]"
            )
            for i, item in enumerate(items)
        )
    header, records = files.csv_records(text, source)
    missing = [k for k in REQUIRED if k not in header]
    if missing:
        raise InputError(
            f"{source}: CSV header lacks {', '.join(missing)} (needs {', '.join(REQUIRED)})"
        )
    return tuple(
        row_from_mapping({k: cell.strip() for k, cell in row.items()}, f"{source}:{line}")
        for line, row in records
    )


def rows_to_csv(rows: Iterable[MeasuredRow]) -> str:
    """The rows as CSV text with a header line, in the calibration file's columns."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(FIELDS)
    for r in rows:
        w.writerow(
            [
                r.model,
                r.gpu,
                r.num_gpus,
                r.precision.value,
                r.batch_size,
                r.throughput,
                r.seq_len if r.seq_len is not None else "",
                r.throughput_unit,
            ]
        )
    return out.getvalue()
