"""The user's calibration store: `data_home()/calibration.csv` (edge module: file I/O)."""

from __future__ import annotations

from pathlib import Path

from gpurent.errors import DataError, InputError
from gpurent.estimate.estimator import Estimator, bundled_estimator
from gpurent.estimate.measured import Calibration, MeasuredRow, parse_measurements, rows_to_csv
from gpurent.inputs import files
from gpurent.userdata import data_home

FILE_NAME = "calibration.csv"


def store_path() -> Path:
    """Path of the user's training calibration file in the data home."""
    return data_home() / FILE_NAME


def load_calibration(path: Path | None = None) -> Calibration:
    """The stored measurements (empty when none were added)."""
    p = path or store_path()
    if not p.exists():
        return Calibration(())
    try:
        text = files.read_text(p, what="calibration store", error=DataError)
        return Calibration(parse_measurements(text, files.shown(p)))
    except InputError as exc:
        raise DataError(f"{exc.message}; fix or run `gpurent calibrate clear`") from None


def load_estimator(*, use_calibration: bool = True, path: Path | None = None) -> Estimator:
    """The one estimator of a command: bundled constants and GPU table, and the user's stored
    calibration rows (none with `use_calibration=False`, e.g. `estimate --no-measured`)."""
    return bundled_estimator(load_calibration(path) if use_calibration else None)


def add_measurements(source: Path) -> tuple[MeasuredRow, ...]:
    """Validate `source` (CSV or bench JSON) and append its rows to the store."""
    text = files.read_text(source, what="measurements file")
    new = parse_measurements(text, files.shown(source))
    if not new:
        raise InputError(f"{files.shown(source)}: no measurement rows")
    old = load_calibration().rows
    p = store_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(".tmp")
    tmp.write_text(rows_to_csv((*old, *new)), encoding="utf-8")
    tmp.replace(p)
    return new


def clear_calibration() -> int:
    """Delete the store; returns how many rows it held (its data lines, when it no longer
    parses: clearing is what the load error tells the user to do)."""
    p = store_path()
    if not p.exists():
        return 0
    try:
        n = len(load_calibration(p).rows)
    except DataError:
        n = sum(1 for line in p.read_text(encoding="utf-8").splitlines()[1:] if line.strip())
    p.unlink(missing_ok=True)
    return n
