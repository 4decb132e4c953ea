"""The fused attention kernel of decoder-LLM training: what share of the GPU's bf16 tensor-core
peak each kernel realizes on each architecture (docs/estimator.md, "The attention kernel").

The estimator's attention term was fitted on MosaicML llm-foundry's A100 table, whose fitted
a_attn means attention ran at 1 / a_attn = 28 % of the A100's peak: inside FlashAttention-1's
25-40 % and far below FlashAttention-2's ~50 %. Users run newer kernels, which this module
prices from kernel benchmarks instead: a kernel's share s(kernel, architecture) gives the
attention time x_attn * P_ref / P_gpu / s, where x_attn is the attention FLOPs' time at the
reference GPU's peak. Shares are for training (forward and backward, causal, head dim 128,
bf16, sequences of about 4K tokens; causal FLOPs counted as the lower triangle only, as
FlashAttention's benchmarks and `perf.llm_training_features` count them).

Sources (each share's derivation):
- FlashAttention-2 on an A100, causal, seq 4096, forward + backward: 156-159 TFLOP/s of 312,
  **0.50** (liangan1/GPU_travel `performance/flash-attn/README.md`). Ada runs the same sm80
  kernels; no Ada figure was read, so Ada is taken as Ampere.
- FlashAttention-2 on an H100: **0.35** ("FlashAttention-2 achieving only 35% utilization on
  the H100 GPU", Shah et al. 2024, FlashAttention-3, arXiv:2407.08608, abstract).
- FlashAttention-3 on an H100: the same paper's 1.5-2.0x over FlashAttention-2, its low end
  taken since the backward pass (two thirds of the FLOPs) gains least: 0.35 x 1.5 = **0.525**.
  Its forward pass alone reaches 590 TFLOP/s (0.60) at batch 4, 16 heads, seq 4096, head dim
  128 (pytorch/benchmark commit ff65cb675209d2308f7d27c6920af8a32de9aa90, test plan), so
  training runs at 0.525 / 0.60 = 0.875 of the forward share.
- cuDNN fused attention on an H100: taken equal to FlashAttention-3 (no figure read).
- FlashAttention-4 on a B200: forward up to 1,605 TFLOP/s of 2,250, 0.71 (Together AI,
  "FlashAttention-4" blog, 2026); training at Hopper's 0.875 of the forward share: **0.62**.
- cuDNN 9.13 on a B200: FlashAttention-4 is up to 1.3x faster (same blog), so its forward
  share is 0.71 / 1.3 = 0.55 and training 0.55 x 0.875 = **0.48**.

Which kernel `auto` means: what PyTorch's scaled_dot_product_attention runs (FlashAttention-2
on Ampere, Ada and Hopper; cuDNN on Blackwell, where FlashAttention-2 has no native kernel),
under every stack: the `tuned` stack's fitted speeds divide the rest of the step, and MLPerf's
rows cannot tell a faster kernel from faster GEMMs (docs/estimator.md). Volta, Turing and AMD
GPUs have no share here: they keep the fitted term moved by the BERT-large transfer ratio, as
before.
"""

from __future__ import annotations

from gpurent.errors import InputError
from gpurent.estimate.uncertainty import Interval, stretched_interval
from gpurent.workload.spec import AttentionKernel

# Architectures whose attention moves by the tensor-peak ratio (one share per kernel)
FLASH_ATTENTION_ARCHITECTURES = frozenset({"Ampere", "Ada", "Hopper", "Blackwell"})

# s(kernel, architecture): the share of the bf16 dense peak the kernel realizes in training
# (module docstring for each figure's source)
KERNEL_PEAK_SHARE: dict[AttentionKernel, dict[str, float]] = {
    AttentionKernel.FA2: {"Ampere": 0.50, "Ada": 0.50, "Hopper": 0.35},
    AttentionKernel.FA3: {"Hopper": 0.525},
    AttentionKernel.CUDNN: {"Hopper": 0.525, "Blackwell": 0.48},
    AttentionKernel.FA4: {"Blackwell": 0.62},
}

