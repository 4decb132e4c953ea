"""How fast, how big and how costly a job is on a GPU.

Public API: `Estimator` (the estimator as one object: constants, calibration, GPU specs, its own
memo; `gpurent.estimate.calibration_file.load_estimator()` builds it with the user's calibration),
`bundled_estimator`, `estimate(workload, gpu, num_gpus, ...) -> Estimate` (one-shot),
`Calibration`, `MeasuredRow`, `parse_measurements`, `Estimate`, `MemoryBreakdown`, `Bottleneck`,
`load_constants`.

The names below are imported lazily: `import gpurent.estimate.serving` (what a serving plan
takes) does not load the training estimator.
"""

from gpurent.exports import lazy

_EXPORTS = {
    "Bottleneck": "gpurent.estimate.result",
    "Calibration": "gpurent.estimate.measured",
    "Constants": "gpurent.estimate.constants",
    "Estimate": "gpurent.estimate.result",
    "Estimator": "gpurent.estimate.estimator",
    "MeasuredRow": "gpurent.estimate.measured",
    "MemoryBreakdown": "gpurent.estimate.result",
    "bundled_estimator": "gpurent.estimate.estimator",
    "estimate": "gpurent.estimate.estimator",
    "load_constants": "gpurent.estimate.constants",
    "parse_measurements": "gpurent.estimate.measured",
    "resolve_model": "gpurent.estimate.estimator",
}
__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - built from _EXPORTS
__getattr__ = lazy(__name__, _EXPORTS)
