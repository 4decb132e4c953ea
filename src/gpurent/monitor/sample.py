"""One monitoring sample: per-GPU and host metrics, each tagged with the source it came from.

Units are in the field names. `sm_util_pct` is filled only from a real SM-activity source (NVML
GPM on Hopper and newer, or a recorded file that says it has one); NVML's `utilizationRates.gpu`
is the share of time *any* kernel ran (100% with one tiny kernel), so it goes to `gpu_busy_pct`
and never to `sm_util_pct` (RESEARCH.md §4).

The flat form (`COLUMNS`, `to_rows`, `from_rows`) is one row per GPU per timestamp with the host
metrics repeated; a host without GPUs gives one row with an empty `gpu`. It is what the recorder
stores and what `gpurent monitor diagnose` reads (CSV or JSON lines).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpurent.inputs import values as checks
from gpurent.sample_columns import GPU_FLOAT_COLUMNS, GPU_INT_COLUMNS, HOST_COLUMNS


class Source(enum.StrEnum):
    """Where a metric value came from."""

    NVML_GPM = "nvml-gpm"  # NVML GPU Performance Monitoring (Hopper+): real SM activity
    NVML = "nvml"  # a plain NVML query
    NVML_EVENTS = "nvml-events"  # NVML event set (Xid)
    KERNEL_LOG = "kernel-log"  # NVRM: Xid lines
    PROCFS = "procfs"  # /proc/stat, /proc/diskstats, /proc/meminfo, /proc/net/dev
    PSUTIL = "psutil"
    FILE = "file"  # read back from a recorded file
    RUNTIME = "runtime"  # pushed by the training runtime (data-wait share)


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuProcess:
    """A process on a GPU and the GPU memory it uses in MiB (None: not read)."""

    pid: int
    used_memory_mib: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuSample:
    """One GPU at one instant. None means "not read" (unsupported, no permission, lost)."""

    index: int
    name: str = ""
    uuid: str = ""
    pci_bus_id: str = ""
    lost: bool = False
    sm_util_pct: float | None = None  # GPM SM_UTIL: share of SMs busy
    sm_occupancy_pct: float | None = None  # GPM SM_OCCUPANCY: active warps vs maximum
    tensor_util_pct: float | None = None  # GPM ANY_TENSOR_UTIL
    dram_bw_util_pct: float | None = None  # GPM DRAM_BW_UTIL
    gpu_busy_pct: float | None = None  # NVML utilizationRates.gpu (any kernel running)
    mem_copy_util_pct: float | None = None  # NVML utilizationRates.memory (memory busy time)
    memory_used_mib: float | None = None
    memory_total_mib: float | None = None
    power_w: float | None = None
    power_limit_w: float | None = None
    temperature_c: float | None = None
    sm_clock_mhz: float | None = None
    sm_clock_max_mhz: float | None = None
    mem_clock_mhz: float | None = None
    throttle_reasons: int | None = None  # NVML clock-event reason bit mask
    pcie_gen: int | None = None
    pcie_gen_max: int | None = None
    pcie_width: int | None = None
    pcie_width_max: int | None = None
    pcie_tx_mb_per_s: float | None = None
    pcie_rx_mb_per_s: float | None = None
    ecc_uncorrected: int | None = None  # volatile (since driver load) uncorrected errors
    ecc_corrected: int | None = None
    xids: tuple[int, ...] = ()  # Xid events seen since the previous sample
    processes: tuple[GpuProcess, ...] = ()
    sources: tuple[tuple[str, str], ...] = ()  # (metric field, Source value)

    def source_of(self, metric: str) -> str | None:
        """Where the metric was read from (e.g. NVML or GPM), or None if not read."""
        return dict(self.sources).get(metric)

    @property
    def activity_pct(self) -> float | None:
        """SM utilisation when known, else busy % (an upper bound of real activity)."""
        return self.sm_util_pct if self.sm_util_pct is not None else self.gpu_busy_pct


@dataclass(frozen=True, slots=True, kw_only=True)
class DiskSample:
    """One disk's busy share and read and write rates."""

    device: str
    util_pct: float  # busy time / wall time, /proc/diskstats field 13 (iostat %util)
    read_mb_per_s: float
    write_mb_per_s: float


@dataclass(frozen=True, slots=True, kw_only=True)
class HostSample:
    """Host metrics over the interval since the previous read (None on the first read)."""

    cpu_util_pct: float | None = None
    iowait_pct: float | None = None
    memory_used_gib: float | None = None
    memory_total_gib: float | None = None
    disk_util_pct: float | None = None  # the busiest device
    disk_read_mb_per_s: float | None = None  # all whole devices together
    disk_write_mb_per_s: float | None = None
    net_rx_mb_per_s: float | None = None
    net_tx_mb_per_s: float | None = None
    data_wait_pct: float | None = None  # share of step time the runtime waited for data
    disks: tuple[DiskSample, ...] = ()
    sources: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Sample:
    """Everything read at one instant: the host and each GPU."""

    timestamp_s: float  # Unix time, seconds
    host: HostSample = field(default_factory=HostSample)
    gpus: tuple[GpuSample, ...] = ()
    notes: tuple[str, ...] = ()  # what could not be read this time, one line each


