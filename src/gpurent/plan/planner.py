"""`make_plan`: filter, enumerate, rank, build the shown candidates and explain the best one.

Pure: takes the workload, the offers, the constraints, the cost assumptions and an estimator
callable; returns a frozen `Plan`. No I/O, no clock.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from operator import itemgetter
from typing import NamedTuple

from gpurent.catalog.offer import Offer
from gpurent.cloud.spot_defaults import spot_default
from gpurent.estimate.result import Estimate
from gpurent.plan.availability import Availability, Market, availability, market
from gpurent.plan.constraints import Constraints, Objective, PricingModel, Risk
from gpurent.plan.enumerate import (
    UNSPECIFIED_WORK_S,
    Config,
    Context,
    Enumeration,
    Row,
    enumerate_candidates,
    filter_offers,
)
from gpurent.plan.explain import compare_with_matrix, explain
from gpurent.plan.layouts import EstimatorFn
from gpurent.plan.rank import (
    RowKey,
    distinct,
    objective_key,
    pareto_front,
    rank_rows,
    risk_key,
    within,
)
from gpurent.plan.result import Candidate, Explanation, Plan, WorkloadSummary
from gpurent.plan.scenarios import Scenario
from gpurent.pricing.costs import CostAssumptions, cost_breakdown
from gpurent.units import SECONDS_PER_HOUR, format_duration
from gpurent.workload.spec import Workload

MAX_PARETO_POINTS = 20


def work_unit(est: Estimate) -> tuple[str, float]:
    """(unit, smallest scale) for cost per unit: tokens per 1M, everything else per 1k."""
    unit = est.throughput_unit.split("/")[0].strip() or "samples"
    if unit.startswith("token"):
        return "tokens", 1e6
    return unit, 1e3


_SCALES = ((1e3, "1k"), (1e6, "1M"), (1e9, "1B"))


def readable_unit(unit: str, scale: float, cost_usd: float, work_units: float) -> tuple[float, str]:
    """Raise the unit scale (1k -> 1M -> 1B) until the cost per unit is at least a cent."""
    for factor, name in _SCALES:
        if factor < scale:
            continue
        per_unit = cost_usd / work_units * factor if work_units > 0 else 0.0
        if per_unit >= 0.01 or factor == _SCALES[-1][0]:
            return per_unit, f"{name} {unit}"
    return 0.0, f"1B {unit}"


def summarize_workload(workload: Workload) -> WorkloadSummary:
    """The workload for the plan's header: name, model, task and amount of work."""
    if workload.token_budget:
        work, given = f"{workload.token_budget:.3g} tokens", True
    elif workload.dataset_samples and workload.epochs:
        work = f"{workload.epochs:g} epoch(s) of {workload.dataset_samples:,} samples"
        given = True
    elif workload.dataset_samples:
        work, given = f"{workload.dataset_samples:,} samples", True
    else:
        work = f"{format_duration(UNSPECIFIED_WORK_S)} of running (the workload gives no amount)"
        given = False
    return WorkloadSummary(
        name=workload.name or workload.model,
        model=workload.model,
        task=workload.task.value,
        precision=workload.precision.value,
        work=work,
        work_given=given,
    )


