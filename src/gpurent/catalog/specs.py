"""The bundled GPU spec table and name lookup.

Names resolve case-insensitively through aliases, ignoring spaces, dashes and underscores
("H100", "h100-sxm", "NVIDIA H100 80GB HBM3", "A100 80GB SXM4"). A name that is no alias still
resolves when its words name exactly one GPU in any order, as benchmark tables and system names
write them ("H100 80GB PCIe Gen5", "8x H100 80GB SXM5", "B200 192GB", "LambdaCloud A100 40GB
PCIe"): every word of the GPU's model name must be there, no word may contradict the GPU, a
memory size must be within 10 % of the GPU's and a memory type must be its own. An unknown or
ambiguous name is a `NotFoundError` listing the closest names; lookups never guess between GPUs.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from functools import cache
from importlib import resources

from gpurent.catalog.gpu import GpuSpec
from gpurent.errors import DataError, InputError, NotFoundError
from gpurent.inputs import values

_TABLE = "gpus.csv"


def normalize_name(name: str) -> str:
    """Lower-case and drop spaces, dashes, underscores, '(' and ')' for matching."""
    return re.sub(r"[\s\-_()]+", "", name.strip().lower())


def _opt_float(value: str | None, column: str) -> float | None:
    """An optional number cell of the spec table: blank -> None, else a finite number."""
    return values.optional_finite(value, column)


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
            tf32_tflops=_opt_float(row["tf32_tflops"], "tf32_tflops"),
            fp16_tflops=float(row["fp16_tflops"]),
            bf16_supported=row["bf16_supported"].strip().lower() == "yes",
            fp8_tflops=_opt_float(row["fp8_tflops"], "fp8_tflops"),
            interconnect=row["interconnect"],
            interconnect_gbps=_opt_float(row["interconnect_gbps"], "interconnect_gbps"),
            pcie_gen=int(row["pcie_gen"]),
            tdp_w=float(row["tdp_w"]),
            confidence=row["confidence"],
            source=row["source"],
            notes=row.get("notes") or "",
            sm_count=_opt_int(row.get("sm_count") or ""),
            boost_clock_mhz=_opt_float(row.get("boost_clock_mhz"), "boost_clock_mhz"),
            usable_memory_gib=_opt_float(row.get("usable_memory_gib"), "usable_memory_gib"),
            scale_up_domain_gpus=_opt_int(row.get("scale_up_domain_gpus") or ""),
        )
    except (KeyError, ValueError, InputError) as exc:
        raise DataError(f"{_TABLE} line {line}: bad GPU row ({exc})") from None


@cache
def all_gpus() -> tuple[GpuSpec, ...]:
    """Every GPU in the bundled table, in table order."""
    text = resources.files("gpurent.catalog.data").joinpath(_TABLE).read_text(encoding="utf-8")
    return parse_gpu_table(text)


def parse_gpu_table(text: str) -> tuple[GpuSpec, ...]:
    """The rows of a GPU spec table in the bundled table's CSV format; `DataError` naming the
    line for a bad row."""
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


# words that say nothing about which GPU it is (vendor, product line, host names)
_NOISE = frozenset(
    [
        "nvidia",
        "tesla",
        "geforce",
        "quadro",
        "amd",
        "instinct",
        "lambdacloud",
        "lambda",
        "gpu",
        "gpus",
        "gen3",
        "gen4",
        "gen5",
        "generation",
        "graphics",
        "card",
    ]
)
# a memory type must be the GPU's own (GH200 "HBM3e" is the 144 GB variant, not the HBM3 one)
_MEMORY_TYPES = frozenset({"hbm2", "hbm2e", "hbm3", "hbm3e", "gddr6", "gddr6x"})
_FORMS = frozenset({"sxm", "sxm2", "sxm4", "sxm5", "pcie", "nvl", "hgx", "oam"})
_MEMORY = re.compile(r"^(\d+(?:\.\d+)?)g(?:b|ib)?$")
_COUNT = re.compile(r"^\d+x$")  # "8x" in system names


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9.]+", name.lower()) if w and w not in _NOISE]


@cache
def _word_index() -> tuple[tuple[GpuSpec, frozenset[str], frozenset[str]], ...]:
    """Per GPU: (spec, the words of its model name, every word any of its names uses)."""
    out = []
    for spec in all_gpus():
        every: set[str] = set()
        for key in (spec.name, *spec.aliases):
            for w in _words(key):
                if not _MEMORY.match(w) and w not in _MEMORY_TYPES:
                    every.add(w)
                    if w.startswith("sxm"):
                        every.add("sxm")
        core = frozenset(w for w in _words(spec.name) if not _MEMORY.match(w) and w not in _FORMS)
        out.append((spec, core, frozenset(every)))
    return tuple(out)


def _memory_fits(spec: GpuSpec, gib: float) -> bool:
    sizes = [spec.memory_gib, *([spec.usable_memory_gib] if spec.usable_memory_gib else [])]
    return any(abs(gib - size) <= 0.1 * size for size in sizes)


def _by_words(name: str) -> GpuSpec | None:
    words = [w for w in _words(name) if not _COUNT.match(w)]
    memory = [float(m.group(1)) for w in words if (m := _MEMORY.match(w))]
    kinds = {w for w in words if w in _MEMORY_TYPES}
    rest = {w for w in words if not _MEMORY.match(w) and w not in _MEMORY_TYPES}
    if not rest:
        return None
    hits = [
        spec
        for spec, core, every in _word_index()
        if core <= rest
        and rest <= every
        and all(_memory_fits(spec, g) for g in memory)
        and all(k == spec.memory_type.lower() for k in kinds)
    ]
    return hits[0] if len(hits) == 1 else None


def find_gpu(name: str) -> GpuSpec | None:
    """The GpuSpec for `name` or an alias of it (else for a name whose words name exactly one
    GPU, see the module's docstring), or None when unknown or ambiguous."""
    return _index().get(normalize_name(name)) or _by_words(name)


SPECLESS_MESSAGE = "offers exist; no spec, so it cannot be estimated"
"""What gpurent says of a GPU that catalog offers name but the spec table lacks (issue 15)."""


class SpeclessGpuError(InputError):
    """A GPU the catalog has offers for but no spec: it can be listed, not estimated."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"GPU {name!r}: {SPECLESS_MESSAGE} (`gpurent offers --gpu {name}` lists its prices; "
            "docs/plan.md names the GPUs skipped for want of a spec)"
        )
        self.name = name


def get_gpu(name: str, offer_gpu_names: Iterable[str] | None = None) -> GpuSpec:
    """The GpuSpec for `name` or an alias of it.

    Raises `SpeclessGpuError` when no spec has that name but an offer names its GPU so
    (`offer_gpu_names`, default: the bundled snapshot's GPU names), else `NotFoundError` with the
    closest names. Never suggests another GPU for one that is rented but has no spec.
    """
    spec = find_gpu(name)
    if spec is None:
        if offer_gpu_names is None:
            from gpurent.catalog.offers import bundled_offers  # here: offers.py imports this module

            offer_gpu_names = {o.gpu_name for o in bundled_offers()}
        if normalize_name(name) in {normalize_name(g) for g in offer_gpu_names}:
            raise SpeclessGpuError(name)
        raise NotFoundError("GPU", name, known_gpu_names())
    return spec
