"""Offer: one rentable instance type in one region, with its prices and provenance."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True, kw_only=True)
class ReservedTerm:
    """A committed-use price: `term_months` of commitment at `price_usd_per_hour` (instance)."""

    term_months: int
    price_usd_per_hour: float
    upfront: str = "none"  # "none" | "partial" | "all"


@dataclass(frozen=True, slots=True, kw_only=True)
class Offer:
    """One instance type in one region. Prices are for the whole instance (all its GPUs)."""

    provider: str
    instance_type: str
    region: str
    gpu_name: str  # canonical GpuSpec.name, or the raw name when the GPU is not in the catalog
    gpu_count: int
    gpu_memory_gib: float  # per GPU
    vcpus: float | None
    memory_gib: float | None  # host RAM
    price_usd_per_hour: float | None  # on-demand; None when only spot is sold
    spot_price_usd_per_hour: float | None = None
    spot_price_max_usd_per_hour: float | None = None
    zones: tuple[str, ...] = ()
    zone_count: int | None = None
    local_disk_gb: float | None = None
    network_gbps: float | None = None  # between instances, Gbit/s
    gpu_interconnect: str | None = None  # inside the instance: "NVLink4", "PCIe", ...
    reserved: tuple[ReservedTerm, ...] = ()
    billing_granularity_s: int = 1
    as_of: str = ""  # ISO date or a stated approximation
    source: str = ""
    notes: str = ""
    extra: tuple[tuple[str, str], ...] = field(default_factory=tuple)

    @property
    def key(self) -> str:
        """A stable identifier: provider/instance_type/region."""
        return f"{self.provider}/{self.instance_type}/{self.region}"

    @property
    def price_usd_per_gpu_hour(self) -> float | None:
        """On-demand price in USD per GPU-hour, or None when the offer has no on-demand price."""
        if self.price_usd_per_hour is None:
            return None
        return self.price_usd_per_hour / self.gpu_count

    @property
    def spot_price_usd_per_gpu_hour(self) -> float | None:
        """Spot price in USD per GPU-hour, or None when the offer has no spot price."""
        if self.spot_price_usd_per_hour is None:
            return None
        return self.spot_price_usd_per_hour / self.gpu_count