class _Builder:
    """Turns rows into `Candidate`s (only the few that are shown)."""

    def __init__(
        self,
        en: Enumeration,
        workload: Workload,
        constraints: Constraints,
        assumptions: CostAssumptions,
        market: Market,
    ) -> None:
        self.en = en
        self.market = market
        self.common_notes = _common_notes(en)
        self.ctx_pricing = [c.pricing for c in en.contexts]
        regions: dict[tuple[str, str], set[str]] = {}
        for o in en.offers:
            regions.setdefault((o.provider, o.instance_type), set()).add(o.region)
        self.region_count = {k: len(v) for k, v in regions.items()}
        self.workload = workload
        self.constraints = constraints
        self.assumptions = assumptions

    def offer(self, row: Row) -> Offer:
        return self.en.offers[row.offer_index]

    def ctx(self, row: Row) -> Context:
        return self.en.contexts[row.context_index]

    def nodes(self, row: Row) -> int:
        return self.en.contexts[row.context_index].config.nodes

    def identity(self, row: Row) -> tuple[tuple[str, str], PricingModel]:
        """Rows of one instance type and pricing model collapse into their best (any region,
        any node count) in the ranked table."""
        o = self.en.offers[row.offer_index]  # looked up per row read (a few hundred), not per offer
        return ((o.provider, o.instance_type), self.ctx_pricing[row.context_index])

    def other_regions(self, row: Row) -> int:
        """In how many other regions the catalog (after filters) lists this instance type."""
        o = self.en.offers[row.offer_index]
        return self.region_count[(o.provider, o.instance_type)] - 1

    def work_per_usd(self, row: Row) -> float:
        """Steady-state work per dollar: throughput over the running cost (instances and
        storage, slowed by any spot overhead); one-off costs (setup, egress, billing rounding)
        excluded."""
        c = self.ctx(row)
        per_h = row.price_usd_per_hour * c.config.nodes + c.storage_usd_per_hour
        usd_per_h = per_h * (c.run_s / c.compute_s)
        return c.work_units_per_s * SECONDS_PER_HOUR / usd_per_h if usd_per_h > 0 else math.inf

    def cost_high(self, row: Row) -> float:
        """The row's 90th-percentile cost (at its estimate's low throughput bound)."""
        return self.ctx(row).cost_range_usd(row.price_usd_per_hour)[1]

    def wall_high(self, row: Row) -> float:
        return self.ctx(row).wall_s_high

    def work_per_usd_low(self, row: Row) -> float:
        """`work_per_usd` at the low throughput bound (its slower wall time included)."""
        c = self.ctx(row)
        usd_per_h = (row.price_usd_per_hour * c.config.nodes + c.storage_usd_per_hour) * (
            (c.wall_s_high - c.setup.total_s) / c.compute_s
        )
        work = c.work_units_per_s * c.estimate.interval_low
        return work * SECONDS_PER_HOUR / usd_per_h if usd_per_h > 0 else math.inf

    def key(self) -> RowKey:
        """The ranking key for the constraints' objective and risk."""
        objective = self.constraints.objective
        if self.constraints.risk is Risk.P90:
            return risk_key(objective, self.cost_high, self.wall_high, self.work_per_usd_low)
        return objective_key(objective, self.work_per_usd)

    def describe(self, row: Row) -> str:
        o, c = self.offer(row), self.ctx(row)
        nodes = f"{c.config.nodes}x " if c.config.nodes > 1 else ""
        return f"{nodes}{o.provider} {o.instance_type} {o.region} {c.pricing.value}"

    def availability(self, row: Row) -> Availability:
        return availability(self.offer(row), self.ctx(row).pricing, self.market)

    def spot_rate_source(self, offer: Offer, ctx: Context) -> str:
        if ctx.pricing is not PricingModel.SPOT:
            return ""
        if self.assumptions.spot_interruptions_per_hour is not None:
            return "--spot-interruptions-per-hour"
        for r in self.assumptions.signal_rates:
            if r.matches(offer.provider, offer.region, offer.instance_type):
                return f"spot signal: {r.source}"
        return f"gpurent's spot defaults for {offer.provider}: " + (
            spot_default(offer.provider).rate_source
        )

    def notes(self, offer: Offer, ctx: Context) -> tuple[str, ...]:
        notes: list[str] = []
        flag = availability(offer, ctx.pricing, self.market).flag
        if flag:
            notes.append(flag)
        est, cfg = ctx.estimate, ctx.config
        if ctx.spot is not None and ctx.spot.expected_interruptions > 0:
            s = ctx.spot
            how = (
                f"(checkpoint every {format_duration(s.checkpoint_interval_s)}, "
                f"{s.checkpoint_cost_s:.0f} s each)"
                if math.isfinite(s.checkpoint_interval_s)
                else "restarting"
            )
            notes.append(
                f"spot: ~{s.expected_interruptions:.1f} interruptions expected, "
                f"+{(s.slowdown - 1) * 100:.0f}% time {how}"
            )
        if "GCP_ACC_PRICE_SUSPECT" in offer.notes:
            notes.append("price suspect: the catalog's GCP accelerator price may be incomplete")
        if cfg.network_assumed:
            notes.append(
                f"network between nodes not published: assumed "
                f"{self.assumptions.default_network_gbps:g} Gbit/s"
            )
        headroom = est.memory.headroom_gib
        if headroom < 0.1 * est.memory.capacity_gib:
            notes.append(f"tight memory: {headroom:.1f} GiB free per GPU")
        if cfg.gpus_per_node * cfg.nodes > 1 and est.scaling_efficiency < 0.7:
            notes.append(f"poor scaling: {est.scaling_efficiency:.0%} efficiency")
        if ctx.term_hours > 0:
            billed = ctx.coef_a / cfg.nodes
            notes.append(
                f"reserved term: pays {billed:,.0f} h per instance (whole "
                f"{ctx.term_hours:,.0f} h terms) whatever the job uses"
            )
        layout = cfg.choice.layout
        if layout is not None and layout.batch_size_per_gpu < self.workload.batch_size_per_gpu:
            notes.append(
                f"micro-batch lowered to fit memory ({self.workload.batch_size_per_gpu} -> "
                f"{layout.batch_size_per_gpu}, x{layout.gradient_accumulation} accumulation)"
            )
        notes.extend(n for n in est.notes if n not in self.common_notes)
        return tuple(notes)

    def candidate(self, row: Row, rank: int, also_in_regions: int = 0) -> Candidate:
        offer, ctx = self.offer(row), self.ctx(row)
        est, cfg = ctx.estimate, ctx.config
        assert cfg.choice.layout is not None
        cost = cost_breakdown(
            price_usd_per_hour=row.price_usd_per_hour,
            wall_s=ctx.run_s,
            compute_s=ctx.compute_s,
            nodes=cfg.nodes,
            granularity_s=ctx.granularity_s,
            provider=offer.provider,
            assumptions=self.assumptions,
            term_hours=ctx.term_hours,
            minimum_s=ctx.minimum_s,
            setup=ctx.setup,
        )
        unit, scale = work_unit(est)
        work_units = ctx.work_units_per_s * ctx.compute_s
        per_unit, cost_unit = readable_unit(unit, scale, cost.total_usd, work_units)
        epochs = self.workload.epochs if self.workload.dataset_samples else None
        c = self.constraints
        cost_low, cost_high = ctx.cost_range_usd(row.price_usd_per_hour)
        # the bounds bracket the median exactly (a bound computed by another route can differ
        # from it in the last bit when the interval is degenerate)
        cost_low, cost_high = min(cost_low, cost.total_usd), max(cost_high, cost.total_usd)
        return Candidate(
            rank=rank,
            provider=offer.provider,
            instance_type=offer.instance_type,
            region=offer.region,
            also_in_regions=also_in_regions,
            gpu_name=offer.gpu_name,
            gpus_per_node=cfg.gpus_per_node,
            nodes=cfg.nodes,
            gpu_memory_gib=offer.gpu_memory_gib,
            inter_node_gbps=cfg.inter_node_gbps,
            network_assumed=cfg.network_assumed,
            pricing=ctx.pricing,
            price_usd_per_hour=row.price_usd_per_hour,
            layout=cfg.choice.layout,
            compute_time_s=ctx.compute_s,
            run_time_s=ctx.run_s,
            setup=ctx.setup,
            term_hours=ctx.term_hours,
            time_s=ctx.wall_s,
            cost=cost,
            work_units=work_units,
            work_unit=unit,
            cost_per_unit_usd=per_unit,
            cost_unit=cost_unit,
            cost_per_epoch_usd=cost.total_usd / epochs if epochs else None,
            throughput=est.throughput,
            throughput_unit=est.throughput_unit,
            work_per_usd=self.work_per_usd(row),
            bottleneck=est.bottleneck,
            scaling_efficiency=est.scaling_efficiency,
            mfu=est.mfu,
            memory=est.memory,
            basis=est.basis,
            spot=ctx.spot,
            spot_rate_source=self.spot_rate_source(offer, ctx),
            availability=self.availability(row),
            meets_deadline=None if c.deadline_s is None else ctx.wall_s <= c.deadline_s,
            within_budget=None if c.budget_usd is None else row.cost_usd <= c.budget_usd,
            as_of=offer.as_of,
            notes=self.notes(offer, ctx),
            throughput_low=est.throughput_low,
            throughput_high=est.throughput_high,
            time_low_s=min(ctx.wall_s_low, ctx.wall_s),
            time_high_s=max(ctx.wall_s_high, ctx.wall_s),
            cost_low_usd=cost_low,
            cost_high_usd=cost_high,
            interval_class=est.interval_class,
        )