# The range each share may take given its source, (low, high): a measured figure +-5 %, one
# quoted figure +-10 %, a figure taken from another architecture or kernel +-20 %, a derived
# figure its source's range (FA3: the paper's 1.5-2.0x; cuDNN on Blackwell: "up to 1.3x"
# below FA4, so at most FA4's share; FA4: "up to" 71 %, so down to Hopper's 0.875 x 0.6).
KERNEL_SHARE_RANGE: dict[AttentionKernel, dict[str, tuple[float, float]]] = {
    AttentionKernel.FA2: {"Ampere": (0.475, 0.525), "Ada": (0.40, 0.60), "Hopper": (0.315, 0.385)},
    AttentionKernel.FA3: {"Hopper": (0.525, 0.70)},
    AttentionKernel.CUDNN: {"Hopper": (0.42, 0.70), "Blackwell": (0.42, 0.62)},
    AttentionKernel.FA4: {"Blackwell": (0.50, 0.66)},
}

# what PyTorch's scaled_dot_product_attention dispatches to, per architecture
_SDPA_KERNEL = {
    "Ampere": AttentionKernel.FA2,
    "Ada": AttentionKernel.FA2,
    "Hopper": AttentionKernel.FA2,
    "Blackwell": AttentionKernel.CUDNN,
}


def resolved_kernel(kernel: AttentionKernel, architecture: str) -> AttentionKernel:
    """The kernel an estimate prices: `kernel`, or for `auto` PyTorch SDPA's on this
    architecture (`fitted` where the architecture has no kernel share, e.g. Volta or AMD).

    Raises InputError for a named kernel the architecture cannot run or has no figure for."""
    if kernel is AttentionKernel.AUTO:
        return _SDPA_KERNEL.get(architecture, AttentionKernel.FITTED)
    if kernel is not AttentionKernel.FITTED and architecture not in KERNEL_PEAK_SHARE[kernel]:
        known = ", ".join(
            k.value for k, shares in KERNEL_PEAK_SHARE.items() if architecture in shares
        )
        runs = f"give one of: {known}, auto or fitted" if known else "give auto or fitted"
        raise InputError(
            f"attention kernel {kernel.value} has no figure on {architecture} GPUs; {runs}"
        )
    return kernel


def kernel_peak_share(kernel: AttentionKernel, architecture: str) -> float | None:
    """s(kernel, architecture) of a kernel `resolved_kernel` returned, or None for `fitted`
    (the fitted a_attn decides). `auto` is a request, not a kernel: resolve it first."""
    if kernel is AttentionKernel.AUTO:
        raise ValueError("kernel_peak_share takes a resolved kernel (resolved_kernel), not auto")
    if kernel is AttentionKernel.FITTED:
        return None
    return KERNEL_PEAK_SHARE[kernel][architecture]


_KERNEL_NAMES = {
    AttentionKernel.FITTED: "the reference data's kernel (fitted, about FlashAttention-1's speed)",
    AttentionKernel.FA2: "FlashAttention-2",
    AttentionKernel.FA3: "FlashAttention-3",
    AttentionKernel.CUDNN: "cuDNN fused attention",
    AttentionKernel.FA4: "FlashAttention-4",
}


def attention_note(kernel: AttentionKernel, architecture: str) -> str:
    """One line for an estimate's notes: the kernel priced and, for a share, its figure."""
    used = resolved_kernel(kernel, architecture)
    share = kernel_peak_share(used, architecture)
    how = " (auto)" if kernel is AttentionKernel.AUTO else ""
    at = f" at {100 * share:.1f} % of the bf16 peak" if share is not None else ""
    return f"attention kernel{how}: {_KERNEL_NAMES[used]}{at}; --attention-kernel to change"


def kernel_interval(
    interval: Interval, kernel: AttentionKernel, architecture: str, attention_share: float
) -> Interval:
    """`interval` widened by the kernel's share range (`KERNEL_SHARE_RANGE`) where attention is
    `attention_share` of the step: attention at the low share stretches the step by
    1 - f + f s / s_low, at the high share by 1 - f + f s / s_high. The fitted kernel (and GPUs
    with no kernel share) keep `interval`: their error is in its cross-validation."""
    used = resolved_kernel(kernel, architecture)
    share = kernel_peak_share(used, architecture)
    if share is None or attention_share <= 0.0:
        return interval
    s_low, s_high = KERNEL_SHARE_RANGE[used][architecture]
    return stretched_interval(
        interval,
        attention_share,
        share / s_low,
        share / s_high,
        f"{used.value} share {s_low:g}-{s_high:g} of peak on {100 * attention_share:.0f} % "
        "of the step",
    )


__all__ = [
    "FLASH_ATTENTION_ARCHITECTURES",
    "KERNEL_PEAK_SHARE",
    "KERNEL_SHARE_RANGE",
    "attention_note",
    "kernel_interval",
    "kernel_peak_share",
    "resolved_kernel",
]
