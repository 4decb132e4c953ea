"""The three fleet commands as functions: connect, run on every node, gather, judge.

Each returns a frozen result object for `report` to render; the Ray connection is closed on
the way out.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from gpurent.bench.allreduce import SizeBandwidth, size_bandwidths
from gpurent.errors import DeviceError
from gpurent.fleet import ray_edge
from gpurent.fleet.figures import node_figures
from gpurent.fleet.rank import (
    LINK_METRIC,
    FleetRanking,
    NodeFigures,
    link_figures,
    rank_fleet,
    ring_pairs,
)
from gpurent.fleet.ray_edge import Node


@dataclass(frozen=True, slots=True, kw_only=True)
class PairLink:
    """The all-reduce between two nodes: best busbw over the sizes, or why it failed."""

    a: str
    b: str
    device: str
    busbw_gbps: float | None
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetBench:
    """A fleet bench: each node's figures, health checks, pair links and the ranking."""

    address: str
    nodes: tuple[Node, ...]
    hostnames: Mapping[str, str]
    reports: tuple[NodeFigures, ...]
    health: Mapping[str, tuple[Mapping[str, str], ...]]
    pairs: tuple[PairLink, ...]
    ranking: FleetRanking
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeHealth:
    """One node's health checks, or the error that kept them from running."""

    node: Node
    hostname: str
    checks: tuple[Mapping[str, str], ...]
    error: str | None = None

    @property
    def status(self) -> str:
        """ "fail" if the checks could not run or one failed, "warn" if one warned, else "ok"."""
        if self.error is not None or any(c["status"] == "fail" for c in self.checks):
            return "fail"
        return "warn" if any(c["status"] == "warn" for c in self.checks) else "ok"


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetHealth:
    """The health of every node of the cluster at address."""

    address: str
    nodes: tuple[NodeHealth, ...]

    @property
    def failed(self) -> tuple[NodeHealth, ...]:
        """The nodes whose health is "fail"."""
        return tuple(n for n in self.nodes if n.status == "fail")


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetAllreduce:
    """An all-reduce bandwidth sweep across the cluster's nodes: bandwidth per message size."""

    address: str
    nodes: tuple[Node, ...]
    device: str
    repeats: int
    sizes: tuple[SizeBandwidth, ...] = field(default=())


@contextlib.contextmanager
def _cluster(address: str) -> Iterator[Any]:
    ray = ray_edge.connect(address)
    try:
        yield ray
    finally:
        ray.shutdown()


GPU_SIZES_MIB = (16.0, 64.0, 256.0)
CPU_SIZES_MIB = (1.0, 8.0, 64.0)


def auto_sizes(nodes: tuple[Node, ...], sizes_mib: list[float] | None) -> list[float]:
    """The sizes given, or the defaults: large messages on GPUs, smaller ones on CPUs."""
    if sizes_mib is not None:
        return sizes_mib
    return list(GPU_SIZES_MIB if all(n.gpus >= 1 for n in nodes) else CPU_SIZES_MIB)


def _pair_links(
    ray: Any, nodes: tuple[Node, ...], sizes_mib: list[float], repeats: int, timeout_s: float
) -> tuple[PairLink, ...]:
    by_name = {n.short: n for n in nodes}
    links = []
    for a, b in ring_pairs([n.short for n in nodes]):
        pair = (by_name[a], by_name[b])
        try:
            device, per_rank = ray_edge.allreduce_nodes(
                ray, pair, sizes_mib=sizes_mib, repeats=repeats, timeout_s=timeout_s
            )
        except DeviceError as exc:
            links.append(PairLink(a=a, b=b, device="", busbw_gbps=None, error=exc.message))
            continue
        rows = size_bandwidths(per_rank, sizes_mib, 2)
        links.append(PairLink(a=a, b=b, device=device, busbw_gbps=max(r.busbw_gbps for r in rows)))
    return tuple(links)


def cut_off(report: NodeFigures, links: tuple[PairLink, ...]) -> NodeFigures:
    """A node whose all-reduce failed with every neighbour, while other pairs worked, cannot
    join a job: it is marked failed (its link, NIC or firewall)."""
    mine = [p for p in links if report.node in (p.a, p.b)]
    if report.error is not None or not mine or any(p.error is None for p in mine):
        return report
    if all(p.error is not None for p in links):
        return report  # nothing worked anywhere: a setup problem, said in the notes
    reason = f"allreduce: failed with every neighbour ({mine[0].error})"
    return replace(report, health_fail=(*report.health_fail, reason))


