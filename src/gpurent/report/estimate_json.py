"""The `gpurent estimate --json` document for one workload on one GPU count (the API's too)."""

from __future__ import annotations

from typing import Any

from gpurent.estimate.result import Estimate
from gpurent.report.jsonable import to_jsonable
from gpurent.workload.spec import Workload


def estimate_document(est: Estimate, wl: Workload) -> dict[str, Any]:
    """The estimate's fields plus the derived figures a reader needs (fit, 80% ranges, memory)."""
    doc: dict[str, Any] = to_jsonable(est)
    doc["fits"] = est.fits
    doc["throughput_low"] = est.throughput_low
    doc["throughput_high"] = est.throughput_high
    doc["step_time_low_s"] = est.step_time_low_s
    doc["step_time_high_s"] = est.step_time_high_s
    doc["time_to_finish_low_s"] = est.time_to_finish_low_s
    doc["time_to_finish_high_s"] = est.time_to_finish_high_s
    doc["memory_per_gpu_gib"] = est.memory_per_gpu_gib
    doc["fused_loss"] = wl.fused_loss_on
    doc["memory"]["total_gib"] = est.memory.total_gib
    doc["memory"]["headroom_gib"] = est.memory.headroom_gib
    return dict(to_jsonable(doc))
