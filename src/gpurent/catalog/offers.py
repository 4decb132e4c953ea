"""The bundled offer snapshot: parsing the project's offers CSV into `Offer` objects.

The "plain" CSV format (`data/offers.csv`; `gpurent catalog import` and `--catalog` read it):
provider, instance_type, gpu, gpu_count (required), gpu_memory_gib, vcpus, memory_gib, region,
zones_seen, price_hour_usd, spot_price_hour_usd, spot_price_max_hour_usd, currency_note,
source_repo, source_path, source_commit, as_of. Prices are USD per hour for the whole instance;
a row needs an on-demand or a spot price. GPU names are resolved to
canonical `GpuSpec` names where the spec table knows them; others are kept as given.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from functools import cache
from importlib import resources

from gpurent.catalog.offer import Offer
from gpurent.catalog.specs import find_gpu
from gpurent.errors import DataError, InputError
from gpurent.inputs import values

BUNDLED_AS_OF = "2026-H1 (approximate)"
"""What to show users as the age of the bundled skypilot-catalog prices (see data/README.md)."""

BUNDLED_AGE = "list prices, first half of 2026 (approximate), bundled snapshot"
"""The one-line age statement every command that prints bundled prices shows."""

ACCELERATOR_ONLY_PREFIX = "accelerator:"
"""Instance types of GCP GPU-SKU rows: a GPU price without any host VM, so not an offer."""

# Network between instances (Gbit/s) for the multi-node instance types whose figure is published
# in the providers' instance documentation (AWS EC2 accelerated-computing instance specs; Azure
# ND-series docs: 200 Gb/s InfiniBand per GPU). Other offers get None: the planner then assumes a
# conservative default and says so.
_NETWORK_GBPS: dict[str, float] = {
    "p3.16xlarge": 25,
    "p3dn.24xlarge": 100,
    "p4d.24xlarge": 400,
    "p4de.24xlarge": 400,
    "p5.48xlarge": 3200,
    "p5en.48xlarge": 3200,
    "p6-b200.48xlarge": 3200,
    "Standard_ND96asr_v4": 1600,
    "Standard_ND96amsr_A100_v4": 1600,
    "Standard_ND96isr_H100_v5": 3200,
}

# Billing granularity by provider, seconds. AWS and GCP bill Linux VMs per second (60 s minimum);
# other providers are taken as per-minute unless known otherwise.
_BILLING_S: dict[str, int] = {"aws": 1, "gcp": 1}
_DEFAULT_BILLING_S = 60


@dataclass(frozen=True, slots=True, kw_only=True)
class SkippedRow:
    """A row that could not be used: where and why."""

    file: str
    line: int
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class OfferTable:
    """Offers read from one source, with the rows that were skipped."""

    offers: tuple[Offer, ...]
    skipped: tuple[SkippedRow, ...]
    source: str
    age: str = ""  # how old the prices are, in words, e.g. BUNDLED_AGE
    ignored_rows: int = 0  # rows that are not GPU offers (CPU-only VMs): not errors
    notes: tuple[str, ...] = ()  # file-level remarks (e.g. unpaired GCP accelerator rows)
    format: str = ""  # "plain" or "skypilot" for one parsed file; "" for a merged table


def gpu_interconnect(gpu_name: str, gpu_count: int) -> str | None:
    """GPU-GPU link inside an instance of `gpu_count` GPUs: the spec's fabric for SXM/OAM boards,
    "PCIe" for cards (a bridge, when present, joins pairs only); None for one GPU or an unknown one.
    """
    spec = find_gpu(gpu_name)
    if spec is None or gpu_count < 2:
        return None
    return spec.interconnect if spec.form_factor.startswith(("SXM", "OAM")) else "PCIe"


def network_gbps(instance_type: str) -> float | None:
    """Published network bandwidth between instances (Gbit/s), or None when not known."""
    return _NETWORK_GBPS.get(instance_type)


def billing_granularity_s(provider: str) -> int:
    """Billing increment of `provider` in seconds (60 s when not known to be per-second)."""
    return _BILLING_S.get(provider.lower(), _DEFAULT_BILLING_S)


def _cell(row: dict[str, str], column: str) -> float | None:
    """A number cell of the offers CSV: blank -> None, else a finite number >= 0."""
    return values.optional_non_negative(row.get(column), column)


def offer_from_row(row: dict[str, str], *, default_as_of: str = BUNDLED_AS_OF) -> Offer:
    """One offer from a row of the project's CSV format; raises ValueError/KeyError/InputError
    if unusable.

    `default_as_of` dates rows whose `as_of` cell is empty.
    """
    provider = row["provider"].strip().lower()
    instance_type = row["instance_type"].strip()
    raw_gpu = row["gpu"].strip()
    if not provider or not instance_type or not raw_gpu:
        raise ValueError("provider, instance_type and gpu are required")
    if instance_type.startswith(ACCELERATOR_ONLY_PREFIX):
        raise ValueError("accelerator-only price (a GPU without its host VM): not a rentable offer")
    spec = find_gpu(raw_gpu)
    gpu_count = int(float(row["gpu_count"]))
    if gpu_count < 1:
        raise ValueError(f"gpu_count must be >= 1, got {gpu_count}")
    price = _cell(row, "price_hour_usd")
    spot = _cell(row, "spot_price_hour_usd")
    if price is None and spot is None:
        raise ValueError("no on-demand or spot price")
    memory = _cell(row, "gpu_memory_gib")
    zones = _cell(row, "zones_seen")
    source = "/".join(part for part in (row.get("source_repo"), row.get("source_path")) if part)
    commit = (row.get("source_commit") or "").strip()
    return Offer(
        provider=provider,
        instance_type=instance_type,
        region=row.get("region", "").strip() or "unknown",
        gpu_name=spec.name if spec else raw_gpu,
        gpu_count=gpu_count,
        gpu_memory_gib=memory if memory is not None else (spec.memory_gib if spec else 0.0),
        vcpus=_cell(row, "vcpus"),
        memory_gib=_cell(row, "memory_gib"),
        price_usd_per_hour=price,
        spot_price_usd_per_hour=spot,
        spot_price_max_usd_per_hour=_cell(row, "spot_price_max_hour_usd"),
        zone_count=int(zones) if zones is not None else None,
        network_gbps=network_gbps(instance_type),
        gpu_interconnect=gpu_interconnect(raw_gpu, gpu_count),
        billing_granularity_s=billing_granularity_s(provider),
        as_of=(row.get("as_of") or "").strip() or default_as_of,
        source=f"{source}@{commit[:8]}" if commit else source,
        notes=(row.get("currency_note") or "").strip(),
    )


def parse_offers_csv(
    text: str, file: str, *, age: str = "", default_as_of: str = BUNDLED_AS_OF
) -> OfferTable:
    """Parse the project's offers CSV; malformed rows are skipped and recorded, never guessed.

    Raises `DataError` when required columns are missing or no row is usable.
    """
    reader = csv.DictReader(io.StringIO(text))
    missing = {"provider", "instance_type", "gpu", "gpu_count"} - set(reader.fieldnames or ())
    if missing:
        raise DataError(f"{file}: missing columns {', '.join(sorted(missing))}")
    offers: list[Offer] = []
    skipped: list[SkippedRow] = []
    for i, row in enumerate(reader):
        try:
            offers.append(offer_from_row(row, default_as_of=default_as_of))
        except (KeyError, ValueError, TypeError, InputError) as exc:
            skipped.append(SkippedRow(file=file, line=i + 2, reason=str(exc)))
    if not offers:
        raise DataError(f"{file}: no usable offer row ({len(skipped)} rows skipped)")
    return OfferTable(
        offers=tuple(offers), skipped=tuple(skipped), source=file, age=age, format="plain"
    )


@cache
def bundled_table() -> OfferTable:
    """The bundled snapshot with its skipped rows (the 16 GCP accelerator-only rows) and age."""
    data = resources.files("gpurent.catalog.data").joinpath("offers.csv")
    return parse_offers_csv(data.read_text(encoding="utf-8"), "offers.csv", age=BUNDLED_AGE)


def bundled_offers() -> tuple[Offer, ...]:
    """The 899 offers shipped with gpurent (list prices, first half of 2026; see data/README.md).

    The CSV has 915 rows; its 16 GCP accelerator-only rows price a GPU without a host VM and are
    not offers.
    """
    return bundled_table().offers
