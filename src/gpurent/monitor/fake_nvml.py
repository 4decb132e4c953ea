"""A stand-in for the `pynvml` module (nvidia-ml-py) that replays scripted GPU states.

It follows nvidia-ml-py's API for the calls the probe makes: the same function names, `NVMLError`
with a `.value` from the same `NVML_ERROR_*` constants, struct-like results with the same attribute
names (`.gpu`, `.memory`, `.used`, `.total`, `.pid`, `.usedGpuMemory`, `.busId`), the GPM trio
`nvmlGpmSampleAlloc` / `nvmlGpmSampleGet` / `nvmlGpmMetricsGet` with a `c_nvmlGpmMetricsGet_t`
whose `.metrics[i]` carry `.metricId`, `.nvmlReturn` and `.value`, and the event-set calls for Xid.
So the real probe code runs in CI and in `gpurent monitor --fake-gpus SCENARIO` demos.

A scenario is a dict (or a YAML/JSON file) like::

    step_s: 1.0                 # how long each scripted step lasts (on the injected clock)
    init_error: null            # driver_not_loaded | library_not_found | no_permission
    loop: false                 # after the last step: hold it (false) or start over (true)
    gpus:
      - name: NVIDIA H100 80GB HBM3
        count: 8                # this entry stands for 8 identical GPUs
        gpm: true               # GPM metrics supported (Hopper and newer)
        memory_total_mib: 81559
        power_limit_w: 700
        sm_clock_max_mhz: 1980
        pcie_gen_max: 5
        pcie_width_max: 16
        unsupported: [ecc]      # fields answering NVML_ERROR_NOT_SUPPORTED
        no_permission: [processes]
        lost_at_step: 30        # from this step on every call answers NVML_ERROR_GPU_IS_LOST
        steps:                  # partial states; a missing key keeps the previous value
          - {busy_pct: 100, sm_util_pct: 85, mem_copy_pct: 40, power_w: 520}

Simplification: GPM metrics are the scripted values at the second sample's step (the real
library integrates counters between the two samples).
"""

# ruff: noqa: N802, N815, N816 - names mirror nvidia-ml-py
from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

NVML_SUCCESS = 0
NVML_ERROR_UNINITIALIZED = 1
NVML_ERROR_INVALID_ARGUMENT = 2
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NO_PERMISSION = 4
NVML_ERROR_DRIVER_NOT_LOADED = 9
NVML_ERROR_TIMEOUT = 10
NVML_ERROR_LIBRARY_NOT_FOUND = 12
NVML_ERROR_GPU_IS_LOST = 15
NVML_ERROR_UNKNOWN = 999

NVML_TEMPERATURE_GPU = 0
NVML_CLOCK_GRAPHICS = 0
NVML_CLOCK_SM = 1
NVML_CLOCK_MEM = 2
NVML_MEMORY_ERROR_TYPE_CORRECTED = 0
NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
NVML_VOLATILE_ECC = 0
NVML_PCIE_UTIL_TX_BYTES = 0
NVML_PCIE_UTIL_RX_BYTES = 1
nvmlEventTypeXidCriticalError = 0x0000000000000008

NVML_GPM_METRICS_GET_VERSION = 1
NVML_GPM_METRIC_SM_UTIL = 2
NVML_GPM_METRIC_SM_OCCUPANCY = 3
NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5
NVML_GPM_METRIC_DRAM_BW_UTIL = 10
NVML_GPM_METRIC_PCIE_TX_PER_SEC = 20
NVML_GPM_METRIC_PCIE_RX_PER_SEC = 21
NVML_GPM_METRIC_MAX = 477

