"""How fast, how big and how costly a job is on a GPU.

Public API: `estimate(workload, gpu, num_gpus, ...) -> Estimate`, `Calibration`, `MeasuredRow`,
`parse_measurements`, `Estimate`, `MemoryBreakdown`, `Bottleneck`, `load_constants`.
"""

from gpurent.estimate.constants import Constants, load_constants
from gpurent.estimate.estimator import estimate, resolve_model
from gpurent.estimate.measured import Calibration, MeasuredRow, parse_measurements
from gpurent.estimate.result import Bottleneck, Estimate, MemoryBreakdown

__all__ = [
    "Bottleneck",
    "Calibration",
    "Constants",
    "Estimate",
    "MeasuredRow",
    "MemoryBreakdown",
    "estimate",
    "load_constants",
    "parse_measurements",
    "resolve_model",
]