NEARLY_AS_CHEAP = 1.05  # "within 5% of the cost" for the faster near-tie alternative


def _nearly_as_cheap(b: _Builder, rows: list[Row], best: Row) -> Candidate | None:
    """The fastest candidate costing at most 5% more than the best, if it is faster."""
    most = best.cost_usd * NEARLY_AS_CHEAP
    near = [r for r in rows if r.cost_usd <= most and r.wall_s < best.wall_s]
    return b.candidate(min(near, key=itemgetter(1, 0)), 0) if near else None


def _common_notes(en: Enumeration) -> frozenset[str]:
    """Estimator notes that every priced configuration shares: said once, in the assumptions."""
    sets = [frozenset(ctx.estimate.notes) for ctx in en.contexts]
    return frozenset.intersection(*sets) if sets else frozenset()


def _available_only(en: Enumeration, b: _Builder, least: float) -> Enumeration:
    """The enumeration without rows whose availability confidence is known and below `least`."""
    rows = []
    for r in en.rows:
        confidence = b.availability(r).confidence
        if confidence is None or confidence >= least:
            rows.append(r)
    best: dict[int, Row] = {}
    for r in rows:
        if r.context_index not in best or r < best[r.context_index]:
            best[r.context_index] = r
    return replace(en, rows=tuple(rows), context_best=tuple(best.values()))


