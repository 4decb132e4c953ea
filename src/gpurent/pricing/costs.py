"""Cost to finish a job on k instances: compute, storage, egress and the expected spot overhead.

The planner's cost math, kept pure: every function takes numbers and returns numbers or frozen
result objects. Figures that are not in the catalog (block storage and egress list prices, spot
interruption rates, restart time, checkpoint write speed) are *assumptions* with stated values;
`CostAssumptions.describe()` lists them so every report can print what it assumed.

Spot model (expected values, exponential interruptions, after Daly 2006 and Wu et al. NSDI'24):
a cluster of `nodes` spot instances is interrupted when any one of them is ("all-or-none"), so its
rate is nodes x the per-instance rate and the mean time to interruption M = 1 / rate. A training
job checkpoints every tau = Daly(delta, M) seconds of compute (delta = checkpoint write time;
none when the whole job is shorter than tau and running it unprotected is cheaper),
and the expected wall time is T x (1 + overhead), with the overhead (checkpoint writes, restarts
of `restart_s`, redone work) from the exact renewal formula for exponential lifetimes in
`gpurent.spot.interval.overhead_exponential` - the same model `gpurent pricing compare` uses.
Inference loses only the restart time: W = T / (1 - restart_s / M). Beyond a 10x slowdown the
interruptions outpace progress and spot is not offered for that configuration.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from gpurent.cloud.spot_defaults import (
    OTHERS,
    SPOT_DEFAULTS,
    SignalRate,
    spot_default,
    spot_sources,
)
from gpurent.errors import InputError
from gpurent.spot.interval import daly_interval_s, overhead_exponential
from gpurent.units import HOURS_PER_MONTH, SECONDS_PER_HOUR

# Approximate public list prices (US regions, 2025), NOT from the bundled catalog: block storage
# per GB-month (AWS EBS gp3 $0.08; GCP pd-balanced $0.10; Lambda persistent filesystem $0.20) and
# internet egress per GB (AWS first 10 TB $0.09; GCP premium tier ~$0.12; Azure ~$0.087; Lambda,
# RunPod: no egress fees). Other providers: the `None` key, a middle-of-the-road assumption.
STORAGE_USD_PER_GB_MONTH: dict[str | None, float] = {
    "aws": 0.08,
    "gcp": 0.10,
    "lambda": 0.20,
    None: 0.10,
}
EGRESS_USD_PER_GB: dict[str | None, float] = {
    "aws": 0.09,
    "gcp": 0.12,
    "azure": 0.087,
    "lambda": 0.0,
    "runpod": 0.0,
    None: 0.09,
}
# Expected spot interruptions per instance-hour and restart seconds: the table shared with
# `pricing compare` and `spot interval`, with its sources, is gpurent.cloud.spot_defaults. The
# two names below are views of it, kept for callers of this module.
SPOT_INTERRUPTIONS_PER_HOUR: dict[str | None, float] = {
    **{p: d.interruptions_per_hour for p, d in SPOT_DEFAULTS.items()},
    None: OTHERS.interruptions_per_hour,
}
DEFAULT_RESTART_S = OTHERS.restart_s

DEFAULT_STORAGE_GB_PER_NODE = 200.0
DEFAULT_CHECKPOINT_WRITE_GIB_PER_S = 1.0  # per node, to local NVMe or block storage (assumed)
DEFAULT_CHECKPOINT_FIXED_S = 10.0  # serialisation and sync per checkpoint (assumed)
DEFAULT_NETWORK_GBPS = 25.0  # between instances when the offer does not publish it (assumed)
MAX_SPOT_SLOWDOWN = 10.0  # beyond this, interruptions outpace progress: spot is not offered


def _lookup(table: dict[str | None, float], provider: str) -> float:
    return table.get(provider, table[None])


def _by_rate(rate: Callable[[str], float], providers: tuple[str, ...], fmt: str) -> str:
    """'aws $0.08, lambda $0.2, others $0.1': providers grouped by their rate, most common last."""
    groups: dict[float, list[str]] = {}
    for p in providers:
        groups.setdefault(rate(p), []).append(p)
    if not groups:
        return "n/a"
    common = max(groups, key=lambda r: len(groups[r]))
    parts = [f"{', '.join(ps)} {fmt.format(r)}" for r, ps in groups.items() if r != common]
    rest = "others" if parts else "all"
    return ", ".join([*parts, f"{rest} {fmt.format(common)}"])


@dataclass(frozen=True, slots=True, kw_only=True)
class CostAssumptions:
    """Cost inputs that the catalog does not hold. `None` means "use the per-provider default"."""

    storage_gb_per_node: float = DEFAULT_STORAGE_GB_PER_NODE
    storage_usd_per_gb_month: float | None = None
    egress_gb: float = 0.0
    egress_usd_per_gb: float | None = None
    spot_interruptions_per_hour: float | None = None
    restart_s: float | None = None  # None: the provider's default (cloud.spot_defaults)
    checkpoint_s: float | None = None  # None: derived from the state size per node
    checkpoint_write_gib_per_s: float = DEFAULT_CHECKPOINT_WRITE_GIB_PER_S
    commit_discount: float | None = None  # fraction off on-demand for "reserved", e.g. 0.35
    default_network_gbps: float = DEFAULT_NETWORK_GBPS
    signal_rates: tuple[SignalRate, ...] = ()  # from stored spot signals, per region/instance

    def __post_init__(self) -> None:
        for name in ("storage_gb_per_node", "egress_gb"):
            if getattr(self, name) < 0:
                raise InputError(f"--{name.replace('_', '-')} must be >= 0")
        for name in ("storage_usd_per_gb_month", "egress_usd_per_gb", "checkpoint_s", "restart_s"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise InputError(f"--{name.replace('_', '-')} must be >= 0")
        rate = self.spot_interruptions_per_hour
        if rate is not None and not (0 <= rate < 60):
            raise InputError(f"--spot-interruptions-per-hour must be in [0, 60), got {rate}")
        if self.commit_discount is not None and not (0 <= self.commit_discount < 1):
            raise InputError(
                f"--commit-discount is a fraction in [0, 1), e.g. 0.35; got {self.commit_discount}"
            )
        if not self.checkpoint_write_gib_per_s > 0 or not self.default_network_gbps > 0:
            raise InputError("checkpoint write speed and default network must be positive")

    def storage_rate(self, provider: str) -> float:
        if self.storage_usd_per_gb_month is not None:
            return self.storage_usd_per_gb_month
        return _lookup(STORAGE_USD_PER_GB_MONTH, provider)

    def egress_rate(self, provider: str) -> float:
        if self.egress_usd_per_gb is not None:
            return self.egress_usd_per_gb
        return _lookup(EGRESS_USD_PER_GB, provider)

    def interruptions_per_hour(
        self, provider: str, region: str | None = None, instance: str | None = None
    ) -> float:
        """--spot-interruptions-per-hour, else a stored signal for this region and instance,
        else the provider's default."""
        if self.spot_interruptions_per_hour is not None:
            return self.spot_interruptions_per_hour
        for r in self.signal_rates:
            if r.matches(provider, region, instance):
                return r.interruptions_per_hour
        return spot_default(provider).interruptions_per_hour

    def restart_seconds(self, provider: str) -> float:
        if self.restart_s is not None:
            return self.restart_s
        return spot_default(provider).restart_s

    def describe(self, providers: tuple[str, ...]) -> tuple[str, ...]:
        """The assumptions as lines for reports, for the providers that appear in the plan."""
        lines = []
        storage = (
            f"${self.storage_usd_per_gb_month:g}/GB-month (--storage-usd-per-gb-month)"
            if self.storage_usd_per_gb_month is not None
            else "approximate list prices: "
            + _by_rate(self.storage_rate, providers, "${:g}")
            + " per GB-month"
        )
        lines.append(
            f"storage: {self.storage_gb_per_node:g} GB of block storage per node for the job's "
            f"wall time at {storage}"
        )
        if self.egress_gb > 0:
            lines.append(
                f"egress: {self.egress_gb:g} GB out at "
                + _by_rate(self.egress_rate, providers, "${:g}")
                + " per GB"
            )
        else:
            lines.append("egress: none counted (pass --egress-gb to price downloading results)")
        if self.spot_interruptions_per_hour is not None:
            rates = (
                f"{self.spot_interruptions_per_hour:g}/h per instance "
                "(--spot-interruptions-per-hour)"
            )
        else:
            rates = _by_rate(self.interruptions_per_hour, providers, "{:g}/h") + " per instance"
        restart = (
            f"{self.restart_s:g} s to restart (--restart-s)"
            if self.restart_s is not None
            else _by_rate(self.restart_seconds, providers, "{:g} s") + " to restart"
        )
        if self.spot_interruptions_per_hour is None or self.restart_s is None:
            restart += f" (defaults: {spot_sources(providers)})"
        ckpt = (
            f"{self.checkpoint_s:g} s per checkpoint"
            if self.checkpoint_s is not None
            else f"checkpoint write at {self.checkpoint_write_gib_per_s:g} GiB/s per node "
            f"+ {DEFAULT_CHECKPOINT_FIXED_S:g} s"
        )
        lines.append(
            f"spot: interruptions {rates}; any node lost stops the cluster; {ckpt}, Daly-optimal "
            f"interval; {restart}; billed while restarting"
        )
        if self.signal_rates and self.spot_interruptions_per_hour is None:
            used = "; ".join(
                f"{r.provider}/{r.instance}/{r.region} {r.interruptions_per_hour:.2g}/h from "
                f"{r.source}"
                for r in self.signal_rates
            )
            rules = "; ".join(sorted({r.rule for r in self.signal_rates if r.rule}))
            lines.append(
                f"spot signals (instead of the defaults above, for these offers): {used}"
                + (f" (bucket -> rate: {rules})" if rules else "")
            )
        lines.append(
            f"network between nodes: {self.default_network_gbps:g} Gbit/s where the offer "
            "does not publish it"
        )
        if self.commit_discount is not None:
            lines.append(
                f"reserved: {self.commit_discount:.0%} off on-demand (--commit-discount), "
                "assuming the commitment is used fully elsewhere"
            )
        return tuple(lines)