COLUMNS: tuple[str, ...] = (
    "timestamp",
    "gpu",
    "gpu_name",
    "gpu_uuid",
    "lost",
    *GPU_FLOAT_COLUMNS,
    *GPU_INT_COLUMNS,
    "xid",
    *HOST_COLUMNS,
    "sources",
)
"""The flat row layout, in order. Documented in docs/monitor.md."""


def _encode_sources(pairs: Iterable[tuple[str, str]]) -> str:
    return ";".join(f"{k}={v}" for k, v in pairs)


def decode_sources(text: str) -> tuple[tuple[str, str], ...]:
    """The metric-to-source pairs of a stored "key=value;..." text."""
    out: list[tuple[str, str]] = []
    for part in text.split(";"):
        key, sep, value = part.partition("=")
        if sep and key:
            out.append((key.strip(), value.strip()))
    return tuple(out)


def to_rows(sample: Sample) -> list[dict[str, Any]]:
    """The flat rows of one sample (one per GPU; one with gpu=None when there is none)."""
    host = sample.host
    base: dict[str, Any] = {"timestamp": sample.timestamp_s}
    for name in HOST_COLUMNS:
        base[name] = getattr(host, name)
    rows: list[dict[str, Any]] = []
    gpus: tuple[GpuSample | None, ...] = sample.gpus or (None,)
    for gpu in gpus:
        row = dict(base)
        pairs = list(host.sources)
        if gpu is None:
            row.update({"gpu": None, "gpu_name": "", "gpu_uuid": "", "lost": False, "xid": ""})
            for name in (*GPU_FLOAT_COLUMNS, *GPU_INT_COLUMNS):
                row[name] = None
        else:
            row.update(
                {
                    "gpu": gpu.index,
                    "gpu_name": gpu.name,
                    "gpu_uuid": gpu.uuid,
                    "lost": gpu.lost,
                    "xid": " ".join(str(x) for x in gpu.xids),
                }
            )
            for name in (*GPU_FLOAT_COLUMNS, *GPU_INT_COLUMNS):
                row[name] = getattr(gpu, name)
            pairs.extend(gpu.sources)
        row["sources"] = _encode_sources(pairs)
        rows.append(row)
    return rows


def _host_from_row(row: Mapping[str, Any], sources: tuple[tuple[str, str], ...]) -> HostSample:
    values: dict[str, Any] = {name: _float_or_none(row.get(name), name) for name in HOST_COLUMNS}
    host_keys = set(HOST_COLUMNS)
    return HostSample(**values, sources=tuple(p for p in sources if p[0] in host_keys))


def _float_or_none(value: Any, column: str) -> float | None:
    """A metric cell: blank -> None (not measured), else a finite number (`InputError`)."""
    return checks.optional_finite(value, column)


def _int_or_none(value: Any) -> int | None:
    if value is None or value == "":
        return None
    text = str(value).strip()
    return int(text, 0) if text.lower().startswith("0x") else int(float(text))


def gpu_from_row(row: Mapping[str, Any], sources: tuple[tuple[str, str], ...]) -> GpuSample:
    """A GPU sample from a stored row and its metric sources."""
    gpu_keys = set(GPU_FLOAT_COLUMNS) | set(GPU_INT_COLUMNS)
    xid_text = str(row.get("xid") or "").replace(",", " ")
    lost = str(row.get("lost", "")).strip().lower() in {"1", "true", "yes"}
    values: dict[str, Any] = {
        name: _float_or_none(row.get(name), name) for name in GPU_FLOAT_COLUMNS
    }
    values.update({name: _int_or_none(row.get(name)) for name in GPU_INT_COLUMNS})
    return GpuSample(
        index=int(float(row["gpu"])),
        name=str(row.get("gpu_name") or ""),
        uuid=str(row.get("gpu_uuid") or ""),
        lost=lost,
        **values,
        xids=tuple(int(x) for x in xid_text.split()),
        sources=tuple(p for p in sources if p[0] in gpu_keys),
    )


def from_rows(rows: Iterable[Mapping[str, Any]]) -> list[Sample]:
    """Group flat rows by timestamp back into samples (rows may come in any order).

    Raises ValueError/KeyError on a malformed value; callers turn that into a DataError with the
    file and line.
    """
    grouped: dict[float, list[Mapping[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(float(row["timestamp"]), []).append(row)
    samples: list[Sample] = []
    for ts in sorted(grouped):
        group = grouped[ts]
        sources = decode_sources(str(group[0].get("sources") or ""))
        host = _host_from_row(group[0], sources)
        gpus = tuple(
            sorted(
                (
                    gpu_from_row(r, decode_sources(str(r.get("sources") or "")))
                    for r in group
                    if r.get("gpu") not in (None, "")
                ),
                key=lambda g: g.index,
            )
        )
        samples.append(Sample(timestamp_s=ts, host=host, gpus=gpus))
    return samples
