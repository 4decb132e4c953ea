"""The verdict: each measured figure against its expectation, with the likely cause and advice.

Pure: measurements + model runs + hardware + expectations in, `VerdictRow`s out.
Rule: fraction = measured / expected. fraction >= threshold -> ok; between 0.85 x threshold and
threshold -> warn (marginal: within run-to-run noise of the line); below -> the expectation's
`below` status (fail, or warn for rules of thumb). No expectation -> info; not applicable -> n/a.
The PCIe link check compares the link's current gen x width with its maximum: any shortfall
fails (it caps every host-device transfer).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from gpurent.bench.expect import Expectation, pcie_gbps
from gpurent.bench.result import HardwareInfo, Measurement, ModelRun, Status, VerdictRow

MARGINAL = 0.85

# benchmark -> (likely cause, what to do) when a figure falls short.
ADVICE: dict[str, tuple[str, str]] = {
    "matmul": (
        "GPU throttled (power cap, thermal), clocks locked low, or a shared/MIG-sliced GPU",
        "check `nvidia-smi -q -d PERFORMANCE,CLOCK` for throttle reasons; ask for another machine",
    ),
    "membw": (
        "memory clock lowered, ECC/row-remapping trouble, or another process using the GPU",
        "check `nvidia-smi -q -d CLOCK,ECC,PIDS`; re-run on an idle GPU",
    ),
    "hostdev": (
        "PCIe link trained down, riser/switch bottleneck, or wrong NUMA node for the GPU",
        "check `nvidia-smi -q -d PCIE` (current vs max link) and `nvidia-smi topo -m`",
    ),
    "pcie": (
        "PCIe link trained below its maximum generation or width (bad slot, riser, BIOS)",
        "ask the provider for another machine: this caps every host-device copy",
    ),
    "allreduce": (
        "NVLink/NVSwitch missing or degraded, P2P disabled, or NCCL falling back to sockets",
        "run `nvidia-smi nvlink -s` and `nvidia-smi topo -m`; set NCCL_DEBUG=INFO and re-run",
    ),
    "scaling": (
        "communication not hidden behind compute: slow interconnect or small per-GPU batch",
        "check the all-reduce figure; raise the per-GPU batch or use gradient accumulation",
    ),
    "model": (
        "slower than the estimator expects: throttling, a slow input pipeline or a stack issue",
        "compare the matmul and memory figures; check the driver/CUDA/torch versions",
    ),
    "dataload": (
        "too few CPU cores for decode + augmentation: the data loader will starve the GPUs",
        "use more DataLoader workers, GPU decoding (DALI/nvJPEG), or pre-processed data",
    ),
    "disk": (
        "a network or throttled volume rather than local NVMe",
        "checkpoint to local NVMe (then copy out), or provision more disk IOPS/throughput",
    ),
}
# On the CPU the same benchmarks short-fall for other reasons.
ADVICE_CPU: dict[str, tuple[str, str]] = {
    "matmul": (
        "torch is not using the CPU's vector units or threads (build, thread oversubscription), "
        "or other processes are loading the CPU",
        "check torch.get_num_threads(), OMP_NUM_THREADS and `uptime`; re-run on an idle machine",
    ),
}


def _row(
    check: str,
    benchmark: str,
    measured: float | None,
    unit: str,
    exp: Expectation | None,
    *,
    device: str = "cuda",
    failure: str | None = None,
) -> VerdictRow:
    table = ADVICE_CPU if device == "cpu" and benchmark in ADVICE_CPU else ADVICE
    cause, advice = table.get(benchmark, ("", ""))

    def unjudged(status: Status, source: str, why: str = "", todo: str = "") -> VerdictRow:
        """A row with nothing to compare: the figure as measured (if any), no expectation;
        `why` and `todo` are its cause and advice."""
        return VerdictRow(
            check=check,
            status=status,
            measured=measured,
            expected=None,
            unit=unit,
            fraction=None,
            threshold=None,
            source=source,
            cause=why,
            advice=todo,
        )

    if failure is not None:
        return unjudged(Status.FAIL, "benchmark failed", failure, advice)
    if measured is None:
        return unjudged(Status.NA, "not applicable here")
    if exp is None or exp.value <= 0:
        return unjudged(Status.INFO, "no expectation for this hardware")
    fraction = measured / exp.value
    if fraction >= exp.threshold:
        status = Status.OK
    elif fraction >= MARGINAL * exp.threshold:
        status = Status.WARN
    else:
        status = exp.below
    short = status is not Status.OK
    return VerdictRow(
        check=check,
        status=status,
        measured=measured,
        expected=exp.value,
        unit=exp.unit,
        fraction=fraction,
        threshold=exp.threshold,
        source=exp.source,
        cause=cause if short else "",
        advice=advice if short else "",
    )


def pcie_row(hw: HardwareInfo) -> VerdictRow | None:
    """Current vs maximum PCIe link, as theoretical GB/s; None without an NVML reading."""
    if None in (hw.pcie_gen_current, hw.pcie_gen_max, hw.pcie_width_current, hw.pcie_width_max):
        return None
    assert hw.pcie_gen_current is not None and hw.pcie_gen_max is not None
    assert hw.pcie_width_current is not None and hw.pcie_width_max is not None
    exp = Expectation(
        value=pcie_gbps(hw.pcie_gen_max, hw.pcie_width_max),
        unit="GB/s",
        source=f"max link gen{hw.pcie_gen_max} x{hw.pcie_width_max}; current "
        f"gen{hw.pcie_gen_current} x{hw.pcie_width_current} (read under load)",
        threshold=1.0,
    )
    row = _row(
        "pcie.link", "pcie", pcie_gbps(hw.pcie_gen_current, hw.pcie_width_current), "GB/s", exp
    )
    if row.status is Status.WARN:  # any shortfall of the link is a failure, not noise
        row = replace(row, status=Status.FAIL)
    return row


def judge(
    hw: HardwareInfo,
    measurements: Sequence[Measurement],
    model_runs: Sequence[ModelRun],
    expectations: Mapping[str, Expectation],
) -> tuple[VerdictRow, ...]:
    """One VerdictRow per measurement, per model run, and for the PCIe link when known."""
    rows = [
        _row(
            m.key,
            m.benchmark,
            m.value,
            m.unit,
            expectations.get(m.key),
            device=hw.device,
            failure=m.detail if m.value is None and m.detail.startswith("failed") else None,
        )
        for m in measurements
        if m.key != "matmul.numpy-fp32"  # the reference itself is not judged
    ]
    link = pcie_row(hw)
    if link is not None:
        rows.append(link)
    for run in model_runs:
        key = f"model.{run.model}"
        rows.append(
            _row(
                key,
                "model",
                run.throughput,
                run.throughput_unit,
                expectations.get(key),
                device=hw.device,
            )
        )
    return tuple(rows)


def worst(rows: Sequence[VerdictRow]) -> Status:
    """The overall status: fail > warn > ok; info/n/a only when nothing was judged."""
    statuses = {r.status for r in rows}
    for status in (Status.FAIL, Status.WARN, Status.OK):
        if status in statuses:
            return status
    return Status.INFO
