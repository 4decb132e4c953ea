"""GpuSpec: the datasheet facts of one GPU model."""

from __future__ import annotations

from dataclasses import dataclass

from gpurent.catalog.precision import Precision

# Architectures of the table without tensor cores: their `fp16_tflops` is the CUDA cores'
# half-precision matmul rate (P100: paired halves at 2x fp32; P40/P4: the fp32 rate), see
# catalog/data/README.md
NO_TENSOR_CORE_ARCHITECTURES = frozenset({"Pascal"})


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuSpec:
    """Datasheet facts of one GPU model. Every rate is dense (no 2:4 sparsity).

    Tensor rates for GeForce cards are the fp32-accumulate rate (half the fp16-accumulate rate
    marketed), since training frameworks accumulate in fp32.
    """

    name: str  # canonical, e.g. "H100-SXM5-80GB"
    aliases: tuple[str, ...]
    vendor: str  # "nvidia" | "amd"
    architecture: str  # "Volta", "Ampere", "Hopper", ...
    form_factor: str  # "SXM", "PCIe", ...
    memory_gib: float
    memory_type: str
    memory_bandwidth_gbps: float  # GB/s
    fp32_tflops: float  # non-tensor fp32
    tf32_tflops: float | None  # None: no TF32 tensor cores
    fp16_tflops: float  # fp16/bf16 tensor, fp32 accumulate
    bf16_supported: bool
    fp8_tflops: float | None
    interconnect: str  # "NVLink4", "NVLink bridge", "PCIe", "Infinity Fabric"
    interconnect_gbps: float | None  # total GPU-GPU bandwidth per GPU, GB/s; None = PCIe only
    pcie_gen: int
    tdp_w: float
    confidence: str  # "high" | "medium" | "low"
    source: str
    notes: str = ""
    # streaming multiprocessors (AMD: compute units) and boost clock, MHz; None where no public
    # source was found. Their product is the SM-side issue rate the estimator's memory term uses.
    sm_count: int | None = None
    boost_clock_mhz: float | None = None
    # What the driver lets a job allocate, GiB, where a cloud catalog reports it (the datasheet's
    # "24 GB" L4 shows 22.35 GiB); None: only the nominal figure is known.
    usable_memory_gib: float | None = None
    # GPUs that share one scale-up fabric at full link speed: 8 on an HGX/OAM board (NVLink,
    # xGMI), 72 in a GB200/GB300 NVL72 rack, 2 for bridged pairs, 1 for PCIe-only cards; None
    # where the row does not say.
    scale_up_domain_gpus: int | None = None

    @property
    def capacity_gib(self) -> float:
        """Memory a job can fill: the reported usable figure, else the nominal one."""
        return self.usable_memory_gib if self.usable_memory_gib is not None else self.memory_gib

    @property
    def sm_cycles_per_s(self) -> float | None:
        """SM count x boost clock (SM-cycles per second; AMD: CU-cycles), None when either is
        unknown."""
        if self.sm_count is None or self.boost_clock_mhz is None:
            return None
        return self.sm_count * self.boost_clock_mhz * 1e6

    def peak_tflops(self, precision: Precision) -> float:
        """Dense peak TFLOP/s for matmul-heavy work in `precision` on this GPU.

        FP32 uses TF32 tensor cores where present (NGC default); BF16 on a GPU without bf16
        support falls back to the fp32 rate (frameworks emulate it); FP8 without fp8 tensor cores
        runs at the fp16 rate.
        """
        if precision is Precision.STRICT_FP32:
            return self.fp32_tflops
        if precision in (Precision.FP32, Precision.TF32):
            return self.tf32_tflops if self.tf32_tflops is not None else self.fp32_tflops
        if precision is Precision.BF16 and not self.bf16_supported:
            return self.fp32_tflops
        if precision.is_low_float:
            return self.fp8_tflops if self.fp8_tflops is not None else self.fp16_tflops
        return self.fp16_tflops

    @property
    def has_tensor_cores(self) -> bool:
        """Whether matmuls in half precision run on tensor cores (every architecture from Volta)."""
        return self.architecture not in NO_TENSOR_CORE_ARCHITECTURES

    @property
    def has_nvlink(self) -> bool:
        """Whether the GPU has a fast GPU-to-GPU link (NVLink or similar) with a known bandwidth."""
        return self.interconnect_gbps is not None
