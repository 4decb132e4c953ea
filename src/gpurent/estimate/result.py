"""Result objects of the estimator (the contract the planner and the CLI build on)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Bottleneck(StrEnum):
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
    precision: str
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
    basis: str  # "measured" | "calibrated" | "roofline": where the efficiency came from
    notes: tuple[str, ...] = ()
    # where the architecture's realized efficiency comes from (`gpurent.estimate.efficiency`):
    # "reference" (the constants were fitted on it), "checked" (public measurements check the
    # constants on it), "fitted" (a factor fitted on public measurements of it), "assumed" (no
    # public training measurement of the architecture at all)
    efficiency_basis: str = "reference"

    @property
    def fits(self) -> bool:
        return self.memory.fits

    @property
    def memory_per_gpu_gib(self) -> float:
        return self.memory.total_gib