def fleet_bench(
    address: str,
    *,
    bench_args: list[str],
    timeout_s: float,
    min_free_gib: float,
    pairs: bool,
    pair_sizes_mib: list[float] | None,
    pair_repeats: int,
    one_at_a_time: bool = False,
) -> FleetBench:
    """`gpurent bench --quick BENCH_ARGS` on every node at once, then (with `pairs`) an
    all-reduce between ring neighbours, then the ranking."""
    with _cluster(address) as ray:
        nodes = tuple(ray_edge.alive_nodes(ray))
        answers = ray_edge.bench_nodes(
            ray,
            nodes,
            bench_args=bench_args,
            timeout_s=timeout_s,
            min_free_gib=min_free_gib,
            one_at_a_time=one_at_a_time,
        )
        sizes = auto_sizes(nodes, pair_sizes_mib)[-2:] if pair_sizes_mib is None else pair_sizes_mib
        links = _pair_links(ray, nodes, sizes, pair_repeats, timeout_s) if pairs else ()
    reports = []
    hostnames: dict[str, str] = {}
    health: dict[str, tuple[Mapping[str, str], ...]] = {}
    for n, (payload, error) in zip(nodes, answers, strict=True):
        figures, _ = node_figures(n.short, payload, error)
        reports.append(figures)
        if payload is not None:
            hostnames[n.short] = str(payload.get("hostname", ""))
            health[n.short] = tuple(payload.get("health", ()))
    notes = [f"pair all-reduce {p.a}-{p.b} failed: {p.error}" for p in links if p.error]
    if len(nodes) < 3:
        notes.append("fewer than 3 nodes: the figures cannot say which node is the slow one")
    best_link = link_figures(
        [r.node for r in reports],
        {(p.a, p.b): p.busbw_gbps for p in links if p.busbw_gbps is not None},
    )
    reports = [
        replace(
            r,
            figures={**r.figures, LINK_METRIC: best_link[r.node]},
            units={**r.units, LINK_METRIC: "GB/s"},
        )
        if r.node in best_link and r.error is None
        else r
        for r in reports
    ]
    reports = [cut_off(r, links) for r in reports]
    ranking = rank_fleet(reports)
    return FleetBench(
        address=address,
        nodes=nodes,
        hostnames=hostnames,
        reports=tuple(reports),
        health=health,
        pairs=links,
        ranking=ranking,
        notes=tuple(notes),
    )


def fleet_health(
    address: str, *, path: str, min_free_gib: float, endpoints: list[str], timeout_s: float
) -> FleetHealth:
    """The runtime's health checks on every node at once."""
    with _cluster(address) as ray:
        nodes = ray_edge.alive_nodes(ray)
        answers = ray_edge.health_nodes(
            ray,
            nodes,
            path=path,
            min_free_gib=min_free_gib,
            endpoints=endpoints,
            timeout_s=timeout_s,
        )
    return FleetHealth(
        address=address,
        nodes=tuple(
            NodeHealth(
                node=n,
                hostname=str((answer or {}).get("hostname", "")),
                checks=tuple((answer or {}).get("checks", ())),
                error=error,
            )
            for n, (answer, error) in zip(nodes, answers, strict=True)
        ),
    )


def fleet_allreduce(
    address: str, *, sizes_mib: list[float] | None, repeats: int, timeout_s: float
) -> FleetAllreduce:
    """All-reduce across every node, one process per node: algbw and busbw per size."""
    with _cluster(address) as ray:
        nodes = tuple(ray_edge.alive_nodes(ray))
        sizes_mib = auto_sizes(nodes, sizes_mib)
        device, per_rank = ray_edge.allreduce_nodes(
            ray, nodes, sizes_mib=sizes_mib, repeats=repeats, timeout_s=timeout_s
        )
    return FleetAllreduce(
        address=address,
        nodes=nodes,
        device=device,
        repeats=repeats,
        sizes=tuple(size_bandwidths(per_rank, sizes_mib, len(nodes))),
    )
