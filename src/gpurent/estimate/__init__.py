"""How fast, how big and how costly a job is on a GPU.

Public API: `Estimator` (the estimator as one object: constants, calibration, GPU specs, its own
memo; `gpurent.estimate.calibration_file.load_estimator()` builds it with the user's calibration),
`bundled_estimator`, `estimate(workload, gpu, num_gpus, ...) -> Estimate` (one-shot),
`Calibration`, `MeasuredRow`, `parse_measurements`, `Estimate`, `MemoryBreakdown`, `Bottleneck`,
`load_constants`.
"""

from gpurent.estimate.constants import Constants, load_constants
from gpurent.estimate.estimator import Estimator, bundled_estimator, estimate, resolve_model
from gpurent.estimate.measured import Calibration, MeasuredRow, parse_measurements
from gpurent.estimate.result import Bottleneck, Estimate, MemoryBreakdown

__all__ = [
    "Bottleneck",
    "Calibration",
    "Constants",
    "Estimate",
    "Estimator",
    "MeasuredRow",
    "MemoryBreakdown",
    "bundled_estimator",
    "estimate",
    "load_constants",
    "parse_measurements",
    "resolve_model",
]