def _no_fit_reasons(en: Enumeration, workload: Workload) -> list[str]:
    misses = [cfg for cfg in en.configs if cfg.choice.layout is None]
    if not misses:
        return list(en.dropped) or ["no candidate could be priced"]

    def headroom(cfg: Config) -> float:
        est = cfg.choice.estimate
        return est.memory.headroom_gib if est is not None else float("-inf")

    closest = max(misses, key=headroom)
    what = f"{workload.model} {workload.task.value}"
    reasons = [
        f"{what} fits on no offer within --max-gpus/--max-nodes: the closest, "
        f"{closest.choice.reason}",
        "try more nodes (--max-nodes), a smaller micro-batch, LoRA/QLoRA, fp8/int weights, "
        "or CPU offload",
    ]
    return reasons + list(en.dropped)


class _Counts(NamedTuple):
    """How much a plan evaluated (`Plan.configurations` and the two after it)."""

    configurations: int
    estimator_calls: int
    candidates_evaluated: int


def make_plan(
    workload: Workload,
    offers: Sequence[Offer],
    constraints: Constraints,
    assumptions: CostAssumptions,
    estimator: EstimatorFn,
    *,
    scenario: Scenario | None = None,
) -> Plan:
    """Rank every way to run `workload` on `offers` under `constraints` (see the package doc)."""
    summary = summarize_workload(workload)
    filtered = filter_offers(offers, constraints, assumptions, estimator.find_gpu)
    providers = tuple(sorted({o.provider for o in filtered.kept}))
    assumption_lines = _assumptions(assumptions, providers, summary, filtered.unknown_gpus)

    def plan(
        infeasible_reasons: tuple[str, ...],
        counts: _Counts,
        *,
        feasible: bool = False,
        top: tuple[Candidate, ...] = (),
        pareto: tuple[Candidate, ...] = (),
        explanation: Explanation | None = None,
        notes: tuple[str, ...] = (),
    ) -> Plan:
        """The plan; by default one with no candidate, for `infeasible_reasons`."""
        return Plan(
            workload=summary,
            objective=constraints.objective,
            risk=constraints.risk,
            scenario=scenario.name if scenario else None,
            constraints=constraints.describe(),
            catalog_offers=len(offers),
            offers_considered=len(filtered.kept),
            price_as_of=tuple(sorted({o.as_of for o in filtered.kept})),
            assumptions=assumption_lines + notes,
            feasible=feasible,
            top=top,
            pareto=pareto,
            explanation=explanation,
            infeasible_reasons=infeasible_reasons,
            configurations=counts.configurations,
            estimator_calls=counts.estimator_calls,
            candidates_evaluated=counts.candidates_evaluated,
        )

    if not filtered.kept:
        return plan(filtered.reasons, _Counts(0, 0, 0))
    en = enumerate_candidates(
        workload,
        filtered.kept,
        constraints,
        assumptions,
        estimator,
    )
    counts = _Counts(len(en.configs), en.estimator_calls, len(en.rows))
    if not en.rows:
        return plan(tuple(_no_fit_reasons(en, workload)), counts)
    b = _Builder(en, workload, constraints, assumptions, market(offers))
    if constraints.min_availability is not None:
        en = _available_only(en, b, constraints.min_availability)
        b.en = en
        if not en.rows:
            return plan(
                (
                    f"every candidate's availability confidence is below --min-availability "
                    f"{constraints.min_availability:g} (spot or marketplace prices far below the "
                    "usual): lower it or add on-demand to --pricing",
                ),
                counts,
            )
    estimator_notes = tuple(f"estimator: {n}" for n in sorted(b.common_notes))
    key = b.key()
    ranking = rank_rows(en.rows, constraints, key, b.describe, b.nodes)
    shown = distinct(ranking.ranked, b.identity, constraints.top_n)
    top = tuple(
        b.candidate(r, i + 1 if ranking.feasible else 0, b.other_regions(r))
        for i, r in enumerate(shown)
    )
    # The front and the fastest/cheapest extremes lie among each context's cheapest row.
    extremes = (
        within(en.context_best, constraints, b.nodes) if ranking.feasible else list(en.context_best)
    )
    front_rows = pareto_front(extremes)
    if len(front_rows) > MAX_PARETO_POINTS:  # keep both ends, thin the middle evenly
        step = (len(front_rows) - 1) / (MAX_PARETO_POINTS - 1)
        front_rows = [front_rows[round(i * step)] for i in range(MAX_PARETO_POINTS)]
    pareto = tuple(b.candidate(r, 0) for r in front_rows)
    explanation = None
    if ranking.feasible:
        ranked = ranking.ranked
        on_demand = ranking.first(lambda r: b.ctx(r).pricing is PricingModel.ON_DEMAND)
        matrix = None
        if scenario is not None:
            on_matrix = ranking.first(lambda r: b.offer(r).gpu_name in scenario.matrix_gpus)
            matrix = compare_with_matrix(
                top[0],
                b.candidate(on_matrix, 0) if on_matrix else None,
                scenario,
                constraints.objective,
            )
        explanation = explain(
            top[0],
            objective=constraints.objective,
            runner_up=top[1] if len(top) > 1 else None,
            fastest=b.candidate(min(extremes, key=itemgetter(1, 0)), 0),
            nearly_as_cheap=_nearly_as_cheap(b, extremes, shown[0]),
            cheapest=b.candidate(min(extremes), 0),
            best_on_demand=b.candidate(on_demand, 0) if on_demand else None,
            feasible_count=len(ranked),
            matrix=matrix,
            top=top,
            risk=constraints.risk,
        )
    return plan(
        ranking.reasons,
        counts,
        feasible=ranking.feasible,
        top=top,
        pareto=pareto,
        explanation=explanation,
        notes=estimator_notes,
    )


def _assumptions(
    assumptions: CostAssumptions,
    providers: tuple[str, ...],
    summary: WorkloadSummary,
    unknown_gpus: tuple[str, ...],
) -> tuple[str, ...]:
    lines = list(assumptions.describe(providers))
    lines.append(
        "compute: instances x on-demand/spot/reserved price x hours, rounded up to each "
        "provider's billing step; prices are list prices of the catalog snapshot"
    )
    if not summary.work_given:
        lines.append(
            f"work: the workload gives no amount of work, so costs are for "
            f"{format_duration(UNSPECIFIED_WORK_S)} of running; "
            f"objective {Objective.THROUGHPUT_PER_DOLLAR.value} ranks it best"
        )
    if unknown_gpus:
        lines.append(f"skipped offers with GPUs that have no spec: {', '.join(unknown_gpus)}")
    return tuple(lines)
