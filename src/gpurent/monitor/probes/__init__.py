"""Probes: the seams to the hardware. `NvmlProbe` (GPUs through an NVML module) and `HostProbe`."""

from gpurent.monitor.probes.host import HostProbe
from gpurent.monitor.probes.nvml import NvmlProbe

__all__ = ["HostProbe", "NvmlProbe"]
