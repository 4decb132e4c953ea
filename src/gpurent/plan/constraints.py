"""What the user allows and wants: constraints on offers and layouts, and the ranking objective.

Everything here is a typed value; parsing of user text (durations, comma lists) lives in the CLI.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from gpurent.catalog.links import Interconnect
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


def region_matches(region: str, patterns: Iterable[str]) -> bool:
    """`region` (one whole name) equals or starts with one of `patterns`, ignoring case."""
    name = region.lower()
    return any(name.startswith(p.lower()) for p in patterns)


def parse_regions(values: Iterable[str] | None, known: set[str]) -> tuple[str, ...]:
    """Each `--region` value: one region's whole name, kept whole, when it is exactly one of
    `known` (ignoring case and spacing around its commas), else a comma list of names/prefixes.
    Vast names its regions "Alberta, CA, NA", so commas cannot always be separators."""

    def squeeze(text: str) -> str:
        return ",".join(part.strip() for part in text.lower().split(","))

    whole = {squeeze(name): name for name in known if "," in name}
    out: list[str] = []
    for value in values or ():
        name = whole.get(squeeze(value.strip()))
        out.extend(
            [name] if name is not None else [x.strip() for x in value.split(",") if x.strip()]
        )
    return tuple(dict.fromkeys(out))


def join_names(names: Iterable[str]) -> str:
    """Names for a message: ", "-separated, or "; " when a name has a comma of its own (vast's
    "Alberta, CA, NA")."""
    items = list(names)
    return ("; " if any("," in n for n in items) else ", ").join(items)


DEFAULT_MAX_GPUS = 64
DEFAULT_MAX_NODES = 4
DEFAULT_TOP_N = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class Constraints:
    """Limits on what may be rented. Empty tuples mean "no restriction".

    `regions` match an offer's region name (one string, commas and all) exactly or by prefix,
    case-insensitively (``us-`` matches every ``us-*`` region); `exclude_regions` likewise drop
    offers; `gpus` are canonical GPU names (resolve aliases before building this);
    `min_gpu_memory_gib` is per GPU. The price caps apply to the price paid for the candidate's
    pricing model (the spot price for spot rows): per instance, and per cluster (all nodes).
    """

    deadline_s: float | None = None
    budget_usd: float | None = None
    providers: tuple[str, ...] = ()
    exclude_providers: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    exclude_regions: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()
    max_gpus: int = DEFAULT_MAX_GPUS
    max_nodes: int = DEFAULT_MAX_NODES
    min_gpu_memory_gib: float | None = None
    interconnect: Interconnect = Interconnect.ANY
    pricing: tuple[PricingModel, ...] = (PricingModel.ON_DEMAND, PricingModel.SPOT)
    objective: Objective = Objective.CHEAPEST
    top_n: int = DEFAULT_TOP_N
    risk: Risk = Risk.MEDIAN
    max_price_usd_per_hour: float | None = None  # per instance
    max_cluster_price_usd_per_hour: float | None = None  # all nodes of one candidate
    min_availability: float | None = None  # least availability confidence (0-1), where known

    def __post_init__(self) -> None:
        if self.min_availability is not None and not 0 <= self.min_availability <= 1:
            raise InputError(
                f"--min-availability is a confidence in [0, 1], got {self.min_availability}"
            )
        if self.deadline_s is not None and not self.deadline_s > 0:
            raise InputError(f"--deadline must be positive, got {self.deadline_s} s")
        if self.budget_usd is not None and not self.budget_usd > 0:
            raise InputError(f"--budget must be a positive amount of USD, got {self.budget_usd}")
        for flag, cap in (
            ("--max-price-per-hour", self.max_price_usd_per_hour),
            ("--max-cluster-price-per-hour", self.max_cluster_price_usd_per_hour),
        ):
            if cap is not None and not 0 < cap < math.inf:
                raise InputError(f"{flag} must be a positive amount of USD per hour, got {cap}")
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
        """In `regions` (when any are given) and not in `exclude_regions`."""
        return (not self.regions or region_matches(region, self.regions)) and not (
            self.exclude_regions and region_matches(region, self.exclude_regions)
        )

    def price_allowed(self, price_usd_per_hour: float, nodes: int) -> bool:
        """Under both price caps: per instance and for all `nodes` instances."""
        per, cluster = self.max_price_usd_per_hour, self.max_cluster_price_usd_per_hour
        return (per is None or price_usd_per_hour <= per) and (
            cluster is None or price_usd_per_hour * nodes <= cluster
        )

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
        if self.exclude_providers:
            lines.append(f"excluded providers: {', '.join(self.exclude_providers)}")
        if self.regions:
            lines.append(f"regions: {join_names(self.regions)}")
        if self.exclude_regions:
            lines.append(f"excluded regions: {join_names(self.exclude_regions)}")
        if self.max_price_usd_per_hour is not None:
            lines.append(f"max price: {format_usd(self.max_price_usd_per_hour)}/h per instance")
        if self.min_availability is not None:
            lines.append(f"min availability confidence: {self.min_availability:g}")
        if self.max_cluster_price_usd_per_hour is not None:
            lines.append(
                f"max cluster price: {format_usd(self.max_cluster_price_usd_per_hour)}/h "
                "(all nodes)"
            )
        if self.gpus:
            lines.append(f"GPUs: {', '.join(self.gpus)}")
        if self.min_gpu_memory_gib is not None:
            lines.append(f"min GPU memory: {self.min_gpu_memory_gib:g} GiB")
        if self.interconnect is not Interconnect.ANY:
            lines.append(f"interconnect: {self.interconnect.value}")
        lines.append(f"max GPUs: {self.max_gpus}, max nodes: {self.max_nodes}")
        lines.append(f"pricing: {', '.join(p.value for p in self.pricing)}")
        return tuple(lines)
