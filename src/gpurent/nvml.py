"""The one NVML seam and GPU fault table, shared by the monitor and runtime rooms.

`import_pynvml()` is the only place in `src/` that imports pynvml (nvidia-ml-py), lazily. The
reads both rooms make (temperature, uncorrected volatile ECC, clock-event reasons) take the NVML
module as a parameter, so tests pass `gpurent.monitor.fake_nvml.FakeNvml` instead.

The thresholds follow RESEARCH.md sections 4 and 5: uncorrected volatile ECC errors must be 0;
temperature above 84 C warns (the DCGM/GCM health-check warning level); clock-event reasons
HwSlowdown (0x8), SwThermal (0x20), HwThermal (0x40) and HwPowerBrake (0x80) warn. Xid 13, 31,
43, 45 and 68 are application errors, any other Xid marks the GPU unhealthy (the NVIDIA k8s
device plugin's policy).

Imports only the standard library; every room above the leaves may import it.
"""

from __future__ import annotations

from typing import Any

THROTTLE_BITS = {
    0x1: "GpuIdle",
    0x2: "ApplicationsClocksSetting",
    0x4: "SwPowerCap",
    0x8: "HwSlowdown",
    0x10: "SyncBoost",
    0x20: "SwThermalSlowdown",
    0x40: "HwThermalSlowdown",
    0x80: "HwPowerBrakeSlowdown",
}
HW_SLOWDOWN = 0x8
HW_POWER_BRAKE = 0x80
POWER_BITS = 0x4 | HW_POWER_BRAKE
THERMAL_BITS = 0x20 | 0x40
THROTTLE_WARN_MASK = HW_SLOWDOWN | THERMAL_BITS | HW_POWER_BRAKE  # a health check warns on these
TEMP_WARN_C = 84.0
APPLICATION_XIDS = frozenset({13, 31, 43, 45, 68})  # NVIDIA k8s device plugin policy


def is_application_xid(xid: int) -> bool:
    """True for an application Xid (warn); any other Xid marks the GPU unhealthy."""
    return xid in APPLICATION_XIDS


def import_pynvml() -> Any:
    """The real `pynvml` module (nvidia-ml-py, the `monitor` extra), or None when not installed."""
    try:
        import pynvml
    except ImportError:
        return None
    return pynvml


def temperature_c(nvml: Any, handle: Any) -> float:
    """The GPU die temperature in degrees C."""
    return float(nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU))


def ecc_errors(nvml: Any, handle: Any, *, corrected: bool = False) -> int:
    """The volatile (since the driver loaded) ECC error count, uncorrected unless `corrected`."""
    kind = (
        nvml.NVML_MEMORY_ERROR_TYPE_CORRECTED
        if corrected
        else nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED
    )
    return int(nvml.nvmlDeviceGetTotalEccErrors(handle, kind, nvml.NVML_VOLATILE_ECC))


def clock_event_reasons(nvml: Any, handle: Any) -> int:
    """The bit mask of current clock-event (throttle) reasons, see `THROTTLE_BITS`."""
    getter = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None)
    if getter is None:  # nvidia-ml-py before 12.535 names it "throttle reasons"
        getter = nvml.nvmlDeviceGetCurrentClocksThrottleReasons
    return int(getter(handle))
