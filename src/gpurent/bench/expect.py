"""What each figure should be on this hardware: the expectations the verdict judges against.

Pure: takes the detected hardware, its catalog GpuSpec, the run's own measurements and an
optional model-throughput source, returns `Expectation`s keyed like the measurements. The stated
fractions and where they come from (RESEARCH = docs/RESEARCH.md of the project's reference
notes, distilled from nccl-tests, stas00/ml-engineering, nvbandwidth and STREAM results):

- matmul >= 0.60 of the datasheet dense peak (achieved bf16 GEMM is ~80-87% of it: H100/H200 SXM
  ~795 of 989 TFLOP/s; 0.6 leaves room for a different shape sweep and clocks).
- device memory copy/triad >= 0.75 of the HBM datasheet bandwidth (STREAM-like 85-97%).
- pinned host<->device >= 0.70 of the PCIe link's theoretical rate at its maximum gen x width
  (nvbandwidth on 8xH200: 55 GB/s H2D = 88% of PCIe 5 x16).
- PCIe link: current gen x width == maximum (a downtrained link is a classic bad rental).
- all-reduce busbw >= 0.70 of unidirectional NVLink (interconnect_gbps / 2); ring busbw reaches
  ~78-82% (H200 ~368 of 450 GB/s). PCIe-only GPUs, and NVLink-bridged cards beyond a pair:
  >= 0.5 of the PCIe link (gpurent's rule: rentals often disable peer-to-peer, sending the ring
  through host memory).
- DDP scaling >= 0.90 on GPUs (Lambda: H100-SXM 1->8 GPUs 0.94-0.99).
- model throughput >= 0.70 of the estimator's figure, when the estimator is installed.
- CPU matmul (torch) >= 0.50 of numpy's BLAS at the same size in the same run (the issue's rule).
- data loader >= 1.0 x the measured ResNet-50 training images/s of the node (else it starves it).
- disk: seq write 0.5 GB/s, seq read 1.0 GB/s, 10,000 random-read IOPS: gpurent's floors for
  a local NVMe checkpoint disk; below them only warns (network volumes are legitimately slower).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from gpurent.bench.result import HardwareInfo, Measurement, ModelRun, Status
from gpurent.catalog import GpuSpec, Precision

# PCIe per-lane, per-direction GB/s after line coding: 2.5/5 GT/s with 8b/10b, 8/16/32 GT/s with
# 128b/130b, 64 GT/s PAM4 FLIT mode (242/256) - PCI-SIG base specifications 1.0-6.0.
PCIE_LANE_GBPS: dict[int, float] = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}

MATMUL_MIN = 0.60
MEMBW_MIN = 0.75
HOSTDEV_MIN = 0.70
ALLREDUCE_NVLINK_MIN = 0.70
ALLREDUCE_PCIE_MIN = 0.50
SCALING_MIN = 0.90
MODEL_MIN = 0.70
CPU_MATMUL_VS_NUMPY_MIN = 0.50
DATALOAD_MIN = 1.0
DISK_FLOORS: dict[str, tuple[float, str]] = {
    "disk.seq-write": (0.5, "GB/s"),
    "disk.seq-read": (1.0, "GB/s"),
    "disk.rand-read": (10_000.0, "IOPS"),
}
_PRECISIONS = {
    "bf16": Precision.BF16,
    "fp16": Precision.FP16,
    "tf32": Precision.TF32,
    "strict-fp32": Precision.STRICT_FP32,
    "fp32": Precision.FP32,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Expectation:
    """Expected `value` in `unit` from `source`; below `threshold` x value the check is
    `below` (fail, or warn for rules of thumb)."""

    value: float
    unit: str
    source: str
    threshold: float
    below: Status = Status.FAIL


ModelExpectFn = Callable[[ModelRun, GpuSpec, int], Expectation | None]


def pcie_gbps(gen: int, width: int) -> float:
    """Theoretical per-direction PCIe bandwidth in GB/s of a gen x width link."""
    return PCIE_LANE_GBPS.get(gen, 0.0) * width


def _gpu_expectations(
    hw: HardwareInfo, spec: GpuSpec, measurements: Sequence[Measurement]
) -> dict[str, Expectation]:
    out: dict[str, Expectation] = {}
    sheet = f"{spec.name} datasheet"
    for m in measurements:
        if m.benchmark == "matmul":
            precision = _PRECISIONS.get(m.key.split(".", 1)[1])
            if precision is not None:
                out[m.key] = Expectation(
                    value=spec.peak_tflops(precision),
                    unit="TFLOP/s",
                    source=f"{sheet} dense {precision.value} peak",
                    threshold=MATMUL_MIN,
                )
    for key in ("membw.copy", "membw.triad"):
        out[key] = Expectation(
            value=spec.memory_bandwidth_gbps,
            unit="GB/s",
            source=f"{sheet} {spec.memory_type} bandwidth",
            threshold=MEMBW_MIN,
        )
    gen = hw.pcie_gen_max or spec.pcie_gen
    width = hw.pcie_width_max or 16
    if spec.form_factor != "superchip":
        link = f"PCIe gen{gen} x{width} theoretical" + (
            "" if hw.pcie_gen_max else " (gen from the catalog, x16 assumed: no NVML)"
        )
        for key in ("hostdev.h2d-pinned", "hostdev.d2h-pinned"):
            out[key] = Expectation(
                value=pcie_gbps(gen, width), unit="GB/s", source=link, threshold=HOSTDEV_MIN
            )
    if hw.gpu_count >= 2:
        # An NVLink *bridge* joins pairs (or quads) of cards only: a ring over more GPUs than
        # a pair crosses PCIe somewhere, so the PCIe rule applies there.
        bridged_only = "bridge" in spec.interconnect.lower() and hw.gpu_count > 2
        if spec.interconnect_gbps and not bridged_only:
            out["allreduce.busbw"] = Expectation(
                value=spec.interconnect_gbps / 2,
                unit="GB/s",
                source=f"{sheet} {spec.interconnect} unidirectional ({spec.interconnect_gbps:g}/2)",
                threshold=ALLREDUCE_NVLINK_MIN,
            )
        else:
            out["allreduce.busbw"] = Expectation(
                value=pcie_gbps(gen, width),
                unit="GB/s",
                source=f"PCIe gen{gen} x{width}"
                + (f" ({spec.interconnect} joins pairs only)" if bridged_only else ""),
                threshold=ALLREDUCE_PCIE_MIN,
            )
        for m in measurements:
            if m.benchmark == "scaling":
                out[m.key] = Expectation(
                    value=1.0,
                    unit="fraction",
                    source="linear scaling (Lambda H100-SXM: 0.94-0.99)",
                    threshold=SCALING_MIN,
                )
    return out


def build_expectations(
    hw: HardwareInfo,
    spec: GpuSpec | None,
    measurements: Sequence[Measurement],
    model_runs: Sequence[ModelRun],
    model_expect: ModelExpectFn | None = None,
) -> dict[str, Expectation]:
    """Every expectation that applies to this run, keyed by measurement key or model.<name>."""
    by_key: Mapping[str, Measurement] = {m.key: m for m in measurements}
    out: dict[str, Expectation] = {}
    if hw.device == "cuda" and spec is not None:
        out.update(_gpu_expectations(hw, spec, measurements))
        if model_expect is not None:
            for run in model_runs:
                exp = model_expect(run, spec, run.world_size)
                if exp is not None:
                    out[f"model.{run.model}"] = exp
    numpy_ref = by_key.get("matmul.numpy-fp32")
    if hw.device == "cpu" and numpy_ref is not None and numpy_ref.value:
        out["matmul.fp32"] = Expectation(
            value=numpy_ref.value,
            unit="TFLOP/s",
            source="numpy BLAS fp32, same size, this run",
            threshold=CPU_MATMUL_VS_NUMPY_MIN,
        )
    resnet = next((r for r in model_runs if r.model == "resnet50"), None)
    if resnet is not None and hw.device == "cuda":  # the CPU run's ResNet is scaled down
        gpus = max(1, hw.gpu_count)
        out["dataload.images"] = Expectation(
            value=resnet.samples_per_s * gpus,
            unit="images/s",
            source=f"resnet50 training images/s measured in this run x {gpus} device(s)",
            threshold=DATALOAD_MIN,
        )
    for key, (floor, unit) in DISK_FLOORS.items():
        out[key] = Expectation(
            value=floor,
            unit=unit,
            source="gpurent floor for a local NVMe checkpoint disk",
            threshold=1.0,
            below=Status.WARN,
        )
    return out
