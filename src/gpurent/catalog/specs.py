"""The bundled GPU spec table and name lookup.

Names resolve case-insensitively through aliases, ignoring spaces, dashes and underscores
("H100", "h100-sxm", "NVIDIA H100 80GB HBM3", "A100 80GB SXM4"). An unknown name is a
`NotFoundError` listing the closest names; lookups never guess.
"""

from __future__ import annotations

import csv
import io
import re
from functools import cache
from importlib import resources

from gpurent.catalog.gpu import GpuSpec
from gpurent.errors import DataError, NotFoundError

_TABLE = "gpus.csv"


def normalize_name(name: str) -> str:
    """Lower-case and drop spaces, dashes, underscores, '(' and ')' for matching."""
    return re.sub(r"[\s\-_()]+", "", name.strip().lower())


def _opt_float(value: str) -> float | None:
    value = value.strip()
    return float(value) if value else None


def _opt_int(value: str) -> int | None:
    value = value.strip()
    return int(value) if value else None


def _row_to_spec(row: dict[str, str], line: int) -> GpuSpec:
    try:
        return GpuSpec(
            name=row["name"],
            aliases=tuple(a.strip() for a in row["aliases"].split(";") if a.strip()),
            vendor=row["vendor"],
            architecture=row["architecture"],
            form_factor=row["form_factor"],
            memory_gib=float(row["memory_gib"]),
            memory_type=row["memory_type"],
            memory_bandwidth_gbps=float(row["memory_bandwidth_gbps"]),
            fp32_tflops=float(row["fp32_tflops"]),
            tf32_tflops=_opt_float(row["tf32_tflops"]),
            fp16_tflops=float(row["fp16_tflops"]),
            bf16_supported=row["bf16_supported"].strip().lower() == "yes",
            fp8_tflops=_opt_float(row["fp8_tflops"]),
            interconnect=row["interconnect"],
            interconnect_gbps=_opt_float(row["interconnect_gbps"]),
            pcie_gen=int(row["pcie_gen"]),
            tdp_w=float(row["tdp_w"]),
            confidence=row["confidence"],
            source=row["source"],
            notes=row.get("notes") or "",
            sm_count=_opt_int(row.get("sm_count") or ""),
            boost_clock_mhz=_opt_float(row.get("boost_clock_mhz") or ""),
            usable_memory_gib=_opt_float(row.get("usable_memory_gib") or ""),
        )
    except (KeyError, ValueError) as exc:
        raise DataError(f"{_TABLE} line {line}: bad GPU row ({exc})") from None


@cache
def all_gpus() -> tuple[GpuSpec, ...]:
    """Every GPU in the bundled table, in table order."""
    text = resources.files("gpurent.catalog.data").joinpath(_TABLE).read_text(encoding="utf-8")
    reader = csv.DictReader(io.StringIO(text))
    return tuple(_row_to_spec(row, i + 2) for i, row in enumerate(reader))


@cache
def _index() -> dict[str, GpuSpec]:
    index: dict[str, GpuSpec] = {}
    for spec in all_gpus():
        for key in (spec.name, *spec.aliases):
            index.setdefault(normalize_name(key), spec)
    return index


def known_gpu_names() -> list[str]:
    """Every canonical name, then every alias: the names a "did you mean" picks from."""
    return [g.name for g in all_gpus()] + [a for g in all_gpus() for a in g.aliases]


def find_gpu(name: str) -> GpuSpec | None:
    """The GpuSpec for `name` or an alias of it, or None when unknown."""
    return _index().get(normalize_name(name))


def get_gpu(name: str) -> GpuSpec:
    """The GpuSpec for `name` or an alias of it; raises `NotFoundError` with the closest names."""
    spec = find_gpu(name)
    if spec is None:
        raise NotFoundError("GPU", name, known_gpu_names())
    return spec
