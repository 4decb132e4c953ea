"""Hardware detection at the edge: CPU model and cores, GPU model (torch, resolved against the
catalog), PCIe link generation/width and driver through NVML (nvidia-ml-py, when installed).

NVML calls mirror `nvidia-smi -q -d PCIE`: nvmlDeviceGetCurrPcieLinkGeneration /
GetMaxPcieLinkGeneration / GetCurrPcieLinkWidth / GetMaxPcieLinkWidth. An idle GPU lowers its
link generation to save power, so the current values are read while host-device copies run.
"""

from __future__ import annotations

import importlib
import os
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpurent.bench.result import HardwareInfo
from gpurent.catalog import find_gpu
from gpurent.units import BYTES_PER_GIB


@dataclass(frozen=True, slots=True, kw_only=True)
class PcieLink:
    """A GPU's PCIe link: current and maximum generation and lane width."""

    gen_current: int
    gen_max: int
    width_current: int
    width_max: int


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The 'model name' of the first CPU in /proc/cpuinfo, else platform.processor()."""
    try:
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name") and ":" in line:
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _nvml() -> Any | None:
    try:
        nvml = importlib.import_module("pynvml")
        nvml.nvmlInit()
    except Exception:  # no library, no driver, no GPU: NVML figures are simply absent
        return None
    return nvml


def read_pcie_link(index: int = 0) -> PcieLink | None:
    """Current and maximum PCIe link of GPU `index`, or None without NVML."""
    nvml = _nvml()
    if nvml is None:
        return None
    try:
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        return PcieLink(
            gen_current=int(nvml.nvmlDeviceGetCurrPcieLinkGeneration(handle)),
            gen_max=int(nvml.nvmlDeviceGetMaxPcieLinkGeneration(handle)),
            width_current=int(nvml.nvmlDeviceGetCurrPcieLinkWidth(handle)),
            width_max=int(nvml.nvmlDeviceGetMaxPcieLinkWidth(handle)),
        )
    except Exception:  # NVML_ERROR_NOT_SUPPORTED on some virtualised GPUs
        return None
    finally:
        nvml.nvmlShutdown()


def _driver_version() -> str | None:
    nvml = _nvml()
    if nvml is None:
        return None
    try:
        version = nvml.nvmlSystemGetDriverVersion()
        return version.decode() if isinstance(version, bytes) else str(version)
    except Exception:
        return None
    finally:
        nvml.nvmlShutdown()


def detect_hardware(torch: Any, device: str, link: PcieLink | None = None) -> HardwareInfo:
    """What this machine is. `link` overrides the PCIe reading (one taken under load)."""
    gpu_name = gpu_catalog = None
    gpu_mem_gib = None
    gpu_count = 0
    driver = None
    if device == "cuda":
        gpu_count = int(torch.cuda.device_count())
        props = torch.cuda.get_device_properties(0)
        gpu_name = str(props.name)
        gpu_mem_gib = float(props.total_memory) / BYTES_PER_GIB
        spec = find_gpu(gpu_name)
        gpu_catalog = spec.name if spec is not None else None
        if link is None:
            link = read_pcie_link(0)
        driver = _driver_version()
    return HardwareInfo(
        device=device,
        cpu_model=cpu_model(),
        cpu_logical_cores=os.cpu_count() or 1,
        gpu_count=gpu_count,
        gpu_name=gpu_name,
        gpu_catalog_name=gpu_catalog,
        gpu_memory_gib=gpu_mem_gib,
        pcie_gen_current=link.gen_current if link else None,
        pcie_gen_max=link.gen_max if link else None,
        pcie_width_current=link.width_current if link else None,
        pcie_width_max=link.width_max if link else None,
        driver_version=driver,
        torch_version=str(torch.__version__),
    )
