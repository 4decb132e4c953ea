"""Importer for SkyPilot catalog files (`catalogs/v8/<cloud>/vms.csv`, any cloud).

Columns are read by header name, since their order differs between clouds (AWS, GCP, Lambda and
RunPod files each order them differently) and some clouds lack some of them:
InstanceType, AcceleratorName, AcceleratorCount, vCPUs, MemoryGiB, GpuInfo, Price, SpotPrice,
Region, AvailabilityZone. Prices are USD per hour for the whole instance.

Rules (see docs/catalog.md):
- Rows with one line per availability zone (AWS, GCP, RunPod) collapse into one offer per
  (instance type, region): zones listed, on-demand = lowest zone price, spot = lowest zone spot
  and `spot_price_max_usd_per_hour` = highest.
- GCP prices GPU VMs in two parts: the VM row (a2/a3/a4/g2 types, empty AcceleratorName) carries
  only the host (vCPU + RAM) price, and a row with an empty InstanceType, an AcceleratorName and
  an AcceleratorCount carries the price of that many GPUs in that region. The offer is the sum
  (spot summed the same way). The GPU of each GCP VM type comes from GCP's machine-type
  documentation (`_GCP_GPU_VMS`). Accelerator rows no VM uses (GPUs attachable to n1 VMs) are
  not offers: their price lacks the host.
- Rows without a GPU (CPU VMs) are counted in `ignored_rows`, not reported as errors.
- A malformed row is skipped and recorded (file, line, reason); a file with no usable row is a
  `DataError`.

This module is pure: it takes the file's text and returns an `OfferTable`.
"""

from __future__ import annotations

import ast
import csv
import io
import math
import re
from dataclasses import dataclass, field
from functools import cache

from gpurent.catalog.offer import Offer
from gpurent.catalog.offers import (
    OfferTable,
    SkippedRow,
    billing_granularity_s,
    gpu_interconnect,
    network_gbps,
)
from gpurent.catalog.specs import find_gpu
from gpurent.errors import DataError, InputError
from gpurent.inputs import values

REQUIRED_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")
"""Columns without which a SkyPilot file cannot give offers."""

# GCP machine type -> (SkyPilot accelerator name, GPU count), from GCP's "GPU machine types" page
# (A2 standard/ultra, A3 high/mega/ultra, A4, G2). A type not listed here that has no
# AcceleratorName is taken as a CPU VM.
_GCP_GPU_VMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^a2-highgpu-(\d+)g$"), "A100"),
    (re.compile(r"^a2-megagpu-(\d+)g$"), "A100"),
    (re.compile(r"^a2-ultragpu-(\d+)g$"), "A100-80GB"),
    (re.compile(r"^a3-highgpu-(\d+)g$"), "H100"),
    (re.compile(r"^a3-megagpu-(\d+)g$"), "H100-MEGA"),
    (re.compile(r"^a3-ultragpu-(\d+)g$"), "H200"),
    (re.compile(r"^a4-highgpu-(\d+)g$"), "B200"),
)
_G2_L4_COUNT = {4: 1, 8: 1, 12: 1, 16: 1, 32: 1, 24: 2, 48: 4, 96: 8}  # g2-standard-<vCPUs>


def gcp_vm_gpus(instance_type: str) -> tuple[str, int] | None:
    """(accelerator name, count) of a GCP GPU VM type whose GPUs are priced separately."""
    for pattern, accelerator in _GCP_GPU_VMS:
        match = pattern.match(instance_type)
        if match:
            return accelerator, int(match.group(1))
    g2 = re.match(r"^g2-standard-(\d+)$", instance_type)
    if g2 and int(g2.group(1)) in _G2_L4_COUNT:
        return "L4", _G2_L4_COUNT[int(g2.group(1))]
    return None


def _price(value: str, column: str) -> float | None:
    """A price cell: empty -> None; not a number, NaN, infinite or negative -> InputError."""
    return values.optional_non_negative(value, column)


def _count(value: str) -> int:
    number = float(value)
    if not math.isfinite(number) or number < 1 or number != int(number):
        raise ValueError(f"bad AcceleratorCount {value!r}")
    return int(number)


@cache
def _gpuinfo_memory_gib(gpu_info: str) -> float | None:
    """Per-GPU memory from a GpuInfo cell (a Python-literal dict), in GiB.

    SkyPilot's fetchers disagree on units: most write MiB in `SizeInMiB`, RunPod and Shadeform
    write GiB there. A value under 1024 is taken as GiB (no GPU has under 1 GiB).
    """
    try:
        info = ast.literal_eval(gpu_info)
        size = float(info["Gpus"][0]["MemoryInfo"]["SizeInMiB"])
    except (ValueError, SyntaxError, KeyError, IndexError, TypeError, MemoryError):
        return None
    if not math.isfinite(size) or size <= 0:
        return None
    return size if size < 1024 else size / 1024