@dataclass(frozen=True, slots=True, kw_only=True)
class SpotOverhead:
    """Expected cost of running on spot for one job, in seconds of wall time."""

    interruptions_per_hour: float  # for the whole cluster
    mean_time_to_interruption_s: float
    checkpoint_cost_s: float
    checkpoint_interval_s: float  # compute between checkpoints (inf: none needed)
    expected_interruptions: float
    checkpoint_time_s: float  # total spent writing checkpoints
    lost_work_s: float  # compute redone after interruptions
    restart_time_s: float  # total restart time
    slowdown: float  # wall time / pure compute time (inf: never finishes)

    @property
    def finishes(self) -> bool:
        """False when the job is expected to take more than `MAX_SPOT_SLOWDOWN` x its compute."""
        return self.slowdown <= MAX_SPOT_SLOWDOWN


def spot_overhead(
    *,
    compute_s: float,
    nodes: int,
    interruptions_per_hour_per_instance: float,
    checkpoint_cost_s: float,
    restart_s: float,
    trains: bool,
) -> SpotOverhead:
    """Expected spot overhead for `compute_s` seconds of pure compute (see the module doc)."""
    rate_per_s = nodes * interruptions_per_hour_per_instance / SECONDS_PER_HOUR
    if rate_per_s <= 0:
        return SpotOverhead(
            interruptions_per_hour=0.0,
            mean_time_to_interruption_s=math.inf,
            checkpoint_cost_s=checkpoint_cost_s,
            checkpoint_interval_s=math.inf,
            expected_interruptions=0.0,
            checkpoint_time_s=0.0,
            lost_work_s=0.0,
            restart_time_s=0.0,
            slowdown=1.0,
        )
    mtti_s = 1.0 / rate_per_s
    if trains and checkpoint_cost_s > 0:
        # Exact renewal model for exponential lifetimes (shared with `gpurent pricing compare`):
        # per second of useful work, `ov.total` seconds go to checkpoints, restarts and redone work.
        interval_s = daly_interval_s(checkpoint_cost_s, mtti_s)
        ov = overhead_exponential(interval_s, checkpoint_cost_s, mtti_s, restart_s)
        if 0 < compute_s <= interval_s:
            # The job ends before its first checkpoint is due: the steady-state rate above would
            # bill checkpoints it never writes. Price running it as one segment without
            # checkpoints (an interruption redoes it from the start) when that is cheaper.
            single = overhead_exponential(compute_s, 0.0, mtti_s, restart_s)
            if single.slowdown <= ov.slowdown:
                interval_s, ov = math.inf, single
        slowdown = ov.slowdown
        ckpt_s, lost_s, restart_total_s = (
            compute_s * ov.checkpoint,
            compute_s * ov.lost_work,
            compute_s * ov.restart,
        )
    else:
        # Stateless work (inference): an interruption costs only the restart time.
        interval_s = math.inf
        remaining = 1.0 - restart_s / mtti_s
        slowdown = 1.0 / remaining if remaining > 0 else math.inf
        ckpt_s, lost_s = 0.0, 0.0
        restart_total_s = compute_s * (slowdown - 1.0)
    wall_s = compute_s * slowdown
    return SpotOverhead(
        interruptions_per_hour=rate_per_s * SECONDS_PER_HOUR,
        mean_time_to_interruption_s=mtti_s,
        checkpoint_cost_s=checkpoint_cost_s,
        checkpoint_interval_s=interval_s,
        expected_interruptions=wall_s / mtti_s,
        checkpoint_time_s=ckpt_s,
        lost_work_s=lost_s,
        restart_time_s=restart_total_s,
        slowdown=slowdown,
    )


