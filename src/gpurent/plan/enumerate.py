"""Enumeration: offers that pass the constraints x node counts x layout x pricing model.

Speed matters (a 10,000-offer catalog must plan in well under a second), so the work is split:

1. `filter_offers` drops offers that break a constraint, keeping per-stage counts so an empty
   result can say which constraint emptied it and what came closest.
2. Offers are grouped by (GPU, GPUs per instance, network); each distinct configuration
   (GPU, GPUs per node, nodes, network) gets one layout search (`choose_layout`), cached.
3. For each configuration x pricing model x provider x billing granularity, the wall time, spot
   overhead and cost coefficients (cost = a x price + b) are computed once; each offer is then one
   multiply-add. The result is a flat list of `Row`s that `rank` sorts without building objects.
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from gpurent.catalog.gpu import GpuSpec
from gpurent.catalog.links import Interconnect
from gpurent.catalog.offer import Offer
from gpurent.cloud.commitments import DEFAULT_TERM_HOURS, shortest_term, terms_for
from gpurent.estimate.result import Estimate
from gpurent.plan.constraints import (
    Constraints,
    PricingModel,
    join_names,
    region_matches,
)
from gpurent.plan.layouts import EstimatorFn, Layout, LayoutChoice, choose_layout
from gpurent.pricing.costs import (
    MAX_SPOT_SLOWDOWN,
    CostAssumptions,
    SetupTime,
    SpotOverhead,
    billing_step,
    checkpoint_cost_s,
    cost_coefficients,
    setup_time,
    spot_overhead,
)
from gpurent.units import HOURS_PER_MONTH, SECONDS_PER_HOUR
from gpurent.workload.spec import Workload

NVLINK_MIN_NETWORK_GBPS = 100.0
UNSPECIFIED_WORK_S = 3600.0  # priced when the workload gives no amount of work (as SkyPilot does)


class Row(NamedTuple):
    """One candidate: an offer in a context (layout, pricing model, nodes). A tuple, so rows
    sort by cost, then time, without a key and cost little to build by the hundred thousand."""

    cost_usd: float
    wall_s: float
    offer_index: int  # into `Enumeration.offers`
    context_index: int  # into `Enumeration.contexts`
    price_usd_per_hour: float  # the price paid per instance for the row's pricing model


@dataclass(frozen=True, slots=True, kw_only=True)
class FilterReport:
    """Offers kept by the constraints; when none are, the reasons with the closest offers."""

    kept: tuple[Offer, ...]
    reasons: tuple[str, ...]
    unknown_gpus: tuple[str, ...]  # GPU names without a spec (cannot be estimated)


def _closest(offers: Sequence[Offer], key: Callable[[Offer], float], n: int = 3) -> str:
    seen: set[tuple[str, int]] = set()
    picks: list[str] = []
    for offer in sorted(offers, key=key):
        ident = (offer.gpu_name, offer.gpu_count)
        if ident in seen:
            continue
        seen.add(ident)
        picks.append(
            f"{offer.gpu_count}x {offer.gpu_name} ({offer.gpu_memory_gib:g} GiB) "
            f"{offer.provider} {offer.instance_type} {offer.region}"
        )
        if len(picks) == n:
            break
    return "; ".join(picks)


REGION_HINTS = 6  # region names a "no offer in region" message suggests


def region_hint(wanted: Sequence[str], regions: Sequence[str], n: int = REGION_HINTS) -> str:
    """A few whole region names (never split on their commas): those closest to `wanted`
    first, then the rest in order; with how many there are in all."""
    names = sorted(set(regions))
    by_lower = {name.lower(): name for name in names}
    close: list[str] = []
    for w in wanted:
        for hit in difflib.get_close_matches(w.lower(), list(by_lower), n=n, cutoff=0.5):
            close.append(by_lower[hit])
    picks = list(dict.fromkeys([*close, *names]))[:n]
    more = f" ({len(names)} regions in all)" if len(names) > len(picks) else ""
    return "; ".join(picks) + more


def _commit_rule(provider: str, assumptions: CostAssumptions) -> tuple[float, float] | None:
    """(discount, term hours) that prices a commitment for an offer without its own terms:
    --commit-discount over --commit-term or the provider's shortest term, else a discount the
    provider publishes (for --commit-term when given); None when nothing does."""
    wanted = assumptions.commit_term_hours
    if assumptions.commit_discount is not None:
        shortest = shortest_term(provider)
        hours = wanted or (shortest.hours if shortest else DEFAULT_TERM_HOURS)
        return assumptions.commit_discount, hours
    published = [
        t
        for t in terms_for(provider)
        if t.discount is not None and (wanted is None or t.hours == wanted)
    ]
    if published:
        chosen = published[0]
        assert chosen.discount is not None
        return chosen.discount, chosen.hours
    return None


def reserved_price(
    offer: Offer,
    assumptions: CostAssumptions,
    rules: dict[str, tuple[float, float] | None] | None = None,
) -> tuple[float, float] | None:
    """(committed $/h, term hours) of `offer`: its own cheapest term; else --commit-discount
    over --commit-term or the provider's shortest term (gpurent.cloud.commitments); else a
    discount the provider publishes for a term; None when nothing gives a committed price.
    `rules` memoizes `_commit_rule` per provider across calls."""
    if offer.reserved:
        term = min(offer.reserved, key=lambda t: t.price_usd_per_hour)
        return term.price_usd_per_hour, term.term_months * HOURS_PER_MONTH
    od = offer.price_usd_per_hour
    if od is None:
        return None
    if rules is None:
        rule = _commit_rule(offer.provider, assumptions)
    elif offer.provider in rules:
        rule = rules[offer.provider]
    else:
        rule = rules[offer.provider] = _commit_rule(offer.provider, assumptions)
    return (od * (1.0 - rule[0]), rule[1]) if rule is not None else None


def _has_price(
    offer: Offer,
    pricing: tuple[PricingModel, ...],
    assumptions: CostAssumptions,
    rules: dict[str, tuple[float, float] | None],
) -> bool:
    """Whether `offer` has a price under any of the `pricing` models."""
    return (
        (offer.price_usd_per_hour is not None and PricingModel.ON_DEMAND in pricing)
        or (offer.spot_price_usd_per_hour is not None and PricingModel.SPOT in pricing)
        or (
            PricingModel.RESERVED in pricing
            and reserved_price(offer, assumptions, rules) is not None
        )
    )


def _interconnect_ok(offer: Offer, need: Interconnect) -> bool:
    if need is Interconnect.ANY or offer.gpu_count == 1:
        return True
    return need.matches(offer.gpu_interconnect)


def filter_offers(
    offers: Sequence[Offer],
    constraints: Constraints,
    assumptions: CostAssumptions,
    find_gpu: Callable[[str], GpuSpec | None],
) -> FilterReport:
    """Apply the offer-level constraints in order, stopping with reasons at the first empty one;
    offers whose GPU `find_gpu` (the estimator's spec lookup) does not know cannot be estimated."""
    c = constraints
    providers = {p.lower() for p in c.providers}
    excluded = {p.lower() for p in c.exclude_providers}
    gpus = {g.lower() for g in c.gpus}
    where = f" in region {join_names(c.regions)}" if c.regions else ""
    rules: dict[str, tuple[float, float] | None] = {}
    min_memory = c.min_gpu_memory_gib or 0.0
    # (keep, explain); keep None: the constraint is not set, every offer passes
    stages: list[tuple[Callable[[Offer], bool] | None, Callable[[list[Offer]], str]]] = [
        (
            (lambda o: o.provider in providers) if providers else None,
            lambda prev: (
                f"no offer from provider {', '.join(c.providers)}; the catalog has "
                + ", ".join(sorted({o.provider for o in prev}))
            ),
        ),
        (
            (lambda o: o.provider not in excluded) if excluded else None,
            lambda prev: (
                f"every offer from {', '.join(sorted({o.provider for o in prev}))} is excluded "
                "by --exclude-provider"
            ),
        ),
        (
            (lambda o: region_matches(o.region, c.regions)) if c.regions else None,
            lambda prev: (
                f"no offer in region {join_names(c.regions)}; regions with offers: "
                + region_hint(c.regions, [o.region for o in prev])
            ),
        ),
        (
            (lambda o: not region_matches(o.region, c.exclude_regions))
            if c.exclude_regions
            else None,
            lambda prev: (
                f"every offer{where} is in a region excluded by --exclude-region "
                f"{join_names(c.exclude_regions)}"
            ),
        ),
        (
            (lambda o: o.gpu_name.lower() in gpus) if gpus else None,
            lambda prev: (
                f"no offer with GPU {', '.join(c.gpus)}{where}; GPUs there: "
                + ", ".join(sorted({o.gpu_name for o in prev})[:12])
            ),
        ),
        (
            lambda o: o.gpu_count <= c.max_gpus,
            lambda prev: (
                f"every offer{where} has more than --max-gpus {c.max_gpus} GPUs; "
                "the smallest: " + _closest(prev, lambda o: o.gpu_count)
            ),
        ),
        (
            None if c.min_gpu_memory_gib is None else (lambda o: o.gpu_memory_gib >= min_memory),
            lambda prev: (
                f"no offer has >= {c.min_gpu_memory_gib:g} GiB per GPU{where}; "
                "the closest are " + _closest(prev, lambda o: -o.gpu_memory_gib)
            ),
        ),
        (
            None
            if c.interconnect is Interconnect.ANY
            else (lambda o: _interconnect_ok(o, c.interconnect)),
            lambda prev: (
                f"no multi-GPU offer with {c.interconnect.value} between its GPUs"
                f"{where}; the largest: " + _closest(prev, lambda o: -o.gpu_count)
            ),
        ),
        (
            lambda o: _has_price(o, c.pricing, assumptions, rules),
            lambda prev: (
                f"no offer{where} has a {'/'.join(p.value for p in c.pricing)} price"
                + (
                    " (the catalog has no reserved prices: pass --commit-discount 0.3 for a "
                    "30% committed-use discount)"
                    if PricingModel.RESERVED in c.pricing
                    else ""
                )
            ),
        ),
    ]
    current = list(offers)
    for keep, explain in stages:
        if keep is None:
            continue
        nxt = [o for o in current if keep(o)]
        if not nxt:
            return FilterReport(kept=(), reasons=(explain(current),), unknown_gpus=())
        current = nxt
    has_spec = {name: find_gpu(name) is not None for name in {o.gpu_name for o in current}}
    known = [o for o in current if has_spec[o.gpu_name]]
    unknown = tuple(sorted(name for name, ok in has_spec.items() if not ok))
    reasons: tuple[str, ...] = ()
    if not known:
        reasons = (f"no GPU spec for {', '.join(unknown)}: their speed cannot be estimated",)
    return FilterReport(kept=tuple(known), reasons=reasons, unknown_gpus=unknown)


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """One distinct hardware configuration and the layout chosen for it."""

    gpu: GpuSpec
    gpus_per_node: int
    nodes: int
    inter_node_gbps: float | None
    network_assumed: bool
    choice: LayoutChoice


@dataclass(frozen=True, slots=True, kw_only=True)
class Context:
    """What every offer of one config x pricing x provider x billing step shares."""

    config: Config
    estimate: Estimate
    pricing: PricingModel
    provider: str
    granularity_s: int
    minimum_s: int  # the provider's minimum billed time per launch
    term_hours: float  # a commitment's term, billed whole (0: none)
    compute_s: float
    run_s: float  # compute with the spot overhead
    setup: SetupTime
    wall_s: float  # setup + run: wall time to the last byte of output
    spot: SpotOverhead | None
    coef_a: float  # cost = coef_a x price + coef_b
    coef_b: float
    work_units_per_s: float  # estimator throughput, in its throughput_unit
    storage_usd_per_hour: float  # block storage of all nodes, per hour of wall time
    # the 80% interval's ends: wall time and cost coefficients at the estimate's high
    # throughput bound (`_low`: optimistic) and at its low bound (`_high`: the p90 time/cost)
    wall_s_low: float
    wall_s_high: float
    coef_a_low: float
    coef_b_low: float
    coef_a_high: float
    coef_b_high: float

    def cost_range_usd(self, price_usd_per_hour: float) -> tuple[float, float]:
        """(optimistic, pessimistic) cost of one offer of this context at `price`."""
        return (
            self.coef_a_low * price_usd_per_hour + self.coef_b_low,
            self.coef_a_high * price_usd_per_hour + self.coef_b_high,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Enumeration:
    """All priced candidates as rows, their shared contexts, and what was dropped and why."""

    offers: tuple[Offer, ...]
    contexts: tuple[Context, ...]
    rows: tuple[Row, ...]
    context_best: tuple[Row, ...]  # the cheapest row of each context (holds the Pareto front)
    configs: tuple[Config, ...]
    estimator_calls: int
    dropped: tuple[str, ...]  # reasons configurations or pricings produced no candidate


def restart_s(
    provider: str, setup: SetupTime, checkpoint_s: float, assumptions: CostAssumptions
) -> float:
    """Seconds from an interruption to resumed work: `--restart-s`, else the provider's default
    (gpurent.cloud.spot_defaults) or, when longer, a new instance's own setup (provisioning,
    image, dataset, model) plus reading the checkpoint back (taken as long as writing it)."""
    if assumptions.restart_s is not None:
        return assumptions.restart_s
    return max(assumptions.restart_seconds(provider), setup.before_s + checkpoint_s)


def _timing(
    *,
    compute_s: float,
    config: Config,
    est: Estimate,
    pricing: PricingModel,
    offer: Offer,
    term_h: float,
    setup: SetupTime,
    billing: tuple[int, int],
    assumptions: CostAssumptions,
    trains: bool,
) -> tuple[float, SpotOverhead | None, float, float]:
    """(run s, spot overhead, cost coefficients a, b) of one sub-group at `compute_s`;
    `billing` is the provider's (step s, minimum s) for the offer (`billing_step`)."""
    nodes = config.nodes
    spot = None
    run_s = compute_s
    if pricing is PricingModel.SPOT:
        state_gib = (est.memory.weights_gib + est.memory.optimizer_gib) * config.gpus_per_node
        ckpt_s = checkpoint_cost_s(state_gib, assumptions)
        spot = spot_overhead(
            compute_s=compute_s,
            nodes=nodes,
            interruptions_per_hour_per_instance=assumptions.interruptions_per_hour(
                offer.provider, offer.region, offer.instance_type
            ),
            checkpoint_cost_s=ckpt_s,
            restart_s=restart_s(offer.provider, setup, ckpt_s, assumptions),
            trains=trains,
        )
        run_s = compute_s * spot.slowdown
    step, minimum = billing
    a, b = cost_coefficients(
        wall_s=run_s,
        nodes=nodes,
        granularity_s=step,
        provider=offer.provider,
        assumptions=assumptions,
        term_hours=term_h,
        minimum_s=minimum,
        setup=setup,
    )
    return run_s, spot, a, b


def _context(
    *,
    config: Config,
    est: Estimate,
    pricing: PricingModel,
    offer: Offer,
    term_h: float,
    assumptions: CostAssumptions,
    trains: bool,
    setups: dict[tuple[str, float | None], SetupTime],
) -> Context:
    """Setup, run time, spot overhead and cost coefficients shared by every offer of one
    sub-group, at the estimate and at both ends of its 80% interval (a fixed amount of work:
    the time bounds are the inverse of the throughput bounds; with no amount given, the hour
    of running is fixed and only the work done in it varies). `setups` memoizes `setup_time`
    per (provider, network) across the contexts of one enumeration."""
    nodes = config.nodes
    compute_s = est.time_to_finish_s or UNSPECIFIED_WORK_S
    fixed_work = est.time_to_finish_s is not None
    where = (offer.provider, offer.network_gbps)
    setup = setups.get(where)
    if setup is None:
        setup = setups[where] = setup_time(offer.provider, offer.network_gbps, assumptions)
    billing = billing_step(offer.provider, offer.billing_granularity_s)

    def at(seconds: float) -> tuple[float, SpotOverhead | None, float, float]:
        return _timing(
            compute_s=seconds,
            config=config,
            est=est,
            pricing=pricing,
            offer=offer,
            term_h=term_h,
            setup=setup,
            billing=billing,
            assumptions=assumptions,
            trains=trains,
        )

    run_s, spot, a, b = at(compute_s)
    run_lo, a_lo, b_lo = run_s, a, b
    run_hi, a_hi, b_hi = run_s, a, b
    if fixed_work:
        run_lo, _, a_lo, b_lo = at(compute_s / est.interval_high)
        run_hi, _, a_hi, b_hi = at(compute_s / est.interval_low)
    step, minimum = billing
    return Context(
        config=config,
        estimate=est,
        pricing=pricing,
        provider=offer.provider,
        granularity_s=step,
        minimum_s=minimum,
        term_hours=term_h,
        compute_s=compute_s,
        run_s=run_s,
        setup=setup,
        wall_s=run_s + setup.total_s,
        spot=spot,
        coef_a=a,
        coef_b=b,
        work_units_per_s=est.throughput,
        storage_usd_per_hour=nodes
        * assumptions.storage_gb_per_node
        * assumptions.storage_rate(offer.provider)
        / HOURS_PER_MONTH,
        wall_s_low=run_lo + setup.total_s,
        wall_s_high=run_hi + setup.total_s,
        coef_a_low=a_lo,
        coef_b_low=b_lo,
        coef_a_high=a_hi,
        coef_b_high=b_hi,
    )


def enumerate_candidates(
    workload: Workload,
    offers: Sequence[Offer],
    constraints: Constraints,
    assumptions: CostAssumptions,
    estimator: EstimatorFn,
) -> Enumeration:
    """Price every (offer, nodes, pricing) that fits; see the module doc for the caching.

    Offers are grouped by hardware (GPU, count, network) for the layout search, and within a
    group by everything else a context depends on (provider, billing step, reserved term), so
    the inner loop is one multiply-add per offer.
    """
    # hardware key -> sub-group key -> pricing -> [(offer index, price)]
    groups: dict[
        tuple[str, int, float | None],
        dict[tuple[str, int, float], dict[PricingModel, list[tuple[int, float]]]],
    ] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    rules: dict[str, tuple[float, float] | None] = {}
    for i, offer in enumerate(offers):  # the hottest loop: once per offer, prices inlined
        hardware = groups[(offer.gpu_name, offer.gpu_count, offer.network_gbps)]
        for pricing in constraints.pricing:
            term_h = 0.0
            if pricing is PricingModel.ON_DEMAND:
                price = offer.price_usd_per_hour
            elif pricing is PricingModel.SPOT:
                price = offer.spot_price_usd_per_hour
            else:
                committed = reserved_price(offer, assumptions, rules)
                if committed is None:
                    continue
                price, term_h = committed
            if price is None:
                continue
            hardware[(offer.provider, offer.billing_granularity_s, term_h)][pricing].append(
                (i, price)
            )
    configs: dict[tuple[str, int, int, float | None], Config] = {}
    contexts: list[Context] = []
    rows: list[Row] = []
    context_best: list[Row] = []
    dropped: list[str] = []
    calls = 0
    applied: dict[Layout, Workload] = {}  # layout -> the workload laid out so, for every GPU
    setups: dict[tuple[str, float | None], SetupTime] = {}
    trains = workload.task.trains
    need_nvlink = constraints.interconnect is Interconnect.NVLINK
    for (gpu_name, count, network), subgroups in groups.items():
        gpu = estimator.find_gpu(gpu_name)
        if gpu is None:
            continue
        max_nodes = min(constraints.max_nodes, constraints.max_gpus // count)
        for nodes in range(1, max_nodes + 1):
            if nodes > 1 and need_nvlink and (network or 0.0) < NVLINK_MIN_NETWORK_GBPS:
                break
            gbps = None if nodes == 1 else (network or assumptions.default_network_gbps)
            key = (gpu_name, count, nodes, gbps)
            config = configs.get(key)
            if config is None:
                choice = choose_layout(
                    estimator,
                    workload,
                    gpu=gpu,
                    gpus_per_node=count,
                    nodes=nodes,
                    inter_node_gbps=gbps,
                    applied=applied,
                )
                calls += choice.tried
                config = Config(
                    gpu=gpu,
                    gpus_per_node=count,
                    nodes=nodes,
                    inter_node_gbps=gbps,
                    network_assumed=nodes > 1 and network is None,
                    choice=choice,
                )
                configs[key] = config
            est = config.choice.estimate
            if config.choice.layout is None or est is None:
                continue
            for (_, _, term_h), by_pricing in subgroups.items():
                for pricing, priced in by_pricing.items():
                    ctx = _context(
                        config=config,
                        est=est,
                        pricing=pricing,
                        offer=offers[priced[0][0]],
                        term_h=term_h,
                        assumptions=assumptions,
                        trains=trains,
                        setups=setups,
                    )
                    spot = ctx.spot
                    if spot is not None and not spot.finishes:
                        mtti_h = spot.mean_time_to_interruption_s / SECONDS_PER_HOUR
                        dropped.append(
                            f"spot on {nodes} node(s) of {count}x {gpu_name} at "
                            f"{ctx.provider}: an interruption every {mtti_h:.2g} h on average "
                            f"outpaces checkpoint + restart (over {MAX_SPOT_SLOWDOWN:g}x the "
                            "compute time): it never finishes in practice"
                        )
                        continue
                    idx = len(contexts)
                    contexts.append(ctx)
                    a, b, wall = ctx.coef_a, ctx.coef_b, ctx.wall_s
                    new = [Row(a * p + b, wall, i, idx, p) for i, p in priced]
                    rows.extend(new)
                    context_best.append(min(new))
    return Enumeration(
        offers=tuple(offers),
        contexts=tuple(contexts),
        rows=tuple(rows),
        context_best=tuple(context_best),
        configs=tuple(configs.values()),
        estimator_calls=calls,
        dropped=tuple(dict.fromkeys(dropped)),
    )
