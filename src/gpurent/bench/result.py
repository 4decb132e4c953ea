"""Result objects of `gpurent bench` and their JSON form (schema-versioned).

Every number names its unit. A `Measurement` whose `value` is None was not applicable on this
machine (e.g. host-device bandwidth without a GPU); its `detail` says why. `BenchResult` is what
`gpurent bench --out` writes and `gpurent bench compare` / `gpurent calibrate add` read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from types import UnionType
from typing import Any, Union, get_args, get_origin, get_type_hints

from gpurent.errors import DataError
from gpurent.inputs import files

SCHEMA_VERSION = 1
"""The version of the bench result JSON written by `save_result`."""


class Status(StrEnum):
    """Verdict of one check: ok / warn (marginal) / fail; info = measured, nothing to compare
    with; n/a = the benchmark does not apply here."""

    OK = "ok"
    WARN = "warn"
    FAIL = "fail"
    INFO = "info"
    NA = "n/a"


@dataclass(frozen=True, slots=True, kw_only=True)
class Measurement:
    """One figure. `key` is stable across runs ("matmul.bf16", "membw.copy", "disk.seq_read")."""

    key: str
    benchmark: str
    value: float | None  # None: not applicable here (see detail)
    unit: str  # "TFLOP/s", "GB/s", "IOPS", "images/s", "fraction", ...
    detail: str  # how it was measured: sizes, method, caveats


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRun:
    """Timed training steps of one model on synthetic data.

    Step times are per optimizer step (forward + backward + update) in seconds; `throughput` is
    the total over `world_size` processes in `throughput_unit`.
    """

    model: str  # "resnet50", "bert-large", "gpt-decoder"
    config: str  # the size actually run, e.g. "full" or "cpu-small: 4 layers, hidden 128"
    device: str  # "cpu" | "cuda"
    world_size: int
    precision: str
    batch_size: int  # per process
    seq_len: int | None
    warmup_steps: int
    timed_steps: int
    step_time_median_s: float
    step_time_p10_s: float
    step_time_p90_s: float
    samples_per_s: float
    throughput: float
    throughput_unit: str
    flops_per_step: float  # forward + backward, counted by torch's FlopCounterMode, per process
    achieved_tflops: float
    mfu: float | None  # achieved / peak; None when there is no peak to divide by
    mfu_basis: str  # which peak: "datasheet H200-SXM-141GB bf16 989 TFLOP/s", "measured matmul"


@dataclass(frozen=True, slots=True, kw_only=True)
class HardwareInfo:
    """What `detect` found. PCIe fields are None without NVML or without a GPU."""

    device: str  # "cpu" | "cuda"
    cpu_model: str
    cpu_logical_cores: int
    gpu_count: int
    gpu_name: str | None  # as the driver reports it
    gpu_catalog_name: str | None  # resolved with gpurent.catalog.find_gpu; None if unknown
    gpu_memory_gib: float | None
    pcie_gen_current: int | None
    pcie_gen_max: int | None
    pcie_width_current: int | None
    pcie_width_max: int | None
    driver_version: str | None
    torch_version: str


@dataclass(frozen=True, slots=True, kw_only=True)
class VerdictRow:
    """One measured figure judged against an expectation. `fraction` = measured / expected."""

    check: str  # the Measurement key or "model.<name>"
    status: Status
    measured: float | None
    expected: float | None
    unit: str
    fraction: float | None
    threshold: float | None  # the stated minimum fraction
    source: str  # where the expectation comes from
    cause: str  # likely cause when not ok
    advice: str  # what to do when not ok


@dataclass(frozen=True, slots=True, kw_only=True)
class CalibrationRow:
    """One measured GPU throughput, in the form `gpurent calibrate add FILE` reads."""

    model: str
    gpu: str  # catalog name
    num_gpus: int
    precision: str
    batch_size: int
    throughput: float
    throughput_unit: str
    seq_len: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class BenchResult:
    """One `gpurent bench` run."""

    created_at: str  # ISO 8601, UTC
    quick: bool
    duration_s: float
    hardware: HardwareInfo
    measurements: tuple[Measurement, ...]
    model_runs: tuple[ModelRun, ...]
    verdict: tuple[VerdictRow, ...]
    calibration_rows: tuple[CalibrationRow, ...]
    notes: tuple[str, ...] = ()
    schema_version: int = field(default=SCHEMA_VERSION)

    def measurement(self, key: str) -> Measurement | None:
        """The measurement with key, or None if the result has none."""
        return next((m for m in self.measurements if m.key == key), None)


def result_to_dict(result: BenchResult) -> dict[str, Any]:
    """Plain JSON-ready dict (enums as their values, tuples as lists)."""
    data = asdict(result)
    for row in data["verdict"]:
        row["status"] = str(row["status"])
    return json.loads(json.dumps(data))  # type: ignore[no-any-return]


def save_result(result: BenchResult, path: Path) -> None:
    """Write `result` as JSON to `path`, creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result_to_dict(result), indent=2) + "\n", encoding="utf-8")


