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

What fp8 itself realizes (`low_float_gemm_gain`): Transformer Engine, torchao and Megatron run the
linear layers' GEMMs in fp8 and keep attention (FlashAttention/cuDNN SDPA), norms, activations
and the optimizer in 16 or 32 bits. So only the matmul term of a training step speeds up, by the
GPU's fp8/bf16 peak ratio (2 on every fp8 GPU in the catalog) times a realized share
`FP8_GEMM_REALIZATION`: the per-tensor scaling, the casts and the transposes cost part of the
doubling. 0.78 is read from two public end-to-end pairs, each turned into a GEMM gain with the
time split of this estimator (the GEMM share of the step, 0.85-0.90 for these shapes):
- NVIDIA/Megatron-LM issue #396 (2023-07-03): GPT 13B on an H100 machine, 0.34 s/step in bf16 ->
  0.24 s/step with `--fp8-hybrid --transformer-impl transformer_engine` (x1.42 end to end;
  GEMM share 0.88 -> GEMM gain 1.55, 0.78 of the doubling);
- vllm-project/vllm PR #19566: GEMM-level B200 figures, N = K = 4096 at M = 1024 tokens, bf16
  1,380 TFLOP/s vs fp8 per-tensor 1,945 TFLOP/s including the activation quantisation (x1.41,
  0.70 of the doubling) and 2,341 TFLOP/s without it (x1.70, 0.85): 0.78 lies between the two.
The spread of those readings (0.70-0.85 of the doubling) is about +-10 %.

The output layer (LM head) stays in bf16 (`llm_training_gemm_gain`): fp8 recipes quantize the
transformer layers' linear GEMMs, and the vocabulary projection is left at 16 bits unless a
recipe opts in. NVIDIA's MLPerf Training v6.0 NeMo configs make that opt-in explicit: the
GB300 DeepSeek-V3 configs add `export FP8_OUTPUT_PROJ=True` under "# MXFP8 LM-head output
projection" and the GB200 ones do not (Richardyu114/training_results_v6.0 @ eabf23a,
`NVIDIA/benchmarks/deepseekv3_671b/implementations/*/config_GB*_*_mxfp8_full_cg.sh`). Its share
of the matmul work is vocab x hidden / active parameters: 0.5 % of GPT-3 175B's, 6.5 % of Llama
3 8B's, 14 % of gpt-oss-20b's.
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


FP8_GEMM_REALIZATION = 0.78  # share of the fp8/bf16 peak ratio an fp8 training GEMM realizes


def low_float_gemm_gain(gpu: GpuSpec, precision: Precision) -> float:
    """How much faster the training GEMMs run in `precision` than in bf16 on `gpu`: 1 for 16-
    and 32-bit precisions, else FP8_GEMM_REALIZATION x the fp8/bf16 peak ratio (at least 1: a
    GPU whose fp8 rate equals its bf16 rate gains nothing). Attention and memory-bound work keep
    their bf16 time (module docstring)."""
    if not precision.is_low_float:
        return 1.0
    peak_ratio = gpu.peak_tflops(precision) / gpu.peak_tflops(Precision.BF16)
    return max(1.0, FP8_GEMM_REALIZATION * peak_ratio)


def llm_training_gemm_gain(gpu: GpuSpec, precision: Precision, head_share: float) -> float:
    """The decoder-LLM training GEMMs' gain in `precision` over bf16 when the share
    `head_share` of their FLOPs (the output layer) stays bf16: the low-float gain on the rest,
    1 on the head (time 1 - s + s x gain per bf16 unit, so gain / (1 + s (gain - 1)))."""
    gain = low_float_gemm_gain(gpu, precision)
    return gain / (1.0 + head_share * (gain - 1.0))


def recipe_of(precision: Precision) -> Recipe | None:
    """The recipe table entry of `precision` (None for `fp8` itself and wider precisions)."""
    return RECIPES.get(precision)


__all__ = [
    "BLOCK_SCALED_ARCHITECTURES",
    "FP8_GEMM_REALIZATION",
    "RECIPES",
    "Recipe",
    "check_precision",
    "llm_training_gemm_gain",
    "low_float_gemm_gain",
    "recipe_of",
]