def resolve_gpu_name(accelerator: str, gpu_info: str = "") -> str:
    """Canonical GpuSpec name for a SkyPilot AcceleratorName, or the name as given.

    GpuInfo breaks ties the accelerator name leaves open: RunPod's "A100-80GB" whose GpuInfo says
    "A100 PCIe" is the PCIe card. Names with the instance's total memory appended
    (Verda's "A100-80GB-640GB") are tried without it.
    """
    spec = find_gpu(accelerator)
    if spec is None:
        trimmed = re.match(r"^(.+)-\d+GB$", accelerator)
        spec = find_gpu(trimmed.group(1)) if trimmed else None
    if spec is None:
        return accelerator
    if "pcie" in gpu_info.lower() and spec.form_factor.startswith("SXM"):
        pcie = find_gpu(f"{accelerator}-PCIe")
        if pcie is not None:
            return pcie.name
    return spec.name


@dataclass(slots=True)
class _Group:
    """Rows of one (instance type, region): one offer after collapsing zones."""

    line: int
    accelerator: str
    gpu_count: int
    gcp_split: bool  # GPU price lives on an accelerator row (GCP)
    vcpus: float | None
    memory_gib: float | None
    gpu_info: str
    prices: list[float] = field(default_factory=list)
    spots: list[float] = field(default_factory=list)
    zones: set[str] = field(default_factory=set)


@dataclass(slots=True)
class _AcceleratorPrice:
    """GCP accelerator rows of one (name, count, region)."""

    prices: list[float] = field(default_factory=list)
    spots: list[float] = field(default_factory=list)
    used: bool = False


def _info(value: str, column: str) -> float | None:
    """An informative cell (vCPUs, MemoryGiB): a bad one is left out (None), the row is kept."""
    try:
        return values.optional_non_negative(value, column)
    except InputError:
        return None


def _min(values: list[float]) -> float | None:
    return min(values) if values else None


def _max(values: list[float]) -> float | None:
    return max(values) if values else None


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def _norm(name: str) -> str:
    return name.strip().lower()


def parse_skypilot_csv(
    text: str, file: str, *, provider: str, as_of: str, source: str = "", age: str = ""
) -> OfferTable:
    """Offers from one SkyPilot `vms.csv` text. `file` names it in skip reasons and errors."""
    reader = csv.reader(io.StringIO(text))
    header = [h.strip() for h in next(reader, [])]
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise DataError(
            f"{file}: not a SkyPilot vms.csv (missing columns {', '.join(missing)}); "
            "check the file or the --url-base"
        )
    col = {name: i for i, name in enumerate(header)}
    groups: dict[tuple[str, str], _Group] = {}
    accelerators: dict[tuple[str, int, str], _AcceleratorPrice] = {}
    skipped: list[SkippedRow] = []
    ignored = 0
    rows = 0
    for cells in reader:
        line = reader.line_num
        if not any(c.strip() for c in cells):
            continue
        rows += 1
        if len(cells) != len(header):
            skipped.append(SkippedRow(file=file, line=line, reason=_cell_count(cells, header)))
            continue
        row = {name: cells[i].strip() for name, i in col.items()}
        try:
            ignored += _add_row(row, line, groups, accelerators)
        except (ValueError, InputError) as exc:
            skipped.append(SkippedRow(file=file, line=line, reason=str(exc)))
    offers, notes = _build_offers(
        groups,
        accelerators,
        file=file,
        skipped=skipped,
        provider=provider,
        as_of=as_of,
        source=source,
    )
    if not offers:
        raise DataError(
            f"{file}: no usable GPU offer ({rows} rows: {len(skipped)} malformed, "
            f"{ignored} without a GPU)"
        )
    return OfferTable(
        offers=tuple(offers),
        skipped=tuple(sorted(skipped, key=lambda s: s.line)),
        source=source or file,
        age=age,
        ignored_rows=ignored,
        notes=tuple(notes),
        format="skypilot",
    )


def _cell_count(cells: list[str], header: list[str]) -> str:
    return f"expected {len(header)} cells, got {len(cells)}"