_ERROR_STRINGS = {
    NVML_ERROR_UNINITIALIZED: "Uninitialized",
    NVML_ERROR_NOT_SUPPORTED: "Not Supported",
    NVML_ERROR_NO_PERMISSION: "Insufficient Permissions",
    NVML_ERROR_DRIVER_NOT_LOADED: "Driver Not Loaded",
    NVML_ERROR_TIMEOUT: "Timeout",
    NVML_ERROR_LIBRARY_NOT_FOUND: "NVML Shared Library Not Found",
    NVML_ERROR_GPU_IS_LOST: "GPU is lost",
    NVML_ERROR_UNKNOWN: "Unknown Error",
}
_INIT_ERRORS = {
    "driver_not_loaded": NVML_ERROR_DRIVER_NOT_LOADED,
    "library_not_found": NVML_ERROR_LIBRARY_NOT_FOUND,
    "no_permission": NVML_ERROR_NO_PERMISSION,
}
_GPM_KEYS = {
    NVML_GPM_METRIC_SM_UTIL: "sm_util_pct",
    NVML_GPM_METRIC_SM_OCCUPANCY: "sm_occupancy_pct",
    NVML_GPM_METRIC_ANY_TENSOR_UTIL: "tensor_util_pct",
    NVML_GPM_METRIC_DRAM_BW_UTIL: "dram_bw_util_pct",
    NVML_GPM_METRIC_PCIE_TX_PER_SEC: "pcie_tx_mib_per_s",
    NVML_GPM_METRIC_PCIE_RX_PER_SEC: "pcie_rx_mib_per_s",
}
_DEFAULT_STATE: dict[str, Any] = {
    "busy_pct": 0,
    "mem_copy_pct": 0,
    "sm_util_pct": 0.0,
    "sm_occupancy_pct": 0.0,
    "tensor_util_pct": 0.0,
    "dram_bw_util_pct": 0.0,
    "memory_used_mib": 512,
    "power_w": 70.0,
    "temperature_c": 35,
    "sm_clock_mhz": 345,
    "mem_clock_mhz": 2619,
    "throttle_reasons": 0x1,
    "pcie_gen": None,  # None: the maximum
    "pcie_width": None,
    "pcie_tx_kb_per_s": 0,
    "pcie_rx_kb_per_s": 0,
    "ecc_uncorrected": 0,
    "ecc_corrected": 0,
    "xids": [],
    "processes": [],
}


class NVMLError(Exception):
    """Like pynvml.NVMLError: `.value` holds the NVML_ERROR_* code."""

    def __init__(self, value: int) -> None:
        super().__init__(value)
        self.value = value

    def __str__(self) -> str:
        return _ERROR_STRINGS.get(self.value, f"NVML Error with code {self.value}")


@dataclass(slots=True)
class _Device:
    index: int
    spec: Mapping[str, Any]
    states: list[dict[str, Any]]
    xid_seen_step: int = -1

    def has(self, key: str, listname: str) -> bool:
        return key in self.spec.get(listname, ())


@dataclass(slots=True)
class _GpmSample:
    device: int = -1
    step: int = -1


@dataclass(slots=True)
class _GpmMetric:
    metricId: int = 0
    nvmlReturn: int = NVML_SUCCESS
    value: float = 0.0


@dataclass(slots=True)
class _MetricsGetStruct:
    """Like pynvml.c_nvmlGpmMetricsGet_t."""

    version: int = 0
    numMetrics: int = 0
    sample1: _GpmSample | None = None
    sample2: _GpmSample | None = None
    metrics: list[_GpmMetric] = field(default_factory=lambda: [_GpmMetric() for _ in range(32)])


