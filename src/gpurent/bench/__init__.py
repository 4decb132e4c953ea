"""Does the rented machine deliver? Micro-benchmarks, model training steps, and a verdict
against what the catalog and the estimator expect. torch is imported lazily (`bench` extra).

Public API: `run_bench(BenchConfig(...), created_at=...)` -> `BenchResult`; `save_result`,
`load_result`; `compare(a, b)`. Rendering (terminal, Markdown) is `gpurent.report.bench`.
"""

from gpurent.bench.compare import CompareRow, compare
from gpurent.bench.result import (
    SCHEMA_VERSION,
    BenchResult,
    CalibrationRow,
    HardwareInfo,
    Measurement,
    ModelRun,
    Status,
    VerdictRow,
    load_result,
    save_result,
)
from gpurent.bench.runner import BENCHMARKS, BenchConfig, estimator_expectations, run_bench

__all__ = [
    "BENCHMARKS",
    "SCHEMA_VERSION",
    "BenchConfig",
    "BenchResult",
    "CalibrationRow",
    "CompareRow",
    "HardwareInfo",
    "Measurement",
    "ModelRun",
    "Status",
    "VerdictRow",
    "compare",
    "estimator_expectations",
    "load_result",
    "run_bench",
    "save_result",
]