def _add_row(
    row: dict[str, str],
    line: int,
    groups: dict[tuple[str, str], _Group],
    accelerators: dict[tuple[str, int, str], _AcceleratorPrice],
) -> int:
    """File one row into `groups` or `accelerators`; 1 when it is not a GPU row, else 0."""
    instance_type = row["InstanceType"]
    accelerator = row["AcceleratorName"]
    region = row["Region"]
    price = _price(row["Price"], "Price")
    spot = _price(row.get("SpotPrice", ""), "SpotPrice")
    if not instance_type:
        if not accelerator:
            raise ValueError("empty InstanceType and AcceleratorName")
        if not region:
            raise ValueError("empty Region")
        key = (_norm(accelerator), _count(row["AcceleratorCount"]), region)
        entry = accelerators.setdefault(key, _AcceleratorPrice())
        if price is not None:
            entry.prices.append(price)
        if spot is not None:
            entry.spots.append(spot)
        return 0
    gcp = gcp_vm_gpus(instance_type) if not accelerator else None
    if not accelerator and gcp is None:
        return 1
    if not region:
        raise ValueError("empty Region")
    name, count = gcp if gcp else (accelerator, _count(row["AcceleratorCount"]))
    if gcp is None and spot == 0:  # Vast writes 0.00 as a placeholder: no spot market
        spot = None
    if price is None and spot is None:
        raise ValueError("no Price or SpotPrice")
    if gcp is None and price == 0:
        raise ValueError("Price is 0")
    group = groups.get((instance_type, region))
    if group is None:
        group = _Group(
            line=line,
            accelerator=name,
            gpu_count=count,
            gcp_split=gcp is not None,
            vcpus=_info(row.get("vCPUs", ""), "vCPUs"),
            memory_gib=_info(row.get("MemoryGiB", ""), "MemoryGiB"),
            gpu_info=row.get("GpuInfo", ""),
        )
        groups[(instance_type, region)] = group
    if price is not None:
        group.prices.append(price)
    if spot is not None:
        group.spots.append(spot)
    zone = row.get("AvailabilityZone", "")
    if zone:
        group.zones.add(zone)
    return 0


def _build_offers(
    groups: dict[tuple[str, str], _Group],
    accelerators: dict[tuple[str, int, str], _AcceleratorPrice],
    *,
    file: str,
    skipped: list[SkippedRow],
    provider: str,
    as_of: str,
    source: str,
) -> tuple[list[Offer], list[str]]:
    offers: list[Offer] = []
    for (instance_type, region), g in groups.items():
        price, spot, spot_max = _min(g.prices), _min(g.spots), _max(g.spots)
        notes: list[str] = []
        if g.gcp_split:
            acc = accelerators.get((_norm(g.accelerator), g.gpu_count, region))
            if acc is None:
                reason = (
                    f"no accelerator price row for {g.accelerator} x{g.gpu_count} in {region} "
                    "(GCP prices the GPUs of this VM on a separate row)"
                )
                skipped.append(SkippedRow(file=file, line=g.line, reason=reason))
                continue
            acc.used = True
            notes.append(f"host VM {price} + accelerators {_min(acc.prices)} (GCP, summed)")
            price = _add(price, _min(acc.prices))
            spot, spot_max = _add(spot, _min(acc.spots)), _add(spot_max, _max(acc.spots))
            if price is None and spot is None:
                skipped.append(SkippedRow(file=file, line=g.line, reason="no price after summing"))
                continue
        if len(set(g.prices)) > 1:
            notes.append(f"on-demand differs by zone ({min(g.prices)}-{max(g.prices)}): lowest")
        if price is not None and spot is not None and spot > price:
            notes.append("spot above on-demand in source (suspect)")
        gpu_name = resolve_gpu_name(g.accelerator, g.gpu_info)
        spec = find_gpu(gpu_name)
        memory = spec.memory_gib if spec else _gpuinfo_memory_gib(g.gpu_info)
        offers.append(
            Offer(
                provider=provider,
                instance_type=instance_type,
                region=region,
                gpu_name=gpu_name,
                gpu_count=g.gpu_count,
                gpu_memory_gib=memory or 0.0,
                vcpus=g.vcpus,
                memory_gib=g.memory_gib,
                price_usd_per_hour=price,
                spot_price_usd_per_hour=spot,
                spot_price_max_usd_per_hour=spot_max,
                zones=tuple(sorted(g.zones)),
                zone_count=len(g.zones) or None,
                network_gbps=network_gbps(instance_type),
                gpu_interconnect=gpu_interconnect(gpu_name, g.gpu_count),
                billing_granularity_s=billing_granularity_s(provider),
                as_of=as_of,
                source=source or file,
                notes="; ".join(notes),
            )
        )
    unused = sum(1 for a in accelerators.values() if not a.used)
    file_notes = (
        [
            f"{unused} GCP accelerator price groups belong to no listed VM (GPUs attached to n1 "
            "VMs): not offers, their price lacks the host"
        ]
        if unused
        else []
    )
    return offers, file_notes
