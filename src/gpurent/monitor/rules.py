"""Rules: a window of samples -> findings with evidence and advice. Pure (no I/O, no clock).

Thresholds follow the guide's three-level monitoring: SM utilisation should stay above 70%,
memory-copy utilisation should peak above 80% in a memory-heavy phase, disk %util should stay
below 60%. NVIDIA's rule of thumb for SM activity: >= 80% is needed for good use, < 50% is poor
(RESEARCH.md §4). Where only NVML busy % exists it is used as the activity figure with a warning:
busy % is an upper bound (it reads 100 while one small kernel runs), so "under-used" is then
missed rather than invented.
"""

from __future__ import annotations

import enum
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

from gpurent.monitor.sample import GpuSample, Sample
from gpurent.nvml import (
    HW_SLOWDOWN,
    POWER_BITS,
    TEMP_WARN_C,
    THERMAL_BITS,
    THROTTLE_BITS,
    is_application_xid,
)


class Severity(enum.StrEnum):
    """How much a finding matters: info, warning or critical."""

    INFO = "info"
    WARNING = "warning"
    CRITICAL = "critical"


class FindingKind(enum.StrEnum):
    """What a rule found: an idle, under-used, input-bound or memory-bound GPU, and so on."""

    IDLE = "idle-gpu"
    UNDERUSED = "under-used-gpu"
    INPUT_BOUND = "input-pipeline-bound"
    MEMORY_BOUND = "memory-bandwidth-bound"
    POWER_THROTTLED = "power-throttled"
    THERMAL_THROTTLED = "thermal-throttled"
    PCIE_DEGRADED = "pcie-link-degraded"
    UNBALANCED = "unbalanced-gpus"
    ECC = "ecc-errors"
    XID = "xid-errors"
    GPU_LOST = "gpu-lost"
    DISK_BUSY = "disk-busy"
    BUSY_ONLY = "sm-util-unmeasured"


@dataclass(frozen=True, slots=True, kw_only=True)
class Thresholds:
    """Rule thresholds, all configurable (`dataclasses.replace` or CLI flags)."""

    sm_util_low_pct: float = 70.0  # keep SM utilisation above this
    mem_copy_peak_pct: float = 80.0  # memory-copy utilisation peak that marks a memory-heavy job
    disk_util_high_pct: float = 60.0  # keep disk %util below this
    idle_activity_pct: float = 5.0  # at or below this a GPU counts as idle
    idle_share: float = 0.9  # share of the window idle to call a GPU idle
    cpu_busy_pct: float = 85.0  # host CPU this busy can starve the GPUs
    iowait_high_pct: float = 20.0
    data_wait_high_pct: float = 15.0  # runtime-reported share of step time waiting for data
    throttle_share: float = 0.2  # share of busy samples with a slowdown bit set
    temperature_high_c: float = TEMP_WARN_C  # DCGM/GCM health-check warning level
    imbalance_spread_pct: float = 25.0  # max - min mean activity across busy GPUs
    min_samples: int = 3


Figure = float | int | str


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """What one rule found, as data: kind, severity, the GPUs, and the measured figures by name.

    The summary and the evidence lines are `str.format` templates over `figures` and `{gpus}`
    (the GPUs' label, "GPU 3" or "GPUs 0-7"); they become text only when read (`summary`,
    `evidence`), so findings are compared and merged on their figures, never on their words.
    """

    kind: FindingKind
    severity: Severity
    gpus: tuple[int, ...]  # empty: the host
    figures: tuple[tuple[str, Figure], ...]
    summary_template: str
    evidence_templates: tuple[str, ...]
    advice: str

    @property
    def summary(self) -> str:
        """The finding in one line, with its GPUs named."""
        return self._text(self.summary_template, gpu_label(self.gpus))

    @property
    def evidence(self) -> tuple[str, ...]:
        """The evidence lines of the finding, with its GPUs named."""
        label = gpu_label(self.gpus)
        return tuple(self._text(e, label) for e in self.evidence_templates)

    def json_view(self) -> dict[str, object]:
        """The finding as JSON writes it: the rendered text, not the templates."""
        return {
            "kind": self.kind,
            "severity": self.severity,
            "gpus": self.gpus,
            "summary": self.summary,
            "evidence": self.evidence,
            "advice": self.advice,
        }

    def figure(self, name: str) -> Figure:
        """The measured figure called name."""
        return dict(self.figures)[name]

    def _text(self, template: str, label: str) -> str:
        return template.format(gpus=label, **dict(self.figures))

    def shown_figures(self) -> tuple[str, ...]:
        """The summary and evidence as shown, without the GPU label: equal for two GPUs with
        the same problem at the same (rounded) figures."""
        return tuple(self._text(e, "") for e in (self.summary_template, *self.evidence_templates))


