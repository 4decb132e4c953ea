"""Numeric precisions a job can run in, and how user-facing names map onto them."""

from __future__ import annotations

from enum import StrEnum

from gpurent.errors import NotFoundError


class Precision(StrEnum):
    """How the math of a job runs.

    - FP32: fp32 storage; matmuls on TF32 tensor cores where the GPU has them (the default of
      NVIDIA's NGC containers), else on CUDA cores.
    - STRICT_FP32: fp32 on CUDA cores only (TF32 disabled).
    - TF32: explicitly TF32 tensor cores.
    - AMP: automatic mixed precision, fp16 tensor cores with fp32 master weights.
    - FP16, BF16: half-precision training/inference with those types.
    - FP8: fp8 tensor cores (Hopper, Ada, Blackwell, MI300X), e.g. Transformer Engine.
    """

    FP32 = "fp32"
    STRICT_FP32 = "strict-fp32"
    TF32 = "tf32"
    AMP = "amp"
    FP16 = "fp16"
    BF16 = "bf16"
    FP8 = "fp8"

    @property
    def is_half(self) -> bool:
        return self in (Precision.AMP, Precision.FP16, Precision.BF16, Precision.FP8)

    @property
    def bytes_per_value(self) -> int:
        """Bytes of one activation/weight value in the compute type."""
        if self is Precision.FP8:
            return 1
        if self.is_half:
            return 2
        return 4


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
}


def parse_precision(name: str | Precision) -> Precision:
    """Resolve a precision name or alias (case-insensitive) or raise `NotFoundError`."""
    if isinstance(name, Precision):
        return name
    key = name.strip().lower()
    try:
        return PRECISION_ALIASES[key]
    except KeyError:
        raise NotFoundError("precision", name, PRECISION_ALIASES) from None
