"""Reading recorded sample files for `gpurent monitor diagnose`: CSV (header row) or JSON lines.

Columns are `sample.COLUMNS` (see docs/monitor.md); only `timestamp` is required, plus `gpu` on
GPU rows. Unknown columns are ignored. A bad value is a one-line DataError with file and line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpurent.errors import DataError, InputError
from gpurent.inputs import files, values
from gpurent.monitor.sample import COLUMNS, Sample, from_rows, gpu_from_row


def read_samples(path: Path) -> list[Sample]:
    """The samples of a recorded CSV or JSON-lines file (a regular UTF-8 file of at most
    `files.MAX_TEXT_BYTES`); every problem is a one-line DataError naming the file and line."""
    text = files.read_text(path, what="samples file", error=DataError)
    path = Path(files.shown(path))
    stripped = text.lstrip()
    if not stripped:
        raise DataError(f"{path}: empty file; expected CSV with a header or JSON lines")
    rows = _jsonl(path, text) if stripped.startswith("{") else _csv(path, text)
    if not rows:
        raise DataError(f"{path}: no sample rows")
    for line, row in rows:
        try:
            values.finite(row["timestamp"], "timestamp")
            if row.get("gpu") not in (None, ""):
                gpu_from_row(row, ())
        except KeyError:
            raise DataError(f"{path}:{line}: missing column 'timestamp'") from None
        except InputError as exc:  # one validator per kind of cell: the inputs.values message
            raise DataError(f"{path}:{line}: {exc.message}") from None
        except (TypeError, ValueError, OverflowError) as exc:
            raise DataError(f"{path}:{line}: bad value ({exc})") from None
    try:
        return from_rows(r for _, r in rows)
    except InputError as exc:
        raise DataError(f"{path}: {exc.message}") from None
    except (TypeError, ValueError, OverflowError) as exc:
        raise DataError(f"{path}: bad value ({exc})") from None


def _jsonl(path: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    rows: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        row = files.parse_json(line, f"{path}:{number}", error=DataError)
        if not isinstance(row, dict):
            raise DataError(f"{path}:{number}: each line must be a JSON object")
        rows.append((number, row))
    return rows


def _csv(path: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    header, records = files.csv_records(text, str(path), error=DataError)
    if "timestamp" not in header:
        raise DataError(
            f"{path}:1: no 'timestamp' column in the header; expected columns like "
            f"{', '.join(COLUMNS[:6])}, ..."
        )
    return [(number, dict(row)) for number, row in records]
