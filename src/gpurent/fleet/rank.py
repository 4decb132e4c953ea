"""Ranking a fleet and flagging the nodes to replace (pure: figures in, decisions out).

The outlier rule, for every figure where higher is better (TFLOP/s, GB/s, IOPS, images/s):
a node is slow on a figure when its value is
  - below `MEDIAN_FRACTION` (80%) of the fleet median (identical machines do not differ by 20%:
    that is a throttled, mis-seated or shared GPU, a degraded link, a noisy neighbour), or
  - below the median by more than `MAD_K` (3) scaled median absolute deviations (MAD x 1.4826,
    the normal-consistent scale) and by more than `MIN_DROP` (5%) of the median: on a tight
    fleet this catches smaller drops, and the 5% floor keeps a MAD near 0 from flagging noise.
The median needs at least `MIN_NODES` (3) nodes to name an outlier: of two nodes that differ, the
figures cannot say which one is wrong. With 3 nodes only the slowest can be flagged.

All-reduce between nodes is measured on pairs (a ring: node i with node i+1); a node's link
figure is the best busbw of the pairs it is in (a healthy node has at least one fast link), and
the same rule applies to those per-node figures.

A node is to be replaced when it is slow on any figure, when a health check failed on it
(uncorrected ECC errors, an Xid other than the application ones, missing GPUs) or when its bench
did not run. Nodes are ranked by the geometric mean over the compared figures of value / median.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

MEDIAN_FRACTION = 0.8
MAD_K = 3.0
MAD_SCALE = 1.4826
MIN_DROP = 0.05
MIN_NODES = 3
LINK_METRIC = "allreduce.pair_busbw"
RULE = (
    f"slow: below {MEDIAN_FRACTION:.0%} of the fleet median, or more than {MAD_K:g} scaled MAD "
    f"(x{MAD_SCALE}) and {MIN_DROP:.0%} below it; at least {MIN_NODES} nodes"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeFigures:
    """What one node reported: figures by key (higher is better), their units, the health checks
    that failed or warned, and the error when its bench did not run."""

    node: str
    figures: Mapping[str, float]
    units: Mapping[str, str]
    health_fail: tuple[str, ...] = ()
    health_warn: tuple[str, ...] = ()
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Outlier:
    """A node whose figure on one metric falls below the threshold share of the fleet's median."""

    node: str
    metric: str
    value: float
    median: float
    fraction_of_median: float
    threshold: float  # the value below which a node is slow on this metric


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeRank:
    """One node's rank in the fleet, its score against the medians, and whether to replace it."""

    node: str
    rank: int  # 1 = best; nodes whose bench did not run come last
    score: float | None  # geometric mean of value / median over the compared figures
    replace: bool
    reasons: tuple[str, ...]  # why it is to be replaced (empty when not)
    warnings: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetRanking:
    """The fleet's nodes ranked best first, the outliers, and the median of each metric."""

    nodes: tuple[NodeRank, ...]
    outliers: tuple[Outlier, ...]
    medians: Mapping[str, float]
    rule: str = RULE

    @property
    def to_replace(self) -> tuple[NodeRank, ...]:
        """The nodes to replace."""
        return tuple(n for n in self.nodes if n.replace)


def slow_outliers(values: Mapping[str, float], metric: str) -> list[Outlier]:
    """The nodes of `values` (node -> figure) that the rule calls slow on `metric`."""
    if len(values) < MIN_NODES:
        return []
    med = statistics.median(values.values())
    if med <= 0:
        return []
    mad = statistics.median(abs(v - med) for v in values.values())
    threshold = max(MEDIAN_FRACTION * med, min(med - MAD_K * MAD_SCALE * mad, (1 - MIN_DROP) * med))
    return [
        Outlier(
            node=node,
            metric=metric,
            value=value,
            median=med,
            fraction_of_median=value / med,
            threshold=threshold,
        )
        for node, value in values.items()
        if value < threshold
    ]


def link_figures(
    nodes: Sequence[str], pair_busbw_gbps: Mapping[tuple[str, str], float]
) -> dict[str, float]:
    """Each node's best busbw over the measured pairs it belongs to."""
    best: dict[str, float] = {}
    for (a, b), value in pair_busbw_gbps.items():
        for node in (a, b):
            if node in nodes:
                best[node] = max(best.get(node, value), value)
    return best


def ring_pairs(nodes: Sequence[str]) -> list[tuple[str, str]]:
    """Node i with node i+1, and the last with the first when there are more than two."""
    if len(nodes) < 2:
        return []
    if len(nodes) == 2:
        return [(nodes[0], nodes[1])]
    return [(nodes[i], nodes[(i + 1) % len(nodes)]) for i in range(len(nodes))]


def rank_fleet(
    reports: Sequence[NodeFigures],
    pair_busbw_gbps: Mapping[tuple[str, str], float] | None = None,
) -> FleetRanking:
    """Rank the nodes and name the ones to replace (see the module docstring for the rule)."""
    ran = [r for r in reports if r.error is None]
    figures: dict[str, dict[str, float]] = {r.node: dict(r.figures) for r in ran}
    if pair_busbw_gbps:
        for node, value in link_figures([r.node for r in ran], pair_busbw_gbps).items():
            figures[node][LINK_METRIC] = value
    metrics = sorted({key for f in figures.values() for key in f})
    outliers: list[Outlier] = []
    medians: dict[str, float] = {}
    for metric in metrics:
        values = {n: f[metric] for n, f in figures.items() if metric in f and f[metric] > 0}
        if values:
            medians[metric] = statistics.median(values.values())
        outliers.extend(slow_outliers(values, metric))
    scores: dict[str, float | None] = {}
    for node, f in figures.items():
        ratios = [f[m] / medians[m] for m in f if m in medians and f[m] > 0]
        scores[node] = math.exp(statistics.fmean(math.log(x) for x in ratios)) if ratios else None
    rows = []
    common = {m for m in medians if sum(m in f for f in figures.values()) >= MIN_NODES}
    for r in reports:
        missing = sorted(m for m in common if r.error is None and m not in r.figures)
        reasons = [
            f"{o.metric} {o.value:.4g} {r.units.get(o.metric, 'GB/s')} is "
            f"{o.fraction_of_median:.0%} of the fleet median {o.median:.4g}"
            for o in outliers
            if o.node == r.node
        ]
        reasons += [f"health: {reason}" for reason in r.health_fail]
        if r.error is not None:
            reasons.append(f"bench did not run: {r.error}")
        lacks = tuple(
            f"no {m} figure (other nodes have one: a benchmark skipped?)" for m in missing
        )
        rows.append((r, scores.get(r.node), tuple(reasons), lacks))
    order = sorted(rows, key=lambda t: (t[1] is None, -(t[1] or 0.0), t[0].node))
    return FleetRanking(
        nodes=tuple(
            NodeRank(
                node=r.node,
                rank=i + 1,
                score=score,
                replace=bool(reasons),
                reasons=reasons,
                warnings=(*r.health_warn, *missing),
            )
            for i, (r, score, reasons, missing) in enumerate(order)
        ),
        outliers=tuple(outliers),
        medians=medians,
    )