def _finding(
    kind: FindingKind,
    severity: Severity,
    gpus: tuple[int, ...],
    summary: str,
    evidence: Sequence[str],
    *,
    advice: str,
    **figures: Figure,
) -> Finding:
    return Finding(
        kind=kind,
        severity=severity,
        gpus=gpus,
        figures=tuple(sorted(figures.items())),
        summary_template=summary,
        evidence_templates=tuple(evidence),
        advice=advice,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuSummary:
    """One GPU over the window: mean activity, busy, SM use, power, peak temperature, idle share."""

    index: int
    name: str
    samples: int
    activity_source: str  # "sm_util_pct" (GPM) or "gpu_busy_pct" (NVML busy %, upper bound)
    mean_activity_pct: float | None
    mean_busy_pct: float | None
    mean_sm_util_pct: float | None
    peak_mem_copy_util_pct: float | None
    mean_power_w: float | None
    max_temperature_c: float | None
    idle_share: float  # share of samples at or below the idle threshold


@dataclass(frozen=True, slots=True, kw_only=True)
class Diagnosis:
    """The diagnosis of a window of samples: each GPU's summary, host means and the findings."""

    start_s: float
    end_s: float
    samples: int
    gpus: tuple[GpuSummary, ...]
    mean_cpu_util_pct: float | None
    mean_disk_util_pct: float | None
    mean_iowait_pct: float | None
    findings: tuple[Finding, ...]


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _vals(gs: Sequence[GpuSample], attr: str) -> list[float]:
    return [float(v) for g in gs if (v := getattr(g, attr)) is not None]


def is_idle(g: GpuSample, t: Thresholds) -> bool:
    """Whether the GPU's activity is at or below the idle threshold (False when not read)."""
    activity = g.activity_pct
    return activity is not None and activity <= t.idle_activity_pct


def diagnose(samples: Sequence[Sample], t: Thresholds | None = None) -> Diagnosis:
    """Findings over a window of samples, most severe first."""
    t = t or Thresholds()
    per_gpu: dict[int, list[GpuSample]] = {}
    for s in samples:
        for g in s.gpus:
            per_gpu.setdefault(g.index, []).append(g)
    hosts = [s.host for s in samples]
    cpu = _mean([h.cpu_util_pct for h in hosts if h.cpu_util_pct is not None])
    disk = _mean([h.disk_util_pct for h in hosts if h.disk_util_pct is not None])
    iowait = _mean([h.iowait_pct for h in hosts if h.iowait_pct is not None])
    data_wait = _mean([h.data_wait_pct for h in hosts if h.data_wait_pct is not None])
    load = _HostLoad(cpu=cpu, disk=disk, iowait=iowait, data_wait=data_wait)
    summaries = tuple(_summarise(i, gs, t) for i, gs in sorted(per_gpu.items()))
    findings: list[Finding] = []
    if len(samples) >= t.min_samples:
        for summary in summaries:
            findings.extend(_gpu_findings(summary, per_gpu[summary.index], t, load))
        findings.extend(_imbalance(summaries, t))
        if disk is not None and disk > t.disk_util_high_pct:
            findings.append(
                _finding(
                    FindingKind.DISK_BUSY,
                    Severity.WARNING,
                    (),
                    "disk busy {disk_util_pct:.0f}% on average (keep below {limit_pct:.0f}%)",
                    ("mean busiest-device %util {disk_util_pct:.0f}% (/proc/diskstats field 13)",),
                    advice="cache the data set on local NVMe or in RAM, use larger sequential "
                    "shards (WebDataset/TFRecord), add loader workers; on NVMe/RAID also compare "
                    "throughput with the device's measured ceiling",
                    disk_util_pct=disk,
                    limit_pct=t.disk_util_high_pct,
                )
            )
    order = {Severity.CRITICAL: 0, Severity.WARNING: 1, Severity.INFO: 2}
    findings = _merge_across_gpus(_drop_shadowed(findings))
    findings.sort(key=lambda f: (order[f.severity], f.kind.value, f.gpus))
    return Diagnosis(
        start_s=samples[0].timestamp_s if samples else 0.0,
        end_s=samples[-1].timestamp_s if samples else 0.0,
        samples=len(samples),
        gpus=summaries,
        mean_cpu_util_pct=cpu,
        mean_disk_util_pct=disk,
        mean_iowait_pct=iowait,
        findings=tuple(findings),
    )


def _drop_shadowed(findings: list[Finding]) -> list[Finding]:
    """An info finding says nothing more when a warning of the same kind names the same GPUs."""
    louder = {(f.kind, f.gpus) for f in findings if f.severity is not Severity.INFO}
    return [
        f for f in findings if f.severity is not Severity.INFO or (f.kind, f.gpus) not in louder
    ]


def gpu_label(gpus: Sequence[int]) -> str:
    """ "GPU 3" for one GPU, "GPUs 0-7" for a run of three or more, "GPUs 0, 2" otherwise."""
    ordered = sorted(gpus)
    if len(ordered) == 1:
        return f"GPU {ordered[0]}"
    if len(ordered) > 2 and ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"GPUs {ordered[0]}-{ordered[-1]}"
    return "GPUs " + ", ".join(str(i) for i in ordered)


def _merge_across_gpus(findings: list[Finding]) -> list[Finding]:
    """One finding for GPUs that show the same problem with the same evidence, not one per GPU
    (an 8-GPU node that throttles should read as one line, with the GPUs named)."""
    groups: dict[tuple[object, ...], list[Finding]] = {}
    for f in findings:
        key: tuple[object, ...] = (
            (f.kind, f.severity, f.shown_figures(), f.advice) if len(f.gpus) == 1 else (id(f),)
        )
        groups.setdefault(key, []).append(f)
    return [
        replace(group[0], gpus=tuple(sorted(i for f in group for i in f.gpus)))
        for group in groups.values()
    ]


def _summarise(index: int, gs: list[GpuSample], t: Thresholds) -> GpuSummary:
    live = [g for g in gs if not g.lost]
    sm = _vals(live, "sm_util_pct")
    busy = _vals(live, "gpu_busy_pct")
    source = "sm_util_pct" if sm else "gpu_busy_pct"
    mem_copy = _vals(live, "mem_copy_util_pct")
    temps = _vals(live, "temperature_c")
    measured = [g for g in live if g.activity_pct is not None]
    idle = sum(1 for g in measured if is_idle(g, t))
    return GpuSummary(
        index=index,
        name=next((g.name for g in gs if g.name), ""),
        samples=len(gs),
        activity_source=source,
        mean_activity_pct=_mean(sm or busy),
        mean_busy_pct=_mean(busy),
        mean_sm_util_pct=_mean(sm),
        peak_mem_copy_util_pct=max(mem_copy) if mem_copy else None,
        mean_power_w=_mean(_vals(live, "power_w")),
        max_temperature_c=max(temps) if temps else None,
        idle_share=idle / len(measured) if measured else 0.0,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class _HostLoad:
    cpu: float | None
    disk: float | None
    iowait: float | None
    data_wait: float | None


def _gpu_findings(
    s: GpuSummary, gs: list[GpuSample], t: Thresholds, host: _HostLoad
) -> list[Finding]:
    cpu, disk, iowait, data_wait = host.cpu, host.disk, host.iowait, host.data_wait
    out: list[Finding] = []
    gpu = (s.index,)
    out.extend(_health(s, gs, t))
    if any(g.lost for g in gs):
        return out
    if s.idle_share >= t.idle_share:
        out.append(
            _finding(
                FindingKind.IDLE,
                Severity.WARNING,
                gpu,
                "{gpus} idle {idle_share:.0%} of the window",
                (
                    "{source} <= {idle_pct:.0f}% in {idle_share:.0%} of {samples} samples",
                    "mean power {power_w:.0f} W",
                ),
                advice="stop or release the instance (or this GPU) while nothing runs; "
                "set --idle-action to do it automatically",
                source=s.activity_source,
                idle_pct=t.idle_activity_pct,
                idle_share=s.idle_share,
                samples=s.samples,
                power_w=s.mean_power_w or 0,
            )
        )
        return out
    busy_samples = [g for g in gs if not is_idle(g, t)]
    activity = s.mean_activity_pct
    if s.mean_sm_util_pct is None and s.mean_busy_pct is not None:
        out.append(
            _finding(
                FindingKind.BUSY_ONLY,
                Severity.INFO,
                gpu,
                "{gpus}: SM utilisation not measured, only NVML busy %",
                (
                    "mean busy {busy_pct:.0f}% (share of time any kernel ran)",
                    "no GPM metrics (needs Hopper or newer) in the samples",
                ),
                advice="busy % reads 100 while one small kernel runs: use DCGM profiling "
                "(DCGM_FI_PROF_SM_ACTIVE) or a Hopper+ GPU to see real SM activity",
                busy_pct=s.mean_busy_pct,
            )
        )
    if activity is not None and activity < t.sm_util_low_pct:
        figures: dict[str, Figure] = {
            "source": s.activity_source,
            "activity_pct": activity,
            "keep_pct": t.sm_util_low_pct,
        }
        reasons: list[str] = []
        for name, value, limit, line in (
            ("cpu", cpu, t.cpu_busy_pct, "host CPU {cpu_pct:.0f}% busy (>= {cpu_limit_pct:.0f}%)"),
            (
                "disk",
                disk,
                t.disk_util_high_pct,
                "disk {disk_pct:.0f}% busy (>= {disk_limit_pct:.0f}%)",
            ),
            (
                "iowait",
                iowait,
                t.iowait_high_pct,
                "iowait {iowait_pct:.0f}% (>= {iowait_limit_pct:.0f}%)",
            ),
            (
                "data_wait",
                data_wait,
                t.data_wait_high_pct,
                "runtime waits for data {data_wait_pct:.0f}% of step time",
            ),
        ):
            if value is not None and value >= limit:
                reasons.append(line)
                figures |= {f"{name}_pct": value, f"{name}_limit_pct": limit}
        evidence = ("mean {source} {activity_pct:.0f}% (keep > {keep_pct:.0f}%)",)
        dram = _mean(_vals(busy_samples, "dram_bw_util_pct"))
        mem_copy = _mean(_vals(busy_samples, "mem_copy_util_pct"))
        if reasons:
            out.append(
                _finding(
                    FindingKind.INPUT_BOUND,
                    Severity.WARNING,
                    gpu,
                    "{gpus} waits for input: low SM activity while the host is busy",
                    (*evidence, *reasons),
                    advice="more DataLoader workers, pin_memory, prefetch; decode/augment on "
                    "the GPU (DALI); cache pre-processed data on local NVMe; pick an instance "
                    "with more vCPUs per GPU",
                    **figures,
                )
            )
        elif dram is not None and dram >= t.mem_copy_peak_pct:
            line = "mean DRAM bandwidth {bound_pct:.0f}% (GPM)"
            out.append(_memory_bound(s, t, evidence, line, figures | {"bound_pct": dram}))
        elif s.peak_mem_copy_util_pct is not None and (mem_copy or 0.0) >= t.mem_copy_peak_pct:
            line = "mean memory-copy utilisation {bound_pct:.0f}%"
            out.append(_memory_bound(s, t, evidence, line, figures | {"bound_pct": mem_copy or 0}))
        else:
            peak = s.peak_mem_copy_util_pct
            peak_line = "memory-copy peak {peak_pct:.0f}% (< {peak_limit_pct:.0f}%)"
            out.append(
                _finding(
                    FindingKind.UNDERUSED,
                    Severity.WARNING,
                    gpu,
                    "{gpus} under-used: {source} {activity_pct:.0f}%",
                    (*evidence, *([peak_line] if peak is not None else [])),
                    advice="raise the batch size, use AMP/bf16, fuse small kernels "
                    "(torch.compile, CUDA graphs), check for CPU-side synchronisation",
                    **figures,
                    **(
                        {"peak_pct": peak, "peak_limit_pct": t.mem_copy_peak_pct}
                        if peak is not None
                        else {}
                    ),
                )
            )
    out.extend(_throttle(s, busy_samples, t))
    out.extend(_pcie(s, busy_samples))
    return out


def _memory_bound(
    s: GpuSummary, t: Thresholds, evidence: tuple[str, ...], line: str, figures: dict[str, Figure]
) -> Finding:
    """`line` names the bandwidth figure (`bound_pct`) that crossed the peak."""
    return _finding(
        FindingKind.MEMORY_BOUND,
        Severity.INFO,
        (s.index,),
        "{gpus} is memory-bandwidth bound",
        (*evidence, line + " (>= {bound_limit_pct:.0f}%)"),
        advice="fuse element-wise ops (torch.compile), use bf16/fp8 to move fewer bytes, "
        "raise arithmetic intensity (larger batch or sequence), or rent a GPU with more HBM "
        "bandwidth",
        **figures,
        bound_limit_pct=t.mem_copy_peak_pct,
    )


def _throttle(s: GpuSummary, gs: list[GpuSample], t: Thresholds) -> list[Finding]:
    masks = [g.throttle_reasons for g in gs if g.throttle_reasons is not None]
    if not masks:
        return []
    out: list[Finding] = []
    for kind, bits, advice in (
        (
            FindingKind.POWER_THROTTLED,
            POWER_BITS,
            "the GPU hits its power cap: check `nvidia-smi -q -d POWER` for a lowered limit; "
            "ask the provider if the cap is below the datasheet TDP",
        ),
        (
            FindingKind.THERMAL_THROTTLED,
            THERMAL_BITS | HW_SLOWDOWN,
            "the GPU slows down to cool: report the host to the provider (cooling, fans); "
            "a rented GPU should not throttle thermally at normal load",
        ),
    ):
        hits = [m for m in masks if m & bits]
        share = len(hits) / len(masks)
        if share >= t.throttle_share:
            names = sorted({n for m in hits for b, n in THROTTLE_BITS.items() if m & b & bits})
            figures: dict[str, Figure] = {"reasons": ", ".join(names), "share": share}
            evidence = ["{reasons} set in {share:.0%} of busy samples"]
            clocks = _vals(gs, "sm_clock_mhz")
            max_clock = next((g.sm_clock_max_mhz for g in gs if g.sm_clock_max_mhz), None)
            if clocks and max_clock:
                evidence.append("mean SM clock {clock_mhz:.0f} of {clock_max_mhz:.0f} MHz")
                figures |= {"clock_mhz": statistics.fmean(clocks), "clock_max_mhz": max_clock}
            if kind is FindingKind.THERMAL_THROTTLED and s.max_temperature_c is not None:
                evidence.append("max temperature {max_temperature_c:.0f} C")
                figures["max_temperature_c"] = s.max_temperature_c
            summary = "{gpus} " + kind.value.replace("-", " ")
            out.append(
                _finding(
                    kind, Severity.WARNING, (s.index,), summary, evidence, advice=advice, **figures
                )
            )
    return out


def _pcie(s: GpuSummary, gs: list[GpuSample]) -> list[Finding]:
    """A link below its maximum while the GPU works (links downtrain at idle to save power)."""
    bad = [
        g
        for g in gs
        if (g.pcie_gen is not None and g.pcie_gen_max is not None and g.pcie_gen < g.pcie_gen_max)
        or (
            g.pcie_width is not None
            and g.pcie_width_max is not None
            and g.pcie_width < g.pcie_width_max
        )
    ]
    if not gs or len(bad) / len(gs) < 0.5:
        return []
    g = bad[-1]
    return [
        _finding(
            FindingKind.PCIE_DEGRADED,
            Severity.WARNING,
            (s.index,),
            "{gpus} PCIe link below its maximum while busy",
            (
                "gen {gen} of {gen_max}, width x{width} of x{width_max} "
                "in {degraded} of {samples} busy samples",
            ),
            advice="host<->GPU copies run slower; reseat/replace is the provider's job: "
            "report the host or move to another instance",
            gen=str(g.pcie_gen),
            gen_max=str(g.pcie_gen_max),
            width=str(g.pcie_width),
            width_max=str(g.pcie_width_max),
            degraded=len(bad),
            samples=len(gs),
        )
    ]


def _health(s: GpuSummary, gs: list[GpuSample], t: Thresholds) -> list[Finding]:
    out: list[Finding] = []
    gpu = (s.index,)
    if any(g.lost for g in gs):
        first = next(i for i, g in enumerate(gs) if g.lost)
        out.append(
            _finding(
                FindingKind.GPU_LOST,
                Severity.CRITICAL,
                gpu,
                "{gpus} fell off the bus (NVML: GPU is lost)",
                ("lost from sample {first} of {samples}",),
                advice="the job on this GPU is dead: checkpoint-restart on a healthy host and "
                "report the host to the provider (a reboot may bring it back)",
                first=first + 1,
                samples=len(gs),
            )
        )
    ecc = max(_vals(gs, "ecc_uncorrected"), default=0.0)
    if ecc > 0:
        out.append(
            _finding(
                FindingKind.ECC,
                Severity.CRITICAL,
                gpu,
                "{gpus} has {ecc:.0f} uncorrected ECC errors",
                ("volatile uncorrected ECC count {ecc:.0f} (must be 0)",),
                advice="results may be corrupt: stop, drain the GPU, ask the provider for "
                "another host",
                ecc=ecc,
            )
        )
    xids = [x for g in gs for x in g.xids]
    if xids:
        device = sorted({x for x in xids if not is_application_xid(x)})
        app = sorted({x for x in xids if is_application_xid(x)})
        out.append(
            _finding(
                FindingKind.XID,
                Severity.CRITICAL if device else Severity.WARNING,
                gpu,
                "{gpus} reported Xid {xids}",
                (
                    *(["device Xids {device} mark the GPU unhealthy"] if device else []),
                    *(["application Xids {app} (13/31/43/45/68)"] if app else []),
                ),
                advice="device Xids: drain the GPU and report the host; application Xids: "
                "look for an illegal memory access or a killed process in the job's log",
                xids=", ".join(str(x) for x in sorted(set(xids))),
                device=str(device),
                app=str(app),
            )
        )
    if s.max_temperature_c is not None and s.max_temperature_c > t.temperature_high_c:
        out.append(
            _finding(
                FindingKind.THERMAL_THROTTLED,
                Severity.INFO,
                gpu,
                "{gpus} ran hot: {max_temperature_c:.0f} C",
                ("max {max_temperature_c:.0f} C > {limit_c:.0f} C",),
                advice="watch for thermal slowdown; report persistent heat to the provider",
                max_temperature_c=s.max_temperature_c,
                limit_c=t.temperature_high_c,
            )
        )
    return out


def _imbalance(summaries: Sequence[GpuSummary], t: Thresholds) -> list[Finding]:
    busy = [s for s in summaries if s.mean_activity_pct is not None and s.idle_share < t.idle_share]
    if len(busy) < 2:
        return []
    lo = min(busy, key=lambda s: s.mean_activity_pct or 0.0)
    hi = max(busy, key=lambda s: s.mean_activity_pct or 0.0)
    spread = (hi.mean_activity_pct or 0.0) - (lo.mean_activity_pct or 0.0)
    if spread <= t.imbalance_spread_pct:
        return []
    return [
        _finding(
            FindingKind.UNBALANCED,
            Severity.WARNING,
            tuple(s.index for s in busy),
            "GPUs unbalanced: activity spread {spread:.0f} points",
            ("GPU {hi_gpu} {hi_pct:.0f}% vs GPU {lo_gpu} {lo_pct:.0f}% ({source})",),
            advice="check the sharding/placement (uneven pipeline stages, a rank doing extra "
            "work such as logging or evaluation), and that every GPU got a process",
            spread=spread,
            hi_gpu=hi.index,
            hi_pct=hi.mean_activity_pct or 0.0,
            lo_gpu=lo.index,
            lo_pct=lo.mean_activity_pct or 0.0,
            source=hi.activity_source,
        )
    ]
