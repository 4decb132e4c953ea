"""Per-architecture realized efficiency: the share of its datasheet rates an architecture's
hardware and software stack realizes in training, relative to what the fitted constants predict.

The step-time constants are fitted on NVIDIA GPUs (Lambda's Volta to Ada rows, MosaicML's A100
runs). An architecture those constants do not describe gets one factor, fitted on public
training measurements of that architecture: every device term of the step (tensor, memory,
CUDA-core, SM-side) is divided by it. One parameter per architecture (and per GPU where a GPU
has `MIN_GPU_ROWS` rows of its own: `FITTED_GPUS`), fitted by
`benchmarks/fit_arch_efficiency.py` on `benchmarks/data/mlperf_training_8gpu.csv` (MLPerf
Training v5.0 and v5.1 result logs, 8-GPU systems): the geometric mean over the architecture's
rows of (measured tokens/s / the same round's median of its NVIDIA peer: H200 for CDNA3, B200
for CDNA4) / (predicted ratio with the factor 1). Held out and never read: MLPerf Training v4.0.

`basis` says where the factor comes from:
- "reference": the constants were fitted on this architecture's GPUs (factor 1);
- "checked": not in the constants' fitting data, but public measurements of it check them
  (held-out rows, MLPerf ratios; factor 1, their errors in docs/benchmarks.md);
- "fitted": fitted on public measurements of this architecture (`rows` of them);
- "assumed": no public training measurement at all: factor 1, and the estimate says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpurent.catalog.gpu import GpuSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class ArchEfficiency:
    """A GPU architecture's efficiency factor against the fitted model, with basis and source."""

    architecture: str
    factor: float  # realized share of the datasheet rates relative to the fitted model
    basis: str  # "reference" | "checked" | "fitted" | "assumed"
    rows: int  # public measurements the factor was fitted on (0: not fitted)
    source: str


_REFERENCE_SOURCE = {
    "Volta": "Lambda reference rows (V100)",
    "Turing": "Lambda reference rows (Quadro RTX 8000)",
    "Ampere": "Lambda reference rows (A100, RTX A6000, RTX 3090); MosaicML A100 LLM runs",
    "Ada": "Lambda reference rows (RTX 4090, RTX 6000 Ada)",
}
_CHECKED_SOURCE = {
    "Pascal": (
        "TensorFlow's May 2017 DGX-1 table (1-8 P100 SXM2, ResNet-50 fp32, batch 32 and 64: "
        "8 rows, MAPE 8.1 %, benchmarks/data/validation/cnn.csv); no fp16 or P40/P4 "
        "measurement"
    ),
    "Hopper": "held-out H100/GH200 rows; the CDNA3 peer in the MLPerf ratios (H200-SXM)",
    "Blackwell": (
        "held-out B200 rows; MLPerf Training v5.0/v5.1 B200, B300, GB200 rows (B300/B200 and "
        "GB200/B200 within 3-13 %; B200/H200 under-predicted by 29-39 %, docs/estimator.md)"
    ),
}

# Fitted by `benchmarks/fit_arch_efficiency.py` (2026-12-01); the test suite re-runs the fit.
FITTED: dict[str, tuple[float, int]] = {
    "CDNA3": (0.775, 19),
    "CDNA4": (0.95, 4),
}
_FITTED_SOURCE = {
    "CDNA3": "MLPerf Training v5.0/v5.1 llama2_70b_lora, 8x MI300X/MI325X vs 8x H200",
    "CDNA4": "MLPerf Training v5.1 llama2_70b_lora, 8x MI355X vs 8x B200",
}
# A GPU with at least `MIN_GPU_ROWS` rows of its own gets its own factor, fitted the same way on
# its rows alone (same script, `fit_gpus`): the MI300X and the MI325X share CDNA3 and its
# datasheet rates, yet run 0.68x and 0.85x of them (8 and 11 rows, each within 2 %; the
# MI325X's 1,000 W against the MI300X's 750 W is the likely cause), so one CDNA3 factor had the
# MI300X 13-16 % high and the MI325X 8-10 % low (`fit_arch_efficiency.py`'s check).
MIN_GPU_ROWS = 8
FITTED_GPUS: dict[str, tuple[float, int]] = {
    "MI300X": (0.677, 8),
    "MI325X": (0.854, 11),
}
_FITTED_GPU_SOURCE = {
    "MI300X": ("CDNA3", "MLPerf Training v5.0/v5.1 llama2_70b_lora, 8x MI300X vs 8x H200"),
    "MI325X": ("CDNA3", "MLPerf Training v5.0/v5.1 llama2_70b_lora, 8x MI325X vs 8x H200"),
}


def _measured(arch: str) -> ArchEfficiency | None:
    """The factor of an architecture some public measurement describes (None: none does)."""
    if arch in FITTED:
        factor, rows = FITTED[arch]
        source = _FITTED_SOURCE.get(arch, "benchmarks/data/mlperf_training_8gpu.csv")
        return ArchEfficiency(
            architecture=arch, factor=factor, basis="fitted", rows=rows, source=source
        )
    for basis, table in (("reference", _REFERENCE_SOURCE), ("checked", _CHECKED_SOURCE)):
        if arch in table:
            return ArchEfficiency(
                architecture=arch, factor=1.0, basis=basis, rows=0, source=table[arch]
            )
    return None


# every architecture with a measurement, built once from the tables above (an estimate asks
# two to three times; a constant table, not a cache: nothing in it changes)
_KNOWN: dict[str, ArchEfficiency] = {
    arch: eff
    for arch in (*FITTED, *_REFERENCE_SOURCE, *_CHECKED_SOURCE)
    if (eff := _measured(arch)) is not None
}


# the GPUs with a factor of their own (`FITTED_GPUS`), built once like `_KNOWN`
_KNOWN_GPUS: dict[str, ArchEfficiency] = {
    name: ArchEfficiency(
        architecture=f"{name} ({_FITTED_GPU_SOURCE[name][0]})",
        factor=factor,
        basis="fitted",
        rows=rows,
        source=_FITTED_GPU_SOURCE[name][1],
    )
    for name, (factor, rows) in FITTED_GPUS.items()
}


def realized_efficiency(gpu: GpuSpec) -> ArchEfficiency:
    """The realized-efficiency factor of `gpu` (its own, where enough public runs of it were
    fitted: `FITTED_GPUS`), else of its architecture, and where it comes from."""
    own = _KNOWN_GPUS.get(gpu.name)
    if own is not None:
        return own
    known = _KNOWN.get(gpu.architecture)
    if known is not None:
        return known
    return ArchEfficiency(
        architecture=gpu.architecture,
        factor=1.0,
        basis="assumed",
        rows=0,
        source="no public training measurement of this architecture",
    )


def efficiency_note(gpu: GpuSpec) -> str | None:
    """The line an estimate carries about its architecture's efficiency (None: reference or
    checked, where the fitted constants stand as they are)."""
    eff = realized_efficiency(gpu)
    if eff.basis == "fitted":
        return (
            f"{eff.architecture}: realized efficiency x{eff.factor:.2f} of the datasheet rates, "
            f"fitted on {eff.rows} public training runs ({eff.source})"
        )
    if eff.basis == "assumed":
        return (
            f"{eff.architecture}: no public training measurement of this architecture; its "
            "realized efficiency is assumed equal to the fitted NVIDIA one (measure and "
            "`gpurent calibrate add`)"
        )
    return None
