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

from gpurent.cloud.billing import BILLING_RULES, BillingRule, EgressTo, billing_rule
from gpurent.cloud.billing import OTHERS as BILLING_OTHERS
from gpurent.cloud.commitments import billed_term_hours
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

# Block storage per GB-month and internet egress per GB: views of the sourced per-provider table
# shared with `pricing compare` (gpurent.cloud.billing); the `None` key is its "others" row.
STORAGE_USD_PER_GB_MONTH: dict[str | None, float] = {
    **{p: r.storage_usd_per_gb_month for p, r in BILLING_RULES.items()},
    None: BILLING_OTHERS.storage_usd_per_gb_month,
}
EGRESS_USD_PER_GB: dict[str | None, float] = {
    **{p: r.egress_rate(EgressTo.INTERNET) for p, r in BILLING_RULES.items()},
    None: BILLING_OTHERS.egress_rate(EgressTo.INTERNET),
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
DEFAULT_IMAGE_GB = 10.0
IMAGE_SOURCE = (
    "assumed 10 GB: a CUDA PyTorch container image, compressed (NGC's PyTorch image is about "
    "that size); pass --image-gb"
)
DEFAULT_DOWNLOAD_GBPS = 5.0
DOWNLOAD_SOURCE = (
    "assumed: at most 5 Gbit/s from a registry, object store or model hub per instance "
    "(--download-gbps), less where the offer publishes a slower network"
)


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


def _sources(providers: tuple[str, ...], field: Callable[[BillingRule], str]) -> str:
    """'aws: ...; lambda, runpod: ...': each provider's rule source, grouped when shared."""
    groups: dict[str, list[str]] = {}
    for p in providers or (BILLING_OTHERS.provider,):
        rule = billing_rule(p)
        groups.setdefault(field(rule), []).append(p)
    return "; ".join(f"{', '.join(names)}: {text}" for text, names in groups.items())


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
    egress_to: EgressTo = EgressTo.INTERNET
    dataset_gb: float = 0.0  # downloaded to every node before the job starts
    model_gb: float = 0.0  # model weights downloaded to every node before the job starts
    image_gb: float = DEFAULT_IMAGE_GB  # container image pulled on every node
    download_gbps: float = DEFAULT_DOWNLOAD_GBPS  # most a download reaches per instance
    commit_term_hours: float | None = None  # None: the provider's shortest term (cloud.commitments)

    def __post_init__(self) -> None:
        for name in ("storage_gb_per_node", "egress_gb", "dataset_gb", "model_gb", "image_gb"):
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
        if self.commit_term_hours is not None and not self.commit_term_hours > 0:
            raise InputError(f"--commit-term must be positive, got {self.commit_term_hours} h")
        if not self.download_gbps > 0:
            raise InputError(f"--download-gbps must be positive, got {self.download_gbps}")
        if not self.checkpoint_write_gib_per_s > 0 or not self.default_network_gbps > 0:
            raise InputError("checkpoint write speed and default network must be positive")

    def storage_rate(self, provider: str) -> float:
        """Storage price in USD per GB-month for provider (the user's figure if given)."""
        if self.storage_usd_per_gb_month is not None:
            return self.storage_usd_per_gb_month
        return _lookup(STORAGE_USD_PER_GB_MONTH, provider)

    def egress_rate(self, provider: str) -> float:
        """USD per GB out to `egress_to`, the user's figure or the provider's."""
        if self.egress_usd_per_gb is not None:
            return self.egress_usd_per_gb
        return billing_rule(provider).egress_rate(self.egress_to)

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
        """Seconds to restart after a spot interruption on provider (the user's figure if given)."""
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
                f"egress: {self.egress_gb:g} GB out to {self.egress_to.value} at "
                + _by_rate(self.egress_rate, providers, "${:g}")
                + " per GB"
                + (
                    " (--egress-usd-per-gb)"
                    if self.egress_usd_per_gb is not None
                    else f" ({_sources(providers, lambda r: r.egress_source)})"
                )
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
            "billing: "
            + _sources(providers, lambda r: r.billing_source)
            + "; storage: "
            + _sources(providers, lambda r: r.storage_source)
        )
        lines.append(
            "setup per launch, every node in parallel: provisioning ("
            + _by_rate(lambda p: billing_rule(p).provisioning_s, providers, "{:g} s")
            + f"; {_sources(providers, lambda r: r.provisioning_source)}), then the image "
            f"({self.image_gb:g} GB), dataset ({self.dataset_gb:g} GB, --dataset-gb) and model "
            f"({self.model_gb:g} GB, --model-gb) downloads and, at the end, the output "
            f"({self.egress_gb:g} GB, --egress-gb), {DOWNLOAD_SOURCE}; all billed as instance "
            "time but provisioning, where the provider does not bill it"
        )
        lines.append(
            f"network between nodes: {self.default_network_gbps:g} Gbit/s where the offer "
            "does not publish it"
        )
        term = (
            f"--commit-term {self.commit_term_hours:,.0f} h"
            if self.commit_term_hours is not None
            else "the provider's shortest term (gpurent.cloud.commitments; 12 months assumed "
            "where none is recorded)"
        )
        discount = (
            f"{self.commit_discount:.0%} off on-demand (--commit-discount)"
            if self.commit_discount is not None
            else "the offer's committed price or a discount the provider publishes"
        )
        lines.append(
            f"reserved: {discount}; every hour of the term billed, in whole terms of {term}"
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


def billed_hours(duration_s: float, granularity_s: int, minimum_s: int = 0) -> float:
    """Hours billed for `duration_s` of running: at least `minimum_s`, rounded up to the
    billing granularity."""
    if not math.isfinite(duration_s):
        return math.inf
    step = max(1, granularity_s)
    return math.ceil(max(duration_s, minimum_s) / step) * step / SECONDS_PER_HOUR


def billing_step(provider: str, offer_step_s: int) -> tuple[int, int]:
    """(step s, minimum s) the provider bills in: its sourced rule (gpurent.cloud.billing), or
    the offer's granularity without a minimum for providers without one."""
    if provider.strip().lower() in BILLING_RULES:
        rule = billing_rule(provider)
        return rule.step_s, rule.minimum_s
    return offer_step_s, 0


@dataclass(frozen=True, slots=True, kw_only=True)
class SetupTime:
    """Time before the first step and after the last one, per launch, seconds (every node does
    the same in parallel). `restore_s` is the spot model's restart time after interruptions,
    already part of the run time; shown here so that all hidden time is in one place."""

    provisioning_s: float
    image_s: float
    dataset_s: float
    model_s: float
    output_s: float  # writing the results out (the egress) at the end
    download_gbps: float
    provisioning_billed: bool
    sources: tuple[tuple[str, str], ...]  # (part, where its figure comes from)

    @property
    def before_s(self) -> float:
        """Seconds from the request to the first training or serving step."""
        return self.provisioning_s + self.image_s + self.dataset_s + self.model_s

    @property
    def total_s(self) -> float:
        """Seconds from the request to the end of writing the outputs."""
        return self.before_s + self.output_s

    @property
    def billed_s(self) -> float:
        """The part of `total_s` the provider bills as instance time."""
        return self.total_s - (0.0 if self.provisioning_billed else self.provisioning_s)


def setup_time(
    provider: str, network_gbps: float | None, assumptions: CostAssumptions
) -> SetupTime:
    """Provisioning, image pull, dataset and model download, and the output written at the end,
    at the lesser of the offer's network and the download cap."""
    rule = billing_rule(provider)
    gbps = (
        min(network_gbps, assumptions.download_gbps) if network_gbps else assumptions.download_gbps
    )

    def transfer_s(gb: float) -> float:
        return gb * 8.0 / gbps

    where = f"at {gbps:g} Gbit/s ({DOWNLOAD_SOURCE})"
    return SetupTime(
        provisioning_s=rule.provisioning_s,
        image_s=transfer_s(assumptions.image_gb),
        dataset_s=transfer_s(assumptions.dataset_gb),
        model_s=transfer_s(assumptions.model_gb),
        output_s=transfer_s(assumptions.egress_gb),
        download_gbps=gbps,
        provisioning_billed=rule.provisioning_billed,
        sources=(
            ("provisioning", f"{rule.provider}: {rule.provisioning_source}"),
            (
                "image",
                f"{assumptions.image_gb:g} GB "
                + (IMAGE_SOURCE if assumptions.image_gb == DEFAULT_IMAGE_GB else "(--image-gb)")
                + f" {where}",
            ),
            ("dataset", f"{assumptions.dataset_gb:g} GB (--dataset-gb) {where}"),
            ("model", f"{assumptions.model_gb:g} GB (--model-gb) {where}"),
            ("output", f"{assumptions.egress_gb:g} GB (--egress-gb) {where}"),
        ),
    )


NO_SETUP = SetupTime(
    provisioning_s=0.0,
    image_s=0.0,
    dataset_s=0.0,
    model_s=0.0,
    output_s=0.0,
    download_gbps=DEFAULT_DOWNLOAD_GBPS,
    provisioning_billed=False,
    sources=(),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class CostBreakdown:
    """Cost to finish, USD. `compute_usd` is every billed instance-hour; `setup_usd`,
    `spot_overhead_usd` and `billing_rounding_usd` are the parts of it spent on setup, on spot
    overhead and on the billing minimum, steps or whole commitment terms."""

    compute_usd: float
    storage_usd: float
    egress_usd: float
    spot_overhead_usd: float
    setup_usd: float = 0.0
    billing_rounding_usd: float = 0.0

    @property
    def total_usd(self) -> float:
        """Total cost in USD: compute plus storage plus egress."""
        return self.compute_usd + self.storage_usd + self.egress_usd


def _instance_hours(
    billed_s: float, granularity_s: int, minimum_s: int, term_hours: float
) -> float:
    """Hours billed per instance: whole commitment terms when `term_hours` > 0, else the
    provider's minimum and steps."""
    if term_hours > 0:
        return billed_term_hours(billed_s / SECONDS_PER_HOUR, term_hours)
    return billed_hours(billed_s, granularity_s, minimum_s)


def cost_coefficients(
    *,
    wall_s: float,
    nodes: int,
    granularity_s: int,
    provider: str,
    assumptions: CostAssumptions,
    term_hours: float = 0.0,
    minimum_s: int = 0,
    setup: SetupTime = NO_SETUP,
) -> tuple[float, float]:
    """(a, b) such that cost to finish = a x instance price per hour + b.

    `wall_s` is the run (compute and spot overhead); `setup` adds its billed part to the
    instance time and all of it to the storage time. a = instances x billed hours (whole
    `term_hours` terms for a commitment); b = storage on every node + egress. Splitting it so
    lets the planner price thousands of offers that share a configuration with one
    multiply-add each.
    """
    hours = _instance_hours(wall_s + setup.billed_s, granularity_s, minimum_s, term_hours)
    storage, egress = _storage_and_egress_usd(wall_s + setup.total_s, nodes, provider, assumptions)
    return nodes * hours, storage + egress


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
    term_hours: float = 0.0,
    minimum_s: int = 0,
    setup: SetupTime = NO_SETUP,
) -> CostBreakdown:
    """The itemised cost of one candidate (same arithmetic as `cost_coefficients`)."""
    instance_hours, _ = cost_coefficients(
        wall_s=wall_s,
        nodes=nodes,
        granularity_s=granularity_s,
        provider=provider,
        assumptions=assumptions,
        term_hours=term_hours,
        minimum_s=minimum_s,
        setup=setup,
    )
    compute = instance_hours * price_usd_per_hour
    storage, egress = _storage_and_egress_usd(wall_s + setup.total_s, nodes, provider, assumptions)
    per_s = nodes * price_usd_per_hour / SECONDS_PER_HOUR
    overhead = per_s * max(0.0, wall_s - compute_s)
    setup_usd = per_s * setup.billed_s
    rounding = max(0.0, compute - per_s * (wall_s + setup.billed_s))
    return CostBreakdown(
        compute_usd=compute,
        storage_usd=storage,
        egress_usd=egress,
        spot_overhead_usd=overhead,
        setup_usd=setup_usd,
        billing_rounding_usd=rounding if math.isfinite(rounding) else 0.0,
    )