def checkpoint_cost_s(state_gib_per_node: float, assumptions: CostAssumptions) -> float:
    """Seconds to write one checkpoint: the user's figure, or state size / write speed + fixed."""
    if assumptions.checkpoint_s is not None:
        return assumptions.checkpoint_s
    return DEFAULT_CHECKPOINT_FIXED_S + state_gib_per_node / assumptions.checkpoint_write_gib_per_s


def billed_hours(duration_s: float, granularity_s: int) -> float:
    """Hours billed for `duration_s` of running, rounded up to the billing granularity."""
    if not math.isfinite(duration_s):
        return math.inf
    step = max(1, granularity_s)
    return math.ceil(duration_s / step) * step / SECONDS_PER_HOUR


@dataclass(frozen=True, slots=True, kw_only=True)
class CostBreakdown:
    """Cost to finish, USD. `spot_overhead_usd` is the part of `compute_usd` spent on overhead."""

    compute_usd: float
    storage_usd: float
    egress_usd: float
    spot_overhead_usd: float

    @property
    def total_usd(self) -> float:
        return self.compute_usd + self.storage_usd + self.egress_usd


def cost_coefficients(
    *,
    wall_s: float,
    nodes: int,
    granularity_s: int,
    provider: str,
    assumptions: CostAssumptions,
    min_billed_hours: float = 0.0,
) -> tuple[float, float]:
    """(a, b) such that cost to finish = a x instance price per hour + b.

    a = instances x billed hours (at least `min_billed_hours`, e.g. a reserved term);
    b = storage for the wall time on every node + egress. Splitting it so lets the planner price
    thousands of offers that share a configuration with one multiply-add each.
    """
    hours_billed = max(billed_hours(wall_s, granularity_s), min_billed_hours)
    storage, egress = _storage_and_egress_usd(wall_s, nodes, provider, assumptions)
    return nodes * hours_billed, storage + egress


