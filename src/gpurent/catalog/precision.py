"""Numeric precisions a job can run in, and how user-facing names map onto them."""

from __future__ import annotations

from enum import StrEnum

from gpurent.inputs.choices import parse_choice


class Precision(StrEnum):
    """How the math of a job runs.

    - FP32: fp32 storage; matmuls on TF32 tensor cores where the GPU has them (the default of
      NVIDIA's NGC containers), else on CUDA cores.
    - STRICT_FP32: fp32 on CUDA cores only (TF32 disabled).
    - TF32: explicitly TF32 tensor cores.
    - AMP: automatic mixed precision, fp16 tensor cores with fp32 master weights.
    - FP16, BF16: half-precision training/inference with those types.
    - FP8: fp8 tensor cores (Hopper, Ada, Blackwell, MI300X), e.g. Transformer Engine.
    - FP8_TENSORWISE, FP8_ROWWISE, FP8_DELAYED: fp8 training recipes by scaling granularity
      (one scale per tensor from the current step, one per row, one per tensor from an amax
      history); MXFP8: fp8 with one scale per 32 values (Blackwell tensor cores); NVFP4: 4-bit
      values with one fp8 scale per 16 (Blackwell). All run on the fp8 tensor-core rate; what
      each realizes beyond it is the estimator's (`gpurent.estimate.precisions`).
    """

    FP32 = "fp32"
    STRICT_FP32 = "strict-fp32"
    TF32 = "tf32"
    AMP = "amp"
    FP16 = "fp16"
    BF16 = "bf16"
    FP8 = "fp8"
    FP8_TENSORWISE = "fp8-tensorwise"
    FP8_ROWWISE = "fp8-rowwise"
    FP8_DELAYED = "fp8-delayed"
    MXFP8 = "mxfp8"
    NVFP4 = "nvfp4"

    @property
    def is_low_float(self) -> bool:
        """fp8 or narrower (every fp8 recipe, MXFP8, NVFP4): runs on the fp8 tensor cores."""
        return self in _LOW_FLOAT

    @property
    def is_half(self) -> bool:
        """Whether the precision computes in 16 bits or fewer (AMP, FP16, BF16, FP8, FP4)."""
        return self in _HALF

    @property
    def bytes_per_value(self) -> int:
        """Bytes of one activation/weight value in the compute type."""
        if self.is_low_float:
            return 1
        if self.is_half:
            return 2
        return 4


_LOW_FLOAT = frozenset(
    {
        Precision.FP8,
        Precision.FP8_TENSORWISE,
        Precision.FP8_ROWWISE,
        Precision.FP8_DELAYED,
        Precision.MXFP8,
        Precision.NVFP4,
    }
)
# 16 bits or fewer: `Precision.is_half` (a set, not a tuple of members: the estimator asks it
# several times per estimate, and each `Precision.X` is a descriptor lookup)
_HALF = _LOW_FLOAT | {Precision.AMP, Precision.FP16, Precision.BF16}

PRECISION_ALIASES: dict[str, Precision] = {
    **{p.value: p for p in Precision},
    "fp16_amp": Precision.AMP,
    "mixed": Precision.AMP,
    "amp_fp16": Precision.AMP,
    "amp_bf16": Precision.BF16,
    "fp32_or_tf32": Precision.FP32,
    "strict_fp32": Precision.STRICT_FP32,
    "float32": Precision.FP32,
    "float16": Precision.FP16,
    "bfloat16": Precision.BF16,
    "fp8-current": Precision.FP8_TENSORWISE,
    "fp8_tensorwise": Precision.FP8_TENSORWISE,
    "fp8_rowwise": Precision.FP8_ROWWISE,
    "fp8_delayed": Precision.FP8_DELAYED,
    "mx-fp8": Precision.MXFP8,
    "nv-fp4": Precision.NVFP4,
}


def parse_precision(name: str | Precision, where: str | None = None) -> Precision:
    """Resolve a precision name or alias (case-insensitive) or raise `NotFoundError` (an
    `InputError`) with "did you mean" (`gpurent.inputs.choices.parse_choice`)."""
    return parse_choice(Precision, name, what="precision", where=where, aliases=PRECISION_ALIASES)