def _fits(value: Any, hint: Any) -> bool:
    """Whether a JSON value fits a field's type (float accepts int; enums are checked apart)."""
    if get_origin(hint) in (Union, UnionType):
        return any(_fits(value, arg) for arg in get_args(hint))
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    return True


def _build(cls: type[Any], data: Any, where: str) -> Any:
    if not isinstance(data, Mapping):
        raise DataError(f"{where}: expected an object, got {type(data).__name__}")
    hints = get_type_hints(cls)
    kwargs = {k: v for k, v in data.items() if k in hints}
    for key, value in kwargs.items():
        if not _fits(value, hints[key]):
            raise DataError(f"{where}: field {key!r} has a bad value {value!r}")
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise DataError(f"{where}: {exc}") from None


def result_from_dict(data: Any, where: str) -> BenchResult:
    """Rebuild a BenchResult from its JSON dict; `where` names the file in error messages."""
    if not isinstance(data, Mapping):
        raise DataError(f"{where}: not a gpurent bench result (expected a JSON object)")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise DataError(
            f"{where}: bench result schema_version {version!r} is not {SCHEMA_VERSION}; "
            "re-run `gpurent bench` with this gpurent version"
        )
    try:
        verdict = []
        for i, row in enumerate(data["verdict"]):
            built = _build(VerdictRow, row, f"{where}: verdict[{i}]")
            verdict.append(_replace_status(built, row, f"{where}: verdict[{i}]"))
        return BenchResult(
            created_at=str(data["created_at"]),
            quick=bool(data["quick"]),
            duration_s=float(data["duration_s"]),
            hardware=_build(HardwareInfo, data["hardware"], f"{where}: hardware"),
            measurements=tuple(
                _build(Measurement, m, f"{where}: measurements[{i}]")
                for i, m in enumerate(data["measurements"])
            ),
            model_runs=tuple(
                _build(ModelRun, m, f"{where}: model_runs[{i}]")
                for i, m in enumerate(data["model_runs"])
            ),
            verdict=tuple(verdict),
            calibration_rows=tuple(
                _build(CalibrationRow, c, f"{where}: calibration_rows[{i}]")
                for i, c in enumerate(data["calibration_rows"])
            ),
            notes=tuple(str(n) for n in data.get("notes", ())),
        )
    except KeyError as exc:
        raise DataError(f"{where}: missing field {exc.args[0]!r}") from None
    except (TypeError, ValueError) as exc:
        raise DataError(f"{where}: bad value ({exc})") from None


def _replace_status(row: VerdictRow, raw: Mapping[str, Any], where: str) -> VerdictRow:
    from dataclasses import replace

    try:
        return replace(row, status=Status(raw["status"]))
    except ValueError:
        raise DataError(f"{where}: unknown status {raw['status']!r}") from None


def load_result(path: Path) -> BenchResult:
    """Read a result JSON written by `save_result`; DataError with the file name otherwise."""
    where = files.shown(path)
    text = files.read_text(path, what="bench result", error=DataError)
    return result_from_dict(files.parse_json(text, where, error=DataError), where)
