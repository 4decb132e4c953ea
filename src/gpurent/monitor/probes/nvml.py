"""The GPU probe: reads every metric NVML offers for each GPU, and says what it could not read.

It takes the NVML module as a parameter: the real one is `load_nvml()` (nvidia-ml-py, imported
through `gpurent.nvml`, the one NVML seam, whose reads the runtime's health check shares), tests
and demos pass `gpurent.monitor.fake_nvml.FakeNvml`. Every query is guarded on its own:
`NVML_ERROR_NOT_SUPPORTED` leaves the field empty (said once per GPU and field),
`NVML_ERROR_NO_PERMISSION` likewise, `NVML_ERROR_GPU_IS_LOST` marks the GPU lost and it is not
queried again. A failing `nvmlInit` (no driver, no library) leaves the probe with no GPUs and a
note; the host metrics still flow.

SM utilisation comes only from GPM (Hopper+): two GPM samples per GPU, at least
`gpm_min_interval_s` (0.1 s, NVML's guidance) apart, give SM_UTIL (2), SM_OCCUPANCY (3),
ANY_TENSOR_UTIL (5), DRAM_BW_UTIL (10), PCIE_TX/RX_PER_SEC (20/21, MiB/s). Without GPM only the
busy % exists and the sample says so (`sm_util_pct` empty, `gpu_busy_pct` from `nvml`).
Xid errors come from an NVML event set polled with a zero timeout.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from gpurent import nvml as seam
from gpurent.monitor.sample import GpuProcess, GpuSample, Source

MIB = 2**20
_GPM_METRICS = (
    ("NVML_GPM_METRIC_SM_UTIL", 2, "sm_util_pct"),
    ("NVML_GPM_METRIC_SM_OCCUPANCY", 3, "sm_occupancy_pct"),
    ("NVML_GPM_METRIC_ANY_TENSOR_UTIL", 5, "tensor_util_pct"),
    ("NVML_GPM_METRIC_DRAM_BW_UTIL", 10, "dram_bw_util_pct"),
    ("NVML_GPM_METRIC_PCIE_TX_PER_SEC", 20, "pcie_tx_mb_per_s"),
    ("NVML_GPM_METRIC_PCIE_RX_PER_SEC", 21, "pcie_rx_mb_per_s"),
)
_ERR_NOT_SUPPORTED = 3
_ERR_NO_PERMISSION = 4
_ERR_TIMEOUT = 10
_ERR_GPU_IS_LOST = 15


def load_nvml() -> Any:
    """The real `pynvml` module (nvidia-ml-py, the `monitor` extra), or None when not installed."""
    return seam.import_pynvml()


class _LostError(Exception):
    """Raised inside a read when NVML says the GPU is lost."""


@dataclass(slots=True)
class _Gpu:
    index: int
    handle: Any
    name: str = ""
    uuid: str = ""
    pci_bus_id: str = ""
    lost: bool = False
    gpm: bool = False
    gpm_prev: Any = None
    gpm_prev_t: float = 0.0
    gpm_spare: Any = None
    static: dict[str, Any] = field(default_factory=dict)
    reported: set[str] = field(default_factory=set)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class NvmlProbe:
    """Reads GPUs through an NVML module object. Not thread-safe; one per monitor loop."""

    def __init__(
        self,
        nvml: Any,
        *,
        clock: Callable[[], float] = time.monotonic,
        gpm_min_interval_s: float = 0.1,
    ) -> None:
        self._nvml = nvml
        self._clock = clock
        self._gpm_min_interval_s = gpm_min_interval_s
        self._gpus: list[_Gpu] = []
        self._events: Any = None
        self.available = False
        self.driver_version = ""
        self.open_note = ""

    # --- life cycle ------------------------------------------------------------------------
    def open(self) -> list[str]:
        """Initialise NVML and enumerate GPUs. Returns notes on what could not be done."""
        nv = self._nvml
        notes: list[str] = []
        try:
            nv.nvmlInit()
            count = int(nv.nvmlDeviceGetCount())
        except nv.NVMLError as exc:
            self.open_note = f"NVML unavailable ({exc}): no GPU metrics, host metrics only"
            return [self.open_note]
        self.available = True
        try:
            self.driver_version = _text(nv.nvmlSystemGetDriverVersion())
        except nv.NVMLError:
            self.driver_version = ""
        for index in range(count):
            try:
                gpu = _Gpu(index=index, handle=nv.nvmlDeviceGetHandleByIndex(index))
            except nv.NVMLError as exc:
                notes.append(f"GPU {index}: cannot get a handle ({exc})")
                continue
            self._gpus.append(gpu)
            notes.extend(self._read_static(gpu))
        notes.extend(self._open_events())
        return notes

    def close(self) -> None:
        """Free the GPM samples and shut NVML down (errors ignored)."""
        nv = self._nvml
        try:
            for gpu in self._gpus:
                for s in (gpu.gpm_prev, gpu.gpm_spare):
                    if s is not None:
                        nv.nvmlGpmSampleFree(s)
            if self._events is not None:
                nv.nvmlEventSetFree(self._events)
            if self.available:
                nv.nvmlShutdown()
        except nv.NVMLError:
            pass
        self.available = False

    @property
    def gpu_count(self) -> int:
        """Number of GPUs the probe reads."""
        return len(self._gpus)

    # --- guarded calls ---------------------------------------------------------------------
    def _call(self, gpu: _Gpu, what: str, notes: list[str], fn: Callable[[], Any]) -> Any:
        """Run one NVML query; None (and a note, once per GPU and field) when it fails."""
        nv = self._nvml
        try:
            return fn()
        except nv.NVMLError as exc:
            code = getattr(exc, "value", None)
            if code == _ERR_GPU_IS_LOST:
                raise _LostError from exc
            if what not in gpu.reported:
                gpu.reported.add(what)
                kind = {_ERR_NOT_SUPPORTED: "not supported", _ERR_NO_PERMISSION: "no permission"}
                text = kind.get(code, str(exc)) if isinstance(code, int) else str(exc)
                notes.append(f"GPU {gpu.index}: {what}: {text}")
            return None

    def _read_static(self, gpu: _Gpu) -> list[str]:
        nv, h = self._nvml, gpu.handle
        notes: list[str] = []
        try:
            name = self._call(gpu, "name", notes, lambda: nv.nvmlDeviceGetName(h))
            uuid = self._call(gpu, "uuid", notes, lambda: nv.nvmlDeviceGetUUID(h))
            pci = self._call(gpu, "pci info", notes, lambda: nv.nvmlDeviceGetPciInfo(h))
            gpu.name = _text(name) if name is not None else ""
            gpu.uuid = _text(uuid) if uuid is not None else ""
            gpu.pci_bus_id = _text(pci.busId) if pci is not None else ""
            st = gpu.static
            st["memory_total_mib"] = None
            st["pcie_gen_max"] = self._call(
                gpu, "max PCIe generation", notes, lambda: nv.nvmlDeviceGetMaxPcieLinkGeneration(h)
            )
            st["pcie_width_max"] = self._call(
                gpu, "max PCIe width", notes, lambda: nv.nvmlDeviceGetMaxPcieLinkWidth(h)
            )
            st["sm_clock_max_mhz"] = self._call(
                gpu,
                "max SM clock",
                notes,
                lambda: nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM),
            )
            limit = self._call(
                gpu, "power limit", notes, lambda: nv.nvmlDeviceGetEnforcedPowerLimit(h)
            )
            st["power_limit_w"] = None if limit is None else limit / 1000.0
            support = self._call(
                gpu, "GPM support query", notes, lambda: nv.nvmlGpmQueryDeviceSupport(h)
            )
            gpu.gpm = bool(support is not None and support.isSupportedDevice)
            if not gpu.gpm:
                notes.append(
                    f"GPU {gpu.index}: no GPM (needs Hopper or newer): SM utilisation is not "
                    "measured, only busy % (any kernel running)"
                )
        except _LostError:
            gpu.lost = True
            notes.append(f"GPU {gpu.index}: lost (NVML_ERROR_GPU_IS_LOST)")
        return notes

    def _open_events(self) -> list[str]:
        nv = self._nvml
        try:
            self._events = nv.nvmlEventSetCreate()
        except (nv.NVMLError, AttributeError) as exc:
            return [f"Xid events unavailable ({exc}); check the kernel log for NVRM: Xid lines"]
        notes: list[str] = []
        for gpu in self._gpus:
            if gpu.lost:
                continue
            try:
                nv.nvmlDeviceRegisterEvents(
                    gpu.handle, nv.nvmlEventTypeXidCriticalError, self._events
                )
            except nv.NVMLError as exc:
                notes.append(f"GPU {gpu.index}: Xid events unavailable ({exc})")
        return notes

    # --- reading ---------------------------------------------------------------------------
    def read(self) -> tuple[tuple[GpuSample, ...], list[str]]:
        """One sample of every GPU, plus notes on what could not be read (new ones only)."""
        notes: list[str] = []
        xids = self._drain_xids(notes)
        out: list[GpuSample] = []
        for gpu in self._gpus:
            if not gpu.lost:
                try:
                    out.append(self._read_gpu(gpu, xids.get(gpu.index, ()), notes))
                    continue
                except _LostError:
                    gpu.lost = True
                    notes.append(f"GPU {gpu.index}: lost (NVML_ERROR_GPU_IS_LOST); not read again")
            out.append(
                GpuSample(
                    index=gpu.index,
                    name=gpu.name,
                    uuid=gpu.uuid,
                    pci_bus_id=gpu.pci_bus_id,
                    lost=True,
                )
            )
        return tuple(out), notes

    def _drain_xids(self, notes: list[str]) -> dict[int, tuple[int, ...]]:
        nv = self._nvml
        if self._events is None:
            return {}
        by_handle = {id(g.handle): g.index for g in self._gpus}
        found: dict[int, list[int]] = {}
        for _ in range(64):  # bounded: a storm must not stall the loop
            try:
                event = nv.nvmlEventSetWait(self._events, 0)
            except nv.NVMLError as exc:
                if getattr(exc, "value", None) != _ERR_TIMEOUT:
                    notes.append(f"Xid event wait failed ({exc})")
                break
            index = by_handle.get(id(event.device), -1)
            found.setdefault(index, []).append(int(event.eventData))
        return {k: tuple(v) for k, v in found.items()}

    def _read_gpu(self, gpu: _Gpu, xids: tuple[int, ...], notes: list[str]) -> GpuSample:
        nv, h = self._nvml, gpu.handle
        values: dict[str, Any] = {}
        sources: list[tuple[str, str]] = []

        def put(key: str, value: Any, source: Source = Source.NVML) -> None:
            if value is not None:
                values[key] = value
                sources.append((key, source.value))

        util = self._call(gpu, "utilisation", notes, lambda: nv.nvmlDeviceGetUtilizationRates(h))
        if util is not None:
            put("gpu_busy_pct", float(util.gpu))
            put("mem_copy_util_pct", float(util.memory))
        mem = self._call(gpu, "memory info", notes, lambda: nv.nvmlDeviceGetMemoryInfo(h))
        if mem is not None:
            put("memory_used_mib", mem.used / MIB)
            put("memory_total_mib", mem.total / MIB)
        power = self._call(gpu, "power", notes, lambda: nv.nvmlDeviceGetPowerUsage(h))
        put("power_w", None if power is None else power / 1000.0)
        put("power_limit_w", gpu.static.get("power_limit_w"))
        temp = self._call(
            gpu,
            "temperature",
            notes,
            lambda: seam.temperature_c(nv, h),
        )
        put("temperature_c", temp)
        sm = self._call(
            gpu, "SM clock", notes, lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)
        )
        put("sm_clock_mhz", None if sm is None else float(sm))
        smax = gpu.static.get("sm_clock_max_mhz")
        put("sm_clock_max_mhz", None if smax is None else float(smax))
        memclk = self._call(
            gpu, "memory clock", notes, lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM)
        )
        put("mem_clock_mhz", None if memclk is None else float(memclk))
        put(
            "throttle_reasons",
            self._call(gpu, "clock-event reasons", notes, lambda: seam.clock_event_reasons(nv, h)),
        )
        put(
            "pcie_gen",
            self._call(
                gpu, "PCIe generation", notes, lambda: nv.nvmlDeviceGetCurrPcieLinkGeneration(h)
            ),
        )
        put(
            "pcie_width",
            self._call(gpu, "PCIe width", notes, lambda: nv.nvmlDeviceGetCurrPcieLinkWidth(h)),
        )
        put("pcie_gen_max", gpu.static.get("pcie_gen_max"))
        put("pcie_width_max", gpu.static.get("pcie_width_max"))
        put(
            "ecc_uncorrected",
            self._call(
                gpu,
                "ECC counters",
                notes,
                lambda: seam.ecc_errors(nv, h),
            ),
        )
        if "ecc_uncorrected" in values:
            put(
                "ecc_corrected",
                self._call(
                    gpu,
                    "ECC counters",
                    notes,
                    lambda: seam.ecc_errors(nv, h, corrected=True),
                ),
            )
        procs = self._call(
            gpu, "processes", notes, lambda: nv.nvmlDeviceGetComputeRunningProcesses(h)
        )
        processes = tuple(
            GpuProcess(
                pid=int(p.pid),
                used_memory_mib=None if p.usedGpuMemory is None else p.usedGpuMemory / MIB,
            )
            for p in procs or ()
        )
        if gpu.gpm:
            self._read_gpm(gpu, put, notes)
        if "pcie_tx_mb_per_s" not in values:
            self._read_pcie_counters(gpu, put, notes)
        if self._events is not None:
            sources.append(("xid", Source.NVML_EVENTS.value))
        return GpuSample(
            index=gpu.index,
            name=gpu.name,
            uuid=gpu.uuid,
            pci_bus_id=gpu.pci_bus_id,
            xids=xids,
            processes=processes,
            sources=tuple(sources),
            **values,
        )

    def _read_pcie_counters(self, gpu: _Gpu, put: Callable[..., None], notes: list[str]) -> None:
        nv, h = self._nvml, gpu.handle
        for key, counter in (
            ("pcie_tx_mb_per_s", nv.NVML_PCIE_UTIL_TX_BYTES),
            ("pcie_rx_mb_per_s", nv.NVML_PCIE_UTIL_RX_BYTES),
        ):
            kb = self._call(
                gpu,
                "PCIe throughput",
                notes,
                partial(nv.nvmlDeviceGetPcieThroughput, h, counter),
            )
            put(key, None if kb is None else kb / 1000.0)  # KB/s over a 20 ms window -> MB/s

    def _read_gpm(self, gpu: _Gpu, put: Callable[..., None], notes: list[str]) -> None:
        nv, h = self._nvml, gpu.handle
        now = self._clock()
        if gpu.gpm_prev is not None and now - gpu.gpm_prev_t < self._gpm_min_interval_s:
            return
        sample = gpu.gpm_spare if gpu.gpm_spare is not None else self._gpm_alloc(gpu, notes)
        if sample is None:
            return
        got = self._call(gpu, "GPM sample", notes, lambda: nv.nvmlGpmSampleGet(h, sample))
        if got is None:
            gpu.gpm = False
            return
        prev, gpu.gpm_spare = gpu.gpm_prev, gpu.gpm_prev
        gpu.gpm_prev, gpu.gpm_prev_t = sample, now
        if prev is None:
            return  # the first GPM sample only opens the window
        request = nv.c_nvmlGpmMetricsGet_t()
        request.version = nv.NVML_GPM_METRICS_GET_VERSION
        request.numMetrics = len(_GPM_METRICS)
        request.sample1, request.sample2 = prev, sample
        for i, (const, default_id, _key) in enumerate(_GPM_METRICS):
            request.metrics[i].metricId = getattr(nv, const, default_id)
        result = self._call(gpu, "GPM metrics", notes, lambda: nv.nvmlGpmMetricsGet(request))
        if result is None:
            return
        for i, (_const, _id, key) in enumerate(_GPM_METRICS):
            metric = result.metrics[i]
            if metric.nvmlReturn != 0:
                continue
            value = float(metric.value)
            if key.startswith("pcie_"):
                value = value * MIB / 1e6  # GPM gives MiB/s
            put(key, value, Source.NVML_GPM)

    def _gpm_alloc(self, gpu: _Gpu, notes: list[str]) -> Any:
        sample = self._call(gpu, "GPM sample", notes, self._nvml.nvmlGpmSampleAlloc)
        if sample is None:
            gpu.gpm = False
        return sample
