"""The planner's default estimator: `gpurent.estimate.estimate` behind the `EstimatorFn` seam.

Memoised per distinct (workload, GPU, GPUs, nodes, network): the planner asks for the same
configuration from several offer groups, and estimates are pure.
"""

from __future__ import annotations

from functools import lru_cache

from gpurent.catalog.gpu import GpuSpec
from gpurent.estimate.result import Estimate
from gpurent.workload.spec import Workload


@lru_cache(maxsize=65536)
def default_estimator(
    workload: Workload,
    gpu: GpuSpec,
    num_gpus: int,
    nodes: int,
    inter_node_gbps: float | None,
) -> Estimate:
    """`gpurent.estimate.estimate` for `num_gpus` GPUs over `nodes` nodes."""
    from gpurent.estimate import estimate

    return estimate(workload, gpu, num_gpus, nodes=nodes, inter_node_gbps=inter_node_gbps)