def _storage_and_egress_usd(
    wall_s: float, nodes: int, provider: str, assumptions: CostAssumptions
) -> tuple[float, float]:
    """Block storage on every node for the wall time, and the egress: the `b` of the cost."""
    storage = (
        nodes
        * assumptions.storage_gb_per_node
        * assumptions.storage_rate(provider)
        * (wall_s / SECONDS_PER_HOUR / HOURS_PER_MONTH)
    )
    return storage, assumptions.egress_gb * assumptions.egress_rate(provider)


def cost_breakdown(
    *,
    price_usd_per_hour: float,
    wall_s: float,
    compute_s: float,
    nodes: int,
    granularity_s: int,
    provider: str,
    assumptions: CostAssumptions,
    min_billed_hours: float = 0.0,
) -> CostBreakdown:
    """The itemised cost of one candidate (same arithmetic as `cost_coefficients`)."""
    instance_hours, _ = cost_coefficients(
        wall_s=wall_s,
        nodes=nodes,
        granularity_s=granularity_s,
        provider=provider,
        assumptions=assumptions,
        min_billed_hours=min_billed_hours,
    )
    compute = instance_hours * price_usd_per_hour
    storage, egress = _storage_and_egress_usd(wall_s, nodes, provider, assumptions)
    overhead_s = max(0.0, wall_s - compute_s)
    overhead = nodes * price_usd_per_hour * overhead_s / SECONDS_PER_HOUR
    return CostBreakdown(
        compute_usd=compute, storage_usd=storage, egress_usd=egress, spot_overhead_usd=overhead
    )
