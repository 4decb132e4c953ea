"""What the user allows and wants: constraints on offers and layouts, and the ranking objective.

Everything here is a typed value; parsing of user text (durations, comma lists) lives in the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from gpurent.errors import InputError


class Objective(StrEnum):
    """How candidates are ranked."""

    CHEAPEST = "cheapest"  # lowest cost to finish
    FASTEST = "fastest"  # shortest time to finish
    DEADLINE = "deadline"  # cheapest among those that finish by the deadline
    THROUGHPUT_PER_DOLLAR = "throughput-per-dollar"  # most work per dollar of running cost


class Risk(StrEnum):
    """Which end of each estimate's 80% interval the ranking uses."""

    MEDIAN = "median"  # the estimate itself
    P90 = "p90"  # the pessimistic end: the 90th percentile time and cost (low throughput bound)


class PricingModel(StrEnum):
    """How an instance is paid for."""

    ON_DEMAND = "on-demand"
    SPOT = "spot"
    RESERVED = "reserved"  # a committed-use price (offer terms or a user discount)


class Interconnect(StrEnum):
    """Required link between the GPUs of one instance (multi-GPU candidates only)."""

    ANY = "any"
    NVLINK = "nvlink"  # NVLink/NVSwitch inside the node; >= 100 Gbit/s known network across nodes
    PCIE = "pcie"  # PCIe only (e.g. to match a PCIe fleet)


DEFAULT_MAX_GPUS = 64
DEFAULT_MAX_NODES = 4
DEFAULT_TOP_N = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class Constraints:
    """Limits on what may be rented. Empty tuples mean "no restriction".

    `regions` match a region name exactly or by prefix (``us-`` matches every ``us-*`` region);
    `gpus` are canonical GPU names (resolve aliases before building this); `min_gpu_memory_gib`
    is per GPU.
    """

    deadline_s: float | None = None
    budget_usd: float | None = None
    providers: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()
    max_gpus: int = DEFAULT_MAX_GPUS
    max_nodes: int = DEFAULT_MAX_NODES
    min_gpu_memory_gib: float | None = None
    interconnect: Interconnect = Interconnect.ANY
    pricing: tuple[PricingModel, ...] = (PricingModel.ON_DEMAND, PricingModel.SPOT)
    objective: Objective = Objective.CHEAPEST
    top_n: int = DEFAULT_TOP_N
    risk: Risk = Risk.MEDIAN

    def __post_init__(self) -> None:
        if self.deadline_s is not None and not self.deadline_s > 0:
            raise InputError(f"--deadline must be positive, got {self.deadline_s} s")
        if self.budget_usd is not None and not self.budget_usd > 0:
            raise InputError(f"--budget must be a positive amount of USD, got {self.budget_usd}")
        if self.max_gpus < 1:
            raise InputError(f"--max-gpus must be >= 1, got {self.max_gpus}")
        if self.max_nodes < 1:
            raise InputError(f"--max-nodes must be >= 1, got {self.max_nodes}")
        if self.min_gpu_memory_gib is not None and self.min_gpu_memory_gib < 0:
            raise InputError(f"--min-gpu-memory must be >= 0 GiB, got {self.min_gpu_memory_gib}")
        if not self.pricing:
            raise InputError("--pricing needs at least one of on-demand, spot, reserved")
        if self.top_n < 1:
            raise InputError(f"--top must be >= 1, got {self.top_n}")
        if self.objective is Objective.DEADLINE and self.deadline_s is None:
            raise InputError("--objective deadline needs --deadline (e.g. --deadline 3d)")

    def region_allowed(self, region: str) -> bool:
        return not self.regions or any(region == r or region.startswith(r) for r in self.regions)

    def describe(self) -> tuple[str, ...]:
        """The active constraints as short human lines (for reports)."""
        from gpurent.units import format_duration, format_usd

        lines = [f"objective: {self.objective.value}"]
        if self.risk is not Risk.MEDIAN:
            lines.append(
                f"risk: {self.risk.value} (ranked by the pessimistic end of the 80% range)"
            )
        if self.deadline_s is not None:
            lines.append(f"deadline: {format_duration(self.deadline_s)}")
        if self.budget_usd is not None:
            lines.append(f"budget: {format_usd(self.budget_usd)}")
        if self.providers:
            lines.append(f"providers: {', '.join(self.providers)}")
        if self.regions:
            lines.append(f"regions: {', '.join(self.regions)}")
        if self.gpus:
            lines.append(f"GPUs: {', '.join(self.gpus)}")
        if self.min_gpu_memory_gib is not None:
            lines.append(f"min GPU memory: {self.min_gpu_memory_gib:g} GiB")
        if self.interconnect is not Interconnect.ANY:
            lines.append(f"interconnect: {self.interconnect.value}")
        lines.append(f"max GPUs: {self.max_gpus}, max nodes: {self.max_nodes}")
        lines.append(f"pricing: {', '.join(p.value for p in self.pricing)}")
        return tuple(lines)