def _expand_states(steps: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    current = dict(_DEFAULT_STATE)
    out: list[dict[str, Any]] = []
    for step in steps or [{}]:
        unknown = set(step) - set(_DEFAULT_STATE)
        if unknown:
            raise ValueError(f"unknown state key(s) {sorted(unknown)}; known: {sorted(current)}")
        current = {**current, "xids": [], **step}
        out.append(current)
    return out


class FakeNvml:
    """An object that quacks like the `pynvml` module, driven by a scenario and a clock."""

    NVMLError = NVMLError
    c_nvmlGpmMetricsGet_t = _MetricsGetStruct

    def __init__(
        self, scenario: Mapping[str, Any], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._clock = clock
        self._step_s = float(scenario.get("step_s", 1.0))
        self._loop = bool(scenario.get("loop", False))
        self._init_error = scenario.get("init_error")
        if self._init_error is not None and self._init_error not in _INIT_ERRORS:
            raise ValueError(f"init_error must be one of {sorted(_INIT_ERRORS)}")
        self._devices: list[_Device] = []
        for spec in scenario.get("gpus", []):
            states = _expand_states(list(spec.get("steps", [])))
            for _ in range(int(spec.get("count", 1))):
                self._devices.append(_Device(len(self._devices), spec, states))
        self._t0: float | None = None
        self._events: list[tuple[int, int]] = []
        # every NVML_* constant of this module is an attribute, like on the real module
        for key, value in globals().items():
            if key.startswith(("NVML_", "nvmlEventType")):
                setattr(self, key, value)

    # --- library ---------------------------------------------------------------------------
    def nvmlInit(self) -> None:
        """Start the scenario's clock; raise the scenario's init error if it has one."""
        if self._init_error is not None:
            raise NVMLError(_INIT_ERRORS[self._init_error])
        self._t0 = self._clock()

    def nvmlShutdown(self) -> None:
        """Stop: later calls fail as uninitialised."""
        self._t0 = None

    def nvmlSystemGetDriverVersion(self) -> str:
        """A fixed fake driver version."""
        self._initialised()
        return "570.00-fake"

    def nvmlDeviceGetCount(self) -> int:
        """Number of GPUs in the scenario."""
        self._initialised()
        return len(self._devices)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> _Device:
        """The GPU at index; NVMLError on an index out of range."""
        self._initialised()
        if not 0 <= index < len(self._devices):
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        return self._devices[index]

    # --- state -----------------------------------------------------------------------------
    def _initialised(self) -> float:
        if self._t0 is None:
            raise NVMLError(NVML_ERROR_UNINITIALIZED)
        return self._t0

    def _step(self) -> int:
        return max(0, int((self._clock() - self._initialised()) / self._step_s))

    def _state(self, dev: _Device, key: str, listname_key: str | None = None) -> Any:
        step = self._step()
        lost_at = dev.spec.get("lost_at_step")
        if lost_at is not None and step >= int(lost_at):
            raise NVMLError(NVML_ERROR_GPU_IS_LOST)
        feature = listname_key or key
        if dev.has(feature, "unsupported"):
            raise NVMLError(NVML_ERROR_NOT_SUPPORTED)
        if dev.has(feature, "no_permission"):
            raise NVMLError(NVML_ERROR_NO_PERMISSION)
        index = step % len(dev.states) if self._loop else min(step, len(dev.states) - 1)
        return dev.states[index][key]

    # --- device queries --------------------------------------------------------------------
    def nvmlDeviceGetName(self, handle: _Device) -> str:
        """The GPU's name (the scenario's, else an H100's)."""
        self._state(handle, "busy_pct", "name")
        return str(handle.spec.get("name", "NVIDIA H100 80GB HBM3"))

    def nvmlDeviceGetUUID(self, handle: _Device) -> str:
        """A fake UUID numbered by the GPU's index."""
        self._state(handle, "busy_pct", "uuid")
        return f"GPU-fake0000-0000-0000-0000-{handle.index:012d}"

    def nvmlDeviceGetPciInfo(self, handle: _Device) -> SimpleNamespace:
        """PCI info whose bus ID is numbered by the GPU's index."""
        self._state(handle, "busy_pct", "pci")
        return SimpleNamespace(busId=f"00000000:{0x18 + handle.index:02X}:00.0")

    def nvmlDeviceGetUtilizationRates(self, handle: _Device) -> SimpleNamespace:
        """Busy and memory-copy utilisation in % at the current step."""
        busy = self._state(handle, "busy_pct", "utilization")
        return SimpleNamespace(gpu=busy, memory=self._state(handle, "mem_copy_pct"))

    def nvmlDeviceGetMemoryInfo(self, handle: _Device) -> SimpleNamespace:
        """Total, used and free memory in bytes at the current step."""
        used_mib = float(self._state(handle, "memory_used_mib", "memory"))
        total_mib = float(handle.spec.get("memory_total_mib", 81559))
        mib = 2**20
        return SimpleNamespace(
            total=int(total_mib * mib),
            used=int(used_mib * mib),
            free=int((total_mib - used_mib) * mib),
        )

    def nvmlDeviceGetPowerUsage(self, handle: _Device) -> int:
        """Power draw in milliwatts at the current step."""
        return int(float(self._state(handle, "power_w", "power")) * 1000)

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: _Device) -> int:
        """The power limit in milliwatts (the scenario's, else 700 W)."""
        self._state(handle, "power_w", "power")
        return int(float(handle.spec.get("power_limit_w", 700)) * 1000)

    def nvmlDeviceGetTemperature(self, handle: _Device, sensor: int) -> int:
        """Temperature in degrees C at the current step."""
        return int(self._state(handle, "temperature_c", "temperature"))

    def nvmlDeviceGetClockInfo(self, handle: _Device, clock_type: int) -> int:
        """SM or memory clock in MHz at the current step."""
        key = (
            "sm_clock_mhz"
            if clock_type in (NVML_CLOCK_SM, NVML_CLOCK_GRAPHICS)
            else "mem_clock_mhz"
        )
        return int(self._state(handle, key, "clocks"))

    def nvmlDeviceGetMaxClockInfo(self, handle: _Device, clock_type: int) -> int:
        """Maximum SM or memory clock in MHz."""
        self._state(handle, "sm_clock_mhz", "clocks")
        if clock_type == NVML_CLOCK_MEM:
            return int(handle.spec.get("mem_clock_max_mhz", 2619))
        return int(handle.spec.get("sm_clock_max_mhz", 1980))

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: _Device) -> int:
        """The clock throttle reasons bit mask at the current step."""
        return int(self._state(handle, "throttle_reasons", "throttle"))

    def nvmlDeviceGetCurrPcieLinkGeneration(self, handle: _Device) -> int:
        """Current PCIe generation (the maximum unless the step says otherwise)."""
        value = self._state(handle, "pcie_gen", "pcie_link")
        return int(handle.spec.get("pcie_gen_max", 5) if value is None else value)

    def nvmlDeviceGetMaxPcieLinkGeneration(self, handle: _Device) -> int:
        """Maximum PCIe generation."""
        self._state(handle, "pcie_gen", "pcie_link")
        return int(handle.spec.get("pcie_gen_max", 5))

    def nvmlDeviceGetCurrPcieLinkWidth(self, handle: _Device) -> int:
        """Current PCIe lane width (the maximum unless the step says otherwise)."""
        value = self._state(handle, "pcie_width", "pcie_link")
        return int(handle.spec.get("pcie_width_max", 16) if value is None else value)

    def nvmlDeviceGetMaxPcieLinkWidth(self, handle: _Device) -> int:
        """Maximum PCIe lane width."""
        self._state(handle, "pcie_width", "pcie_link")
        return int(handle.spec.get("pcie_width_max", 16))

    def nvmlDeviceGetPcieThroughput(self, handle: _Device, counter: int) -> int:
        """PCIe transmit or receive throughput in KB/s at the current step."""
        key = "pcie_tx_kb_per_s" if counter == NVML_PCIE_UTIL_TX_BYTES else "pcie_rx_kb_per_s"
        return int(self._state(handle, key, "pcie_throughput"))

    def nvmlDeviceGetTotalEccErrors(self, handle: _Device, error_type: int, counter: int) -> int:
        """Corrected or uncorrected ECC error count at the current step."""
        key = (
            "ecc_uncorrected"
            if error_type == NVML_MEMORY_ERROR_TYPE_UNCORRECTED
            else "ecc_corrected"
        )
        return int(self._state(handle, key, "ecc"))

    def nvmlDeviceGetComputeRunningProcesses(self, handle: _Device) -> list[SimpleNamespace]:
        """The processes on the GPU at the current step, with their memory in bytes."""
        procs = self._state(handle, "processes")
        return [
            SimpleNamespace(pid=int(p["pid"]), usedGpuMemory=int(float(p["used_mib"]) * 2**20))
            for p in procs
        ]

    # --- GPM -------------------------------------------------------------------------------
    def nvmlGpmQueryDeviceSupport(self, handle: _Device) -> SimpleNamespace:
        """Whether the GPU supports GPM metrics (the scenario's gpm flag)."""
        self._state(handle, "busy_pct", "gpm_query")
        return SimpleNamespace(version=1, isSupportedDevice=int(bool(handle.spec.get("gpm"))))

    def nvmlGpmSampleAlloc(self) -> _GpmSample:
        """A new, empty GPM sample."""
        self._initialised()
        return _GpmSample()

    def nvmlGpmSampleFree(self, sample: _GpmSample) -> None:
        """Nothing to free."""
        return None

    def nvmlGpmSampleGet(self, handle: _Device, sample: _GpmSample) -> _GpmSample:
        """Fill sample with the GPU and the current step; NVMLError where GPM is not supported."""
        if not handle.spec.get("gpm"):
            raise NVMLError(NVML_ERROR_NOT_SUPPORTED)
        self._state(handle, "sm_util_pct", "gpm")
        sample.device, sample.step = handle.index, self._step()
        return sample

    def nvmlGpmMetricsGet(self, request: _MetricsGetStruct) -> _MetricsGetStruct:
        """Fill each requested GPM metric from the later sample's step (unknown: an error code)."""
        s1, s2 = request.sample1, request.sample2
        if s1 is None or s2 is None or s1.device < 0 or s1.device != s2.device:
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        dev = self._devices[s2.device]
        index = s2.step % len(dev.states) if self._loop else min(s2.step, len(dev.states) - 1)
        state = dev.states[index]
        for metric in request.metrics[: request.numMetrics]:
            key = _GPM_KEYS.get(metric.metricId)
            if key is None:
                metric.nvmlReturn = NVML_ERROR_NOT_SUPPORTED
                continue
            if key.startswith("pcie_"):
                kb_key = "pcie_tx_kb_per_s" if "tx" in key else "pcie_rx_kb_per_s"
                metric.value = float(state[kb_key]) * 1000 / 2**20
            else:
                metric.value = float(state[key])
            metric.nvmlReturn = NVML_SUCCESS
        return request

    # --- events (Xid) ----------------------------------------------------------------------
    def nvmlEventSetCreate(self) -> list[_Device]:
        """A new, empty event set."""
        self._initialised()
        return []

    def nvmlDeviceRegisterEvents(
        self, handle: _Device, types: int, event_set: list[_Device]
    ) -> None:
        """Add the GPU to the event set (Xid events)."""
        self._state(handle, "xids", "events")
        event_set.append(handle)

    def nvmlEventSetWait(self, event_set: list[_Device], timeout_ms: int) -> SimpleNamespace:
        """The next Xid event of the set's GPUs up to now; NVMLError (timeout) if none."""
        step = self._step()
        for dev in event_set:
            last = min(step, len(dev.states) - 1)
            lost_at = dev.spec.get("lost_at_step")
            for s in range(dev.xid_seen_step + 1, last + 1):
                if lost_at is None or s < int(lost_at):
                    self._events.extend((dev.index, x) for x in dev.states[s]["xids"])
            dev.xid_seen_step = max(dev.xid_seen_step, last)
        if not self._events:
            raise NVMLError(NVML_ERROR_TIMEOUT)
        index, xid = self._events.pop(0)
        return SimpleNamespace(
            device=self._devices[index], eventType=nvmlEventTypeXidCriticalError, eventData=xid
        )

    def nvmlEventSetFree(self, event_set: list[_Device]) -> None:
        """Empty the event set."""
        event_set.clear()
