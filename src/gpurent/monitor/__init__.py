"""Watching a rented machine: probes (NVML, host), rules and diagnosis, cost meter, exporter.

Submodules are imported where used (`gpurent.monitor.session`, `gpurent.monitor.rules`, ...);
the names below are imported lazily, when first used, so `import gpurent.monitor` imports no
submodule and needs no extra.
"""

from gpurent.exports import lazy

_EXPORTS = {
    "CostMeter": "gpurent.monitor.cost",
    "DetectedInstance": "gpurent.monitor.instance",
    "Diagnosis": "gpurent.monitor.rules",
    "Exporter": "gpurent.monitor.exporter",
    "FakeNvml": "gpurent.monitor.fake_nvml",
    "Finding": "gpurent.monitor.rules",
    "GpuSample": "gpurent.monitor.sample",
    "HostSample": "gpurent.monitor.sample",
    "IdleWatcher": "gpurent.monitor.idle",
    "InstancePrice": "gpurent.monitor.cost",
    "MonitorSession": "gpurent.monitor.session",
    "Recorder": "gpurent.monitor.recorder",
    "Report": "gpurent.monitor.report",
    "Sample": "gpurent.monitor.sample",
    "Thresholds": "gpurent.monitor.rules",
    "detect_instance": "gpurent.monitor.instance",
    "diagnose": "gpurent.monitor.rules",
    "from_rows": "gpurent.monitor.sample",
    "load_scenario": "gpurent.monitor.scenarios",
    "meter": "gpurent.monitor.cost",
    "price_detected": "gpurent.monitor.instance",
    "price_from_catalog": "gpurent.monitor.cost",
    "read_samples": "gpurent.monitor.sample_files",
    "to_markdown": "gpurent.monitor.report",
    "to_rows": "gpurent.monitor.sample",
}
__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - built from _EXPORTS
__getattr__ = lazy(__name__, _EXPORTS)
