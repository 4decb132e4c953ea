"""Fleets on Ray: run `gpurent bench --quick` and the runtime's health checks on every node of a
Ray cluster, rank the nodes, flag the one to replace, and measure all-reduce across nodes.

`rank` is pure (figures in, ranking and outliers out); `node` is what runs on each node (the
bench CLI in a subprocess, the health checks, one all-reduce rank); `ray_edge` is the only
module that calls Ray. Its tables are rendered by `gpurent.report.fleet`; only the CLI (and
that renderer) imports this room.
"""

from gpurent.exports import lazy

_EXPORTS = {
    "FleetAllreduce": "gpurent.fleet.service",
    "FleetBench": "gpurent.fleet.service",
    "FleetHealth": "gpurent.fleet.service",
    "FleetRanking": "gpurent.fleet.rank",
    "NodeFigures": "gpurent.fleet.rank",
    "NodeHealth": "gpurent.fleet.service",
    "NodeRank": "gpurent.fleet.rank",
    "Outlier": "gpurent.fleet.rank",
    "PairLink": "gpurent.fleet.service",
    "fleet_allreduce": "gpurent.fleet.service",
    "fleet_bench": "gpurent.fleet.service",
    "fleet_health": "gpurent.fleet.service",
    "rank_fleet": "gpurent.fleet.rank",
}
__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - built from _EXPORTS
__getattr__ = lazy(__name__, _EXPORTS)
