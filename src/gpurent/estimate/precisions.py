"""Low-precision training recipes: which GPUs run them, and what they realize beyond `fp8`.

Every fp8 recipe, MXFP8 and NVFP4 run on the fp8 tensor-core rate in the time model (the
catalog's `fp8_tflops`; datasheet FP4 rates are not used). What a recipe realizes relative to
an `fp8` estimate is one factor taken from public training measurements, with a log-spread
from those measurements (widened where they are few); a recipe without an allowed public
measurement is factor 1 with a stated, wider spread. Decoder-LLM training only: the only
measurements are LLM pretraining runs, so other models and inference keep the `fp8` figure
(said in the notes).

Sources (read 2026-12-01):
- NVFP4 vs FP8: NVIDIA Technical Blog, "Train Models Faster with JAX and MaxText Using NVFP4 on
  NVIDIA Blackwell" (developer.nvidia.com/blog/train-models-faster-with-jax-and-maxtext-using-
  nvfp4-on-nvidia-blackwell/), per-GPU TFLOP/s with FP8 -> NVFP4 at equal batch and layout:
  Llama 3 8B on GB200 149.7 -> 171.3, on GB300 175.9 -> 230.1; Llama 3.1 405B on GB200
  155.7 -> 222.4, on GB300 210.3 -> 363.3 (figures as reproduced at agenticdaily.ai, "Train
  Llama 3.1 405B 73% faster with NVIDIA NVFP4 on Blackwell"). Ratios 1.144, 1.308, 1.428,
  1.728: geometric mean 1.386; log deviations -0.192..+0.220, widened x1.5 (4 measurements).
- fp8-tensorwise, fp8-rowwise, fp8-delayed, MXFP8: no allowed public per-recipe throughput
  was read (the torchao/torchtitan figures are torchtitan measurements, which this project
  avoids): factor 1 against `fp8`, spread +-15 % assumed (NVIDIA's NeMo FP8 post,
  "Faster Training Throughput in FP8 Precision with NVIDIA NeMo", reports finer scaling
  granularity costing some throughput against per-tensor scaling, without a figure read here).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpurent.catalog.gpu import GpuSpec
from gpurent.catalog.precision import Precision
from gpurent.errors import InputError

BLOCK_SCALED_ARCHITECTURES: dict[Precision, tuple[str, ...]] = {
    Precision.MXFP8: ("Blackwell", "CDNA4"),  # OCP MX block scaling in the tensor cores
    Precision.NVFP4: ("Blackwell",),  # NVIDIA's 4-bit format: Blackwell tensor cores only
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Recipe:
    """What `precision` realizes on top of an `fp8` estimate of decoder-LLM training."""

    precision: Precision
    speedup_vs_fp8: float
    log_low: float  # spread of log(measured / factor) over its measurements (or assumed)
    log_high: float
    measurements: int  # 0: assumed
    source: str


_ASSUMED_SPREAD = math.log(1.15)
RECIPES: dict[Precision, Recipe] = {
    Precision.NVFP4: Recipe(
        precision=Precision.NVFP4,
        speedup_vs_fp8=1.386,
        log_low=-0.288,
        log_high=0.330,
        measurements=4,
        source="NVIDIA MaxText NVFP4 blog: Llama 3 8B / 3.1 405B on GB200 and GB300, "
        "NVFP4 / FP8 = 1.14-1.73",
    ),
    **{
        p: Recipe(
            precision=p,
            speedup_vs_fp8=1.0,
            log_low=-_ASSUMED_SPREAD,
            log_high=_ASSUMED_SPREAD,
            measurements=0,
            source="no allowed public measurement read: assumed as fp8, +-15 %",
        )
        for p in (
            Precision.FP8_TENSORWISE,
            Precision.FP8_ROWWISE,
            Precision.FP8_DELAYED,
            Precision.MXFP8,
        )
    },
}


def check_precision(gpu: GpuSpec, precision: Precision) -> None:
    """Raise a one-line InputError naming the GPU and precision when `gpu` cannot run it:
    fp8 and narrower without fp8 tensor cores (T4, V100, A100, ...), MXFP8 before Blackwell /
    CDNA4, NVFP4 before Blackwell."""
    if not precision.is_low_float:
        return
    if gpu.fp8_tflops is None:
        raise InputError(
            f"{precision.value} on {gpu.name}: {gpu.name} ({gpu.architecture}) has no fp8 "
            "tensor cores (fp8 needs Ada, Hopper, Blackwell or CDNA3 and later): use bf16 or "
            "amp"
        )
    archs = BLOCK_SCALED_ARCHITECTURES.get(precision)
    if archs is not None and gpu.architecture not in archs:
        raise InputError(
            f"{precision.value} on {gpu.name}: {precision.value} needs "
            f"{' or '.join(archs)} tensor cores and {gpu.name} is {gpu.architecture}: "
            "use fp8 or bf16"
        )


def recipe_of(precision: Precision) -> Recipe | None:
    """The recipe table entry of `precision` (None for `fp8` itself and wider precisions)."""
    return RECIPES.get(precision)


__all__ = ["BLOCK_SCALED_ARCHITECTURES", "RECIPES", "Recipe", "check_precision", "recipe_of"]
