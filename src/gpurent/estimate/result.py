"""Result objects of the estimator (the contract the planner and the CLI build on)."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from enum import Enum, StrEnum
from typing import Any

from gpurent.catalog.precision import Precision


class Basis(StrEnum):
    """Where an estimate's efficiency came from."""

    CALIBRATED = "calibrated"  # the estimator's constants, fitted on public measurements
    MEASURED = "measured"  # anchored on the user's own measurement (`gpurent calibrate add`)


class Bottleneck(StrEnum):
    """What limits a step: compute, memory bandwidth, communication, or memory capacity (no fit)."""

    COMPUTE = "compute"
    MEMORY_BANDWIDTH = "memory-bandwidth"
    COMMUNICATION = "communication"
    MEMORY_CAPACITY = "memory-capacity"  # does not fit: nothing runs


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryBreakdown:
    """Per-GPU memory in GiB, after sharding and parallelism."""

    weights_gib: float
    gradients_gib: float
    optimizer_gib: float
    activations_gib: float
    kv_cache_gib: float
    overhead_gib: float  # CUDA context, allocator fragmentation, workspace
    capacity_gib: float  # the GPU's memory

    @property
    def total_gib(self) -> float:
        """Memory per GPU in GiB: weights, gradients, optimizer, activations, KV cache, overhead."""
        return (
            self.weights_gib
            + self.gradients_gib
            + self.optimizer_gib
            + self.activations_gib
            + self.kv_cache_gib
            + self.overhead_gib
        )

    @property
    def fits(self) -> bool:
        """Whether the memory needed per GPU fits in the GPU's capacity."""
        return self.total_gib <= self.capacity_gib

    @property
    def headroom_gib(self) -> float:
        """Positive: free memory left; negative: by how much it does not fit."""
        return self.capacity_gib - self.total_gib


@dataclass(frozen=True, slots=True, kw_only=True)
class Estimate:
    """How fast and how big one workload is on `num_gpus` GPUs of one kind."""

    model: str
    gpu: str  # canonical GpuSpec name
    num_gpus: int
    nodes: int
    precision: Precision
    batch_size_per_gpu: int
    seq_len: int | None
    throughput: float  # total across GPUs, in `throughput_unit`
    throughput_unit: str  # "images/s", "sequences/s", "tokens/s", ...
    samples_per_s: float  # total samples (images, sequences, requests) per second
    step_time_s: float
    compute_time_s: float  # per step, at calibrated efficiency
    memory_time_s: float  # per step
    communication_time_s: float  # per step, not hidden behind compute
    scaling_efficiency: float  # throughput / (num_gpus x single-GPU throughput)
    memory: MemoryBreakdown
    bottleneck: Bottleneck
    mfu: float | None  # model FLOPs utilisation, LLMs only
    time_to_finish_s: float | None  # total work / throughput, when the workload gives the work
    basis: Basis
    notes: tuple[str, ...] = ()
    # where the architecture's realized efficiency comes from (`gpurent.estimate.efficiency`):
    # "reference" (the constants were fitted on it), "checked" (public measurements check the
    # constants on it), "fitted" (a factor fitted on public measurements of it), "assumed" (no
    # public training measurement of the architecture at all)
    efficiency_basis: str = "reference"
    # the 80% interval (`gpurent.estimate.uncertainty`): multipliers on `throughput` from the
    # estimator's cross-validated error for this estimate's class (`interval_class`);
    # interval_low <= 1 <= interval_high. Time bounds are the inverse of throughput bounds.
    interval_low: float = 1.0
    interval_high: float = 1.0
    interval_coverage: float = 0.8
    interval_class: str = ""
    # whether the estimate assumed the loss fused with the output layer (`Workload.fused_loss_on`)
    fused_loss: bool = False

    def to_json(self) -> dict[str, Any]:
        """The estimate as plain JSON values (`gpurent estimate --json`): every field but
        `fused_loss`, then the interval bounds and memory totals, then `fused_loss`."""
        doc: dict[str, Any] = {
            f.name: _plain(getattr(self, f.name)) for f in fields(self) if f.name != "fused_loss"
        }
        doc["memory"] |= {
            "total_gib": _plain(self.memory.total_gib),
            "headroom_gib": _plain(self.memory.headroom_gib),
        }
        derived = {
            "fits": self.fits,
            "throughput_low": self.throughput_low,
            "throughput_high": self.throughput_high,
            "step_time_low_s": self.step_time_low_s,
            "step_time_high_s": self.step_time_high_s,
            "time_to_finish_low_s": self.time_to_finish_low_s,
            "time_to_finish_high_s": self.time_to_finish_high_s,
            "memory_per_gpu_gib": self.memory_per_gpu_gib,
            "fused_loss": self.fused_loss,
        }
        return doc | {k: _plain(v) for k, v in derived.items()}

    @property
    def fits(self) -> bool:
        """Whether the workload fits in GPU memory on this layout."""
        return self.memory.fits

    @property
    def throughput_low(self) -> float:
        """Low end of the throughput's prediction interval, in the workload's unit per second."""
        return self.throughput * self.interval_low

    @property
    def throughput_high(self) -> float:
        """High end of the throughput's prediction interval, in the workload's unit per second."""
        return self.throughput * self.interval_high

    @property
    def step_time_low_s(self) -> float:
        """Optimistic step time: the high throughput bound."""
        return self.step_time_s / self.interval_high

    @property
    def step_time_high_s(self) -> float:
        """Pessimistic step time (the 90th percentile): the low throughput bound."""
        return self.step_time_s / self.interval_low

    @property
    def time_to_finish_low_s(self) -> float | None:
        """Seconds to finish at the interval's high throughput, or None if no work is given."""
        t = self.time_to_finish_s
        return None if t is None else t / self.interval_high

    @property
    def time_to_finish_high_s(self) -> float | None:
        """Seconds to finish at the interval's low throughput, or None if no work is given."""
        t = self.time_to_finish_s
        return None if t is None else t / self.interval_low

    @property
    def memory_per_gpu_gib(self) -> float:
        """Total memory needed per GPU in GiB."""
        return self.memory.total_gib


def _plain(value: object) -> Any:
    """A field's value as JSON: enums by value, dataclasses as objects, tuples as lists,
    non-finite floats as null."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, MemoryBreakdown):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
