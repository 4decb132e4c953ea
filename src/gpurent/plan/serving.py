"""`gpurent plan --serve`: the cheapest fleet of replicas that serves a ServingWorkload's
request rate within its SLOs (pure: offers and the serving model in, a ServePlan out).

For every catalog offer x tensor-parallel degree (a replica of `tp` GPUs inside one instance;
`tp` in 1, 2, 4, 8 up to the instance's GPUs) whose memory holds the weights and a KV cache,
the serving model (`estimate.serving.max_load_meeting_slo`) gives the highest Poisson rate
one replica sustains with every SLO met. The fleet is

    replicas  = ceil(R / (load_per_replica x (1 - headroom)))
    instances = ceil(replicas / (gpus_per_instance // tp))

priced per hour, per month at 24/7 (730 h) and per 1M output tokens at the rate R. The
serving model's 80 % interval on the load becomes an interval on the replicas (the high
load bound needs the fewest) and so on the cost. See docs/serving-plan.md.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from gpurent.catalog import get_gpu
from gpurent.catalog.offer import Offer
from gpurent.cloud.spot_defaults import SECONDS_PER_HOUR, spot_default
from gpurent.errors import GpurentError
from gpurent.estimate.serving import (
    Figure,
    ServingConstants,
    SloLoad,
    load_serving_constants,
    max_load_meeting_slo,
    operating_point,
    serving_memory,
)
from gpurent.workload.serving import ServingWorkload

HOURS_PER_MONTH = 730.0  # 24/7: 8760 h / 12
DEFAULT_HEADROOM = 0.1
TP_DEGREES = (1, 2, 4, 8)
KIND = "serve-plan"


@dataclass(frozen=True, slots=True, kw_only=True)
class TrafficProfile:
    """The request rate in each hour of the day (00-23, UTC or local: the file's own)."""

    rates_per_s: tuple[float, ...]  # 24 values, req/s
    source: str = ""

    @property
    def mean_per_s(self) -> float:
        """Mean request rate over the profile's hours, in requests per second."""
        return sum(self.rates_per_s) / len(self.rates_per_s)

    @property
    def peak_per_s(self) -> float:
        """Peak request rate over the profile's hours, in requests per second."""
        return max(self.rates_per_s)


def profile_from_shares(shares: Sequence[float], mean_rate_per_s: float) -> tuple[float, ...]:
    """Per-hour rates from each hour's share of the day's requests, at a daily mean rate."""
    total = sum(shares)
    return tuple(mean_rate_per_s * 24.0 * s / total for s in shares)


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeOptions:
    """Serving plan options: headroom, spot, traffic profile, replica floor, how many to show."""

    headroom: float = DEFAULT_HEADROOM  # share of each replica's SLO load kept spare
    spot: bool = False  # also price replicas at spot, capacity lost to interruptions priced in
    spot_interruptions_per_hour: float | None = None  # None: cloud/spot_defaults per provider
    restart_s: float | None = None
    profile: TrafficProfile | None = None
    min_replicas: int = 1  # kept up in every hour of a profile
    top_n: int = 10
    scenario_gpus: tuple[str, ...] = ()  # the guide matrix's GPUs (--scenario inference)
    scenario_text: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class SpotReplicas:
    """Spot replicas: a replica interrupted `interruptions_per_hour` times an hour is down
    `restart_s` each time, so down a share q = rate x restart / (3600 + rate x restart) of the
    time (renewal: up a mean 1/rate hours, then down restart_s); the fleet gets
    ceil(needed / (1 - q)) replicas so that the expected replicas up still carry the load."""

    interruptions_per_hour: float
    restart_s: float
    down_share: float
    replicas_needed: int  # without interruptions
    replicas: int
    source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class HourRow:
    """One hour of a traffic profile: request rate, replicas and instances needed, cost in USD."""

    hour: int
    rate_per_s: float
    replicas: int
    instances: int
    cost_usd: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Schedule:
    """Replicas per hour of a traffic profile; GPUs free against a fleet sized for the peak."""

    hours: tuple[HourRow, ...]
    cost_usd_per_day: float
    peak_instances: int
    gpu_hours_free_per_day: float
    free_hours: tuple[int, ...]  # hours with at least one instance fewer than the peak

    @property
    def cost_usd_per_month(self) -> float:
        """Cost in USD per month (the daily cost times days in a month)."""
        return self.cost_usd_per_day * HOURS_PER_MONTH / 24.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeCandidate:
    """A ranked way to serve the workload: instance, replicas, tensor parallelism, cost, latency."""

    rank: int
    provider: str
    instance_type: str
    region: str
    also_in_regions: tuple[str, ...]
    gpu_name: str
    gpus_per_instance: int
    gpu_memory_gib: float
    pricing: str  # "on-demand" | "spot"
    price_usd_per_hour: float  # one instance, at `pricing`
    tensor_parallel: int
    replicas_per_instance: int
    replicas: int
    replicas_low: int  # at the load's high bound
    replicas_high: int  # at its low bound
    instances: int
    num_gpus: int
    load_per_replica_per_s: Figure  # highest rate one replica sustains within the SLOs
    limiting: str  # the SLO that binds at that load, or "capacity"
    max_concurrency: int
    concurrency_limited_by: str
    ttft_p99_ms: Figure  # one replica's point at R / replicas
    tpot_p99_ms: Figure
    e2e_p99_s: Figure
    cost_usd_per_hour: float
    cost_low_usd_per_hour: float
    cost_high_usd_per_hour: float
    cost_usd_per_month: float  # 24/7, or the profile's schedule
    cost_low_usd_per_month: float
    cost_high_usd_per_month: float
    cost_per_million_output_tokens_usd: float
    spot: SpotReplicas | None
    schedule: Schedule | None
    as_of: str
    source: str

    @property
    def label(self) -> str:
        """The candidate in one line: provider, instance, region, pricing, replicas x tp GPUs."""
        return (
            f"{self.provider} {self.instance_type} ({self.region}) {self.pricing}: "
            f"{self.replicas} x {self.tensor_parallel} {self.gpu_name}"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Closest:
    """The configuration nearest to meeting the SLOs when none does."""

    gpu_name: str
    tensor_parallel: int
    limiting: str  # the SLO missed ("memory": nothing fits)
    miss: float  # value / target at a vanishing load
    value: float  # the SLO's value there (ms, or s for e2e)
    target: float


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeExplanation:
    """Why the best serving candidate won, what the next one costs, and the guide matrix line."""

    headline: str
    why: tuple[str, ...]
    next_cost: str
    matrix: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ServePlan:
    """A serving plan: the ranked candidates, the cost/latency Pareto front and an explanation."""

    workload: ServingWorkload
    rate_per_s: float
    options: ServeOptions
    candidates: tuple[ServeCandidate, ...]  # ranked, cheapest first
    pareto: tuple[ServeCandidate, ...]  # cost/h vs p99 TTFT
    explanation: ServeExplanation | None
    closest: Closest | None
    configurations: int  # (GPU, tp) pairs the serving model evaluated
    unsupported: str = ""  # why a GPU could not run the workload (the first met), or ""
    offers_considered: int
    price_as_of: tuple[str, ...]
    assumptions: tuple[str, ...]

    @property
    def feasible(self) -> bool:
        """Whether any candidate meets the workload's SLO."""
        return bool(self.candidates)

    @property
    def best(self) -> ServeCandidate | None:
        """The cheapest candidate, or None when none is feasible."""
        return self.candidates[0] if self.candidates else None

    @property
    def top(self) -> tuple[ServeCandidate, ...]:
        """The first top_n candidates."""
        return self.candidates[: self.options.top_n]

    def infeasible_line(self) -> str:
        """One line: why nothing meets the SLOs, the closest configuration and its miss."""
        c = self.closest
        name = self.workload.name or self.workload.model
        if c is None:
            why = f": {self.unsupported}" if self.unsupported else ""
            return f"no offer can run {name}{why}"
        if c.limiting == "memory":
            return (
                f"{name} does not fit on any offer's GPUs (tensor parallel up to 8 in one "
                f"instance); the largest tried: {c.tensor_parallel} x {c.gpu_name}; try a "
                "narrower quantization (weights=fp8 or awq-int4)"
            )
        unit = "s" if c.limiting.endswith("_s") else "ms"
        return (
            f"no configuration meets {c.limiting} <= {c.target:g} {unit}: the closest, "
            f"{c.tensor_parallel} x {c.gpu_name} per replica, reaches {c.value:.4g} {unit} even "
            f"at a vanishing load ({c.miss:.2f}x the target); relax the SLO or shorten prompts"
        )


# --------------------------------------------------------------------------------- pieces


def replicas_for(rate_per_s: float, load_per_replica: float, headroom: float) -> int:
    """ceil(R / (load x (1 - headroom))), at least 1; a relative 1e-9 slack keeps an exact
    multiple from rounding up."""
    if rate_per_s <= 0:
        return 1
    usable = load_per_replica * (1.0 - headroom)
    return max(1, math.ceil(rate_per_s / usable * (1.0 - 1e-9)))


def spot_replicas(needed: int, interruptions_per_hour: float, restart_s: float) -> int:
    """ceil(needed / (1 - q)), q the share of time a spot replica is down (see SpotReplicas)."""
    lost = interruptions_per_hour * restart_s
    q = lost / (SECONDS_PER_HOUR + lost)
    return max(needed, math.ceil(needed / (1.0 - q) * (1.0 - 1e-9)))


@dataclass(frozen=True, slots=True)
class _Config:
    load: SloLoad
    max_concurrency: int
    limited_by: str


def _instances(replicas: int, per_instance: int) -> int:
    return math.ceil(replicas / per_instance)


_Counts = tuple[tuple[int, ...], tuple[int, ...]]  # replicas and instances, hour by hour


def _hour_counts(
    profile: TrafficProfile,
    load: float,
    per_instance: int,
    opts: ServeOptions,
    spot: tuple[float, float] | None,
    *,
    memo: dict[tuple[float, int, tuple[float, float] | None], _Counts],
) -> _Counts:
    """Replicas and instances for each hour of a profile. Offers of one (GPU, tp) share them
    (only the price differs), so a plan computes each once (`memo`), not once per offer."""
    key = (load, per_instance, spot)
    if key not in memo:
        replicas, instances = [], []
        for rate in profile.rates_per_s:
            n = max(opts.min_replicas, replicas_for(rate, load, opts.headroom))
            if spot is not None:
                n = spot_replicas(n, *spot)
            replicas.append(n)
            instances.append(_instances(n, per_instance))
        memo[key] = (tuple(replicas), tuple(instances))
    return memo[key]


def _schedule(profile: TrafficProfile, counts: _Counts, gpus: int, price: float) -> Schedule:
    replicas, instances = counts
    rows = tuple(
        HourRow(hour=hour, rate_per_s=rate, replicas=n, instances=inst, cost_usd=inst * price)
        for hour, (rate, n, inst) in enumerate(
            zip(profile.rates_per_s, replicas, instances, strict=True)
        )
    )
    peak = max(instances)
    return Schedule(
        hours=rows,
        cost_usd_per_day=sum(r.cost_usd for r in rows),
        peak_instances=peak,
        gpu_hours_free_per_day=float(sum((peak - inst) * gpus for inst in instances)),
        free_hours=tuple(r.hour for r in rows if r.instances < peak),
    )


def _schedule_cost(counts: _Counts, price: float) -> tuple[float, int, int]:
    """A schedule's cost per month in USD, peak replicas and peak instances, without building
    its rows (what the interval's ends need): the same sums as `_schedule`'s."""
    replicas, instances = counts
    per_day = sum(inst * price for inst in instances)
    return per_day * HOURS_PER_MONTH / 24.0, max(replicas), max(instances)


def _price_options(offer: Offer, opts: ServeOptions) -> list[tuple[str, float]]:
    out = []
    if offer.price_usd_per_hour is not None and offer.price_usd_per_hour > 0:
        out.append(("on-demand", offer.price_usd_per_hour))
    if (
        opts.spot
        and offer.spot_price_usd_per_hour is not None
        and offer.spot_price_usd_per_hour > 0
    ):
        out.append(("spot", offer.spot_price_usd_per_hour))
    return out


# ------------------------------------------------------------------------------------ plan


@dataclass(frozen=True, slots=True)
class _Ctx:
    workload: ServingWorkload
    opts: ServeOptions
    k: ServingConstants
    rate: float
    # a traffic profile's hourly replica counts by (load, replicas per instance, spot)
    counts: dict[tuple[float, int, tuple[float, float] | None], _Counts] = field(
        default_factory=dict
    )


def _spot_for(ctx: _Ctx, provider: str, needed: int) -> SpotReplicas:
    d = spot_default(provider)
    given = ctx.opts.spot_interruptions_per_hour
    per_h = given if given is not None else d.interruptions_per_hour
    restart = ctx.opts.restart_s if ctx.opts.restart_s is not None else d.restart_s
    lost = per_h * restart
    return SpotReplicas(
        interruptions_per_hour=per_h,
        restart_s=restart,
        down_share=lost / (SECONDS_PER_HOUR + lost),
        replicas_needed=needed,
        replicas=spot_replicas(needed, per_h, restart),
        source="--spot-interruptions-per-hour / --restart-s" if given is not None else d.source,
    )


def _candidate(  # noqa: PLR0917 - internal, every argument needed
    ctx: _Ctx,
    offer: Offer,
    tp: int,
    cfg: _Config,
    pricing: str,
    price: float,
    latency: tuple[Figure, Figure, Figure],
) -> ServeCandidate:
    opts = ctx.opts
    load = cfg.load.request_rate_per_s
    per_instance = offer.gpu_count // tp
    # the load's high bound needs the fewest replicas, its low bound the most
    counts = [replicas_for(ctx.rate, x, opts.headroom) for x in (load.value, load.high, load.low)]
    spot = _spot_for(ctx, offer.provider, counts[0]) if pricing == "spot" else None
    if spot is not None:
        counts = [spot_replicas(n, spot.interruptions_per_hour, spot.restart_s) for n in counts]
    hourly = [_instances(n, per_instance) * price for n in counts]
    monthly = [h * HOURS_PER_MONTH for h in hourly]
    schedule = None
    inst = _instances(counts[0], per_instance)
    if opts.profile is not None:
        args = (spot.interruptions_per_hour, spot.restart_s) if spot else None
        profile = opts.profile
        counts_at = [
            _hour_counts(profile, x, per_instance, opts, args, memo=ctx.counts)
            for x in (load.value, load.high, load.low)
        ]
        schedule = _schedule(profile, counts_at[0], offer.gpu_count, price)
        ends = [_schedule_cost(c, price) for c in counts_at[1:]]
        monthly = [schedule.cost_usd_per_month, *(e[0] for e in ends)]
        # the hourly figures describe the peak hour's fleet
        counts = [max(r.replicas for r in schedule.hours), *(e[1] for e in ends)]
        hourly = [schedule.peak_instances * price, *(e[2] * price for e in ends)]
        inst = schedule.peak_instances
    tokens_per_month = ctx.rate * ctx.workload.output.mean * SECONDS_PER_HOUR * HOURS_PER_MONTH
    ttft, tpot, e2e = latency
    return ServeCandidate(
        rank=0,
        provider=offer.provider,
        instance_type=offer.instance_type,
        region=offer.region,
        also_in_regions=(),
        gpu_name=offer.gpu_name,
        gpus_per_instance=offer.gpu_count,
        gpu_memory_gib=offer.gpu_memory_gib,
        pricing=pricing,
        price_usd_per_hour=price,
        tensor_parallel=tp,
        replicas_per_instance=per_instance,
        replicas=counts[0],
        replicas_low=counts[1],
        replicas_high=counts[2],
        instances=inst,
        num_gpus=inst * offer.gpu_count,
        load_per_replica_per_s=load,
        limiting=cfg.load.limiting,
        max_concurrency=cfg.max_concurrency,
        concurrency_limited_by=cfg.limited_by,
        ttft_p99_ms=ttft,
        tpot_p99_ms=tpot,
        e2e_p99_s=e2e,
        cost_usd_per_hour=hourly[0],
        cost_low_usd_per_hour=hourly[1],
        cost_high_usd_per_hour=hourly[2],
        cost_usd_per_month=monthly[0],
        cost_low_usd_per_month=monthly[1],
        cost_high_usd_per_month=monthly[2],
        cost_per_million_output_tokens_usd=monthly[0] / tokens_per_month * 1e6,
        spot=spot,
        schedule=schedule,
        as_of=offer.as_of,
        source=offer.source,
    )


@dataclass(slots=True)
class _Search:
    """The (GPU, tp) configurations evaluated so far and the nearest miss."""

    closest: Closest | None = None
    biggest: tuple[float, str, int] | None = None
    evaluated: int = 0
    first_error: str = ""  # why the first GPU that cannot run the workload cannot

    def evaluate(self, ctx: _Ctx, gpu_name: str, tp: int) -> _Config | None:
        try:
            gpu = get_gpu(gpu_name)
            mem = serving_memory(ctx.workload, gpu, tp, constants=ctx.k)
        except GpurentError as exc:  # a GPU without a spec, a quantization it cannot run
            self.first_error = self.first_error or exc.message
            return None
        self.evaluated += 1
        size = gpu.memory_gib * tp
        if self.biggest is None or size > self.biggest[0]:
            self.biggest = (size, gpu.name, tp)
        if not mem.fits:
            return None
        load = max_load_meeting_slo(ctx.workload, gpu, tp, constants=ctx.k)
        if load.met:
            return _Config(load, mem.max_concurrency, mem.limited_by)
        if self.closest is None or load.miss < self.closest.miss:
            target = _target(ctx.workload, load.limiting)
            self.closest = Closest(
                gpu_name=gpu.name,
                tensor_parallel=tp,
                limiting=load.limiting,
                miss=load.miss,
                value=load.miss * target,
                target=target,
            )
        return None


def plan_serving(
    workload: ServingWorkload,
    offers: Sequence[Offer],
    options: ServeOptions | None = None,
    *,
    constants: ServingConstants | None = None,
) -> ServePlan:
    """The ranked fleets that serve `workload.request_rate_per_s` (or the profile's rates)
    within `workload.slo`, cheapest per month first.

    Configurations (GPU, tp) are evaluated cheapest first by the price of the one instance
    each needs at least; once that floor x 730 h exceeds both the `top_n`-th ranked row's
    monthly cost and the second configuration's, the rest cannot be shown and are not
    evaluated (the guide matrix's GPUs always are). The Pareto front is over the
    configurations evaluated."""
    opts = options or ServeOptions()
    k = constants or load_serving_constants()
    rate = opts.profile.mean_per_s if opts.profile is not None else workload.request_rate_per_s
    if rate is None or rate <= 0:
        raise GpurentError("a serving plan needs a request rate (request_rate or --rate)")
    ctx = _Ctx(workload=workload, opts=opts, k=k, rate=rate)
    groups: dict[tuple[str, int], list[tuple[Offer, str, float]]] = {}
    considered = 0
    for offer in offers:
        prices = _price_options(offer, opts)
        if not prices:
            continue
        considered += 1
        for tp in TP_DEGREES:
            if tp > offer.gpu_count:
                break
            groups.setdefault((offer.gpu_name, tp), []).extend(
                (offer, pricing, price) for pricing, price in prices
            )
    floor = {key: min(p for _, _, p in rows) for key, rows in groups.items()}
    search = _Search()
    rows: list[ServeCandidate] = []
    best_by_config: list[float] = []  # each evaluated configuration's cheapest monthly cost
    by_row: dict[tuple[str, str, str, int, float], float] = {}  # ranked rows' monthly costs
    for key in sorted(groups, key=lambda g: (floor[g], g)):
        if len(by_row) >= opts.top_n and len(best_by_config) >= 2:
            # what a configuration must beat to be shown: the top_n-th row, and the second
            # configuration (the explanation's "next"); each of its rows costs at least one
            # instance every hour, floor x 730 h (the matrix's GPUs are always compared)
            bar = max(heapq.nsmallest(opts.top_n, by_row.values())[-1], sorted(best_by_config)[1])
            if floor[key] * HOURS_PER_MONTH > bar and key[0] not in opts.scenario_gpus:
                continue
        gpu_name, tp = key
        cfg = search.evaluate(ctx, gpu_name, tp)
        if cfg is None:
            continue
        cost = math.inf
        latency: dict[int, tuple[Figure, Figure, Figure]] = {}
        for offer, pricing, price in groups[key]:
            needed = replicas_for(rate, cfg.load.request_rate_per_s.value, opts.headroom)
            if needed not in latency:
                p = operating_point(
                    workload, get_gpu(gpu_name), tp, request_rate_per_s=rate,
                    replicas=needed, constants=k,
                )  # fmt: skip
                latency[needed] = (p.ttft_p99_ms, p.tpot_p99_ms, p.e2e_p99_s)
            c = _candidate(ctx, offer, tp, cfg, pricing, price, latency[needed])
            rows.append(c)
            cost = min(cost, c.cost_usd_per_month)
            by_row.setdefault(_row_key(c), c.cost_usd_per_month)
        best_by_config.append(cost)
    ranked = _rank(rows)
    closest = search.closest
    if not ranked and closest is None and search.biggest is not None:
        _size, name, tp = search.biggest
        closest = Closest(
            gpu_name=name, tensor_parallel=tp, limiting="memory",
            miss=math.inf, value=math.inf, target=0.0,
        )  # fmt: skip
    plan = ServePlan(
        workload=workload,
        rate_per_s=rate,
        options=opts,
        candidates=ranked,
        pareto=_pareto(ranked),
        explanation=None,
        closest=closest,
        configurations=search.evaluated,
        unsupported=search.first_error,
        offers_considered=considered,
        price_as_of=tuple(sorted({c.as_of for c in ranked[: opts.top_n]})),
        assumptions=_assumptions(
            workload, opts, rate, opts.profile.peak_per_s if opts.profile else rate
        ),
    )
    return replace(plan, explanation=explain(plan)) if ranked else plan


def _target(workload: ServingWorkload, name: str) -> float:
    value = getattr(workload.slo, name, None)
    return float(value) if isinstance(value, (int, float)) else math.nan


def _sort_key(c: ServeCandidate) -> tuple[float, float, float, str]:
    return (c.cost_usd_per_month, c.ttft_p99_ms.value, c.num_gpus, c.label)


def _row_key(c: ServeCandidate) -> tuple[str, str, str, int, float]:
    """One ranked row: the same instance, pricing, layout and price in any region."""
    return (
        c.provider,
        c.instance_type,
        c.pricing,
        c.tensor_parallel,
        round(c.price_usd_per_hour, 6),
    )


def _rank(rows: list[ServeCandidate]) -> tuple[ServeCandidate, ...]:
    """Cheapest per month first; the same instance, layout and price in several regions is
    one row (the others in `also_in_regions`)."""
    rows.sort(key=_sort_key)
    seen: dict[tuple[str, str, str, int, float], int] = {}
    out: list[ServeCandidate] = []
    regions: list[list[str]] = []
    for c in rows:
        key = (
            c.provider,
            c.instance_type,
            c.pricing,
            c.tensor_parallel,
            round(c.price_usd_per_hour, 6),
        )
        if key in seen:
            regions[seen[key]].append(c.region)
            continue
        seen[key] = len(out)
        out.append(c)
        regions.append([])
    return tuple(
        replace(c, rank=i + 1, also_in_regions=tuple(dict.fromkeys(r)))
        for i, (c, r) in enumerate(zip(out, regions, strict=True))
    )


def _pareto(ranked: tuple[ServeCandidate, ...]) -> tuple[ServeCandidate, ...]:
    """The candidates no other beats on both cost per hour and p99 TTFT (cheapest first)."""
    front: list[ServeCandidate] = []
    best_ttft = math.inf
    for c in sorted(ranked, key=lambda c: (c.cost_usd_per_hour, c.ttft_p99_ms.value)):
        if c.ttft_p99_ms.value < best_ttft:
            front.append(c)
            best_ttft = c.ttft_p99_ms.value
    return tuple(front)


def _assumptions(
    workload: ServingWorkload, opts: ServeOptions, rate: float, peak_rate: float
) -> tuple[str, ...]:
    out = [
        f"replicas = ceil(rate / (SLO load per replica x (1 - headroom {opts.headroom:g}))); "
        "requests routed to replicas at random (each sees a Poisson share)",
        f"per month = 24/7 x {HOURS_PER_MONTH:g} h; per 1M output tokens at {rate:g} req/s x "
        f"{workload.output.mean:.0f} output tokens each",
        "a replica is tensor parallel inside one instance (tp 1, 2, 4, 8); no pipeline "
        "parallelism, no multi-node replicas",
        "intervals: the serving model's 80% range on the load per replica, carried into the "
        "replicas and the cost",
    ]
    if opts.profile is not None:
        out.append(
            f"traffic profile {opts.profile.source or '(given)'}: mean {rate:.3g} req/s, peak "
            f"{peak_rate:.3g} req/s; at least {opts.min_replicas} replica(s) every hour; the "
            "hourly cost figures are the peak hour's fleet"
        )
    if opts.spot:
        out.append(
            "spot replicas: down a share q = rate x restart / (3600 + rate x restart) of the "
            "time; ceil(needed / (1 - q)) replicas so the expected replicas up carry the load"
        )
    return tuple(out)


# ----------------------------------------------------------------------------- explanation


def _money(x: float) -> str:
    return f"${x:,.2f}" if x < 100 else f"${x:,.0f}"


def explain(plan: ServePlan) -> ServeExplanation:
    """Why the top pick, what limits it, what the next different one costs more."""
    best = plan.candidates[0]
    wl = plan.workload
    name = wl.name or wl.model
    load = best.load_per_replica_per_s
    headline = (
        f"Serve {name} at {plan.rate_per_s:g} req/s on {best.instances} x {best.provider} "
        f"{best.instance_type} ({best.region}, {best.pricing}): {best.replicas} replica(s) of "
        f"{best.tensor_parallel} x {best.gpu_name}, {_money(best.cost_usd_per_hour)}/h, "
        f"{_money(best.cost_usd_per_month)}/month, "
        f"{_money(best.cost_per_million_output_tokens_usd)} per 1M output tokens"
    )
    limit = (
        "none of the SLOs binds before the replica saturates (capacity)"
        if best.limiting == "capacity"
        else f"{best.limiting} binds first"
    )
    why = [
        f"one replica meets the SLOs up to {load.value:.3g} req/s (80% range "
        f"{load.low:.3g}-{load.high:.3g}); {limit}",
        f"{best.replicas} replica(s) ({best.replicas_low}-{best.replicas_high} over that range), "
        f"cost {_money(best.cost_low_usd_per_month)}-{_money(best.cost_high_usd_per_month)}/month",
        f"at {plan.rate_per_s:g} req/s each replica's p99 TTFT is {best.ttft_p99_ms.value:.0f} ms "
        f"and p99 TPOT {best.tpot_p99_ms.value:.1f} ms; max concurrency "
        f"{best.max_concurrency} ({best.concurrency_limited_by})",
    ]
    if best.spot is not None:
        s = best.spot
        why.append(
            f"spot: {s.interruptions_per_hour:g} interruptions/h x {s.restart_s:g} s restart -> "
            f"{s.down_share:.1%} of the time down; {s.replicas_needed} replica(s) needed, "
            f"{s.replicas} rented"
        )
    if best.schedule is not None:
        sch = best.schedule
        why.append(
            f"schedule: {min(r.replicas for r in sch.hours)}-{max(r.replicas for r in sch.hours)}"
            f" replicas by hour, {_money(sch.cost_usd_per_day)}/day; "
            f"{sch.gpu_hours_free_per_day:g} GPU-hours a day free against the peak fleet "
            f"(hours {_hours(sch.free_hours)}): room to train by night"
        )
    nxt = next(
        (
            c
            for c in plan.candidates[1:]
            if (c.gpu_name, c.tensor_parallel) != (best.gpu_name, best.tensor_parallel)
        ),
        None,
    )
    next_cost = "no other GPU or layout meets the SLOs"
    if nxt is not None:
        extra = nxt.cost_usd_per_month - best.cost_usd_per_month
        pct = extra / best.cost_usd_per_month if best.cost_usd_per_month else 0.0
        next_cost = (
            f"the next GPU or layout, {nxt.replicas} x {nxt.tensor_parallel} {nxt.gpu_name} "
            f"({nxt.provider} {nxt.instance_type}, {nxt.pricing}), costs "
            f"{_money(extra)}/month more (+{pct:.0%})"
        )
    return ServeExplanation(
        headline=headline, why=tuple(why), next_cost=next_cost, matrix=_matrix(plan, best)
    )


def _hours(hours: tuple[int, ...]) -> str:
    if not hours:
        return "none"
    spans: list[list[int]] = []
    for h in hours:
        if spans and spans[-1][1] == h - 1:
            spans[-1][1] = h
        else:
            spans.append([h, h])
    return ", ".join(f"{a:02d}" if a == b else f"{a:02d}-{b:02d}" for a, b in spans)


def _matrix(plan: ServePlan, best: ServeCandidate) -> str:
    gpus = plan.options.scenario_gpus
    if not gpus:
        return ""
    text = plan.options.scenario_text
    if best.gpu_name in gpus:
        return f"the inference matrix says {text}; the pick agrees ({best.gpu_name})"
    alt = next((c for c in plan.candidates if c.gpu_name in gpus), None)
    if alt is None:
        return (
            f"the inference matrix says {text}; none of them meets these SLOs for "
            f"{plan.workload.model}, so the pick is {best.gpu_name}"
        )
    ratio = alt.cost_usd_per_month / best.cost_usd_per_month if best.cost_usd_per_month else 1.0
    return (
        f"the inference matrix says {text}; {best.gpu_name} serves this at "
        f"{_money(best.cost_usd_per_month)}/month, the best {alt.gpu_name} fleet "
        f"({alt.replicas} replicas of {alt.tensor_parallel}) costs "
        f"{_money(alt.cost_usd_per_month)} "
        f"({ratio:.2f}x)"
    )


__all__ = [
    "DEFAULT_HEADROOM",
    "HOURS_PER_MONTH",
    "KIND",
    "TP_DEGREES",
    "Closest",
    "HourRow",
    "Schedule",
    "ServeCandidate",
    "ServeExplanation",
    "ServeOptions",
    "ServePlan",
    "SpotReplicas",
    "TrafficProfile",
    "explain",
    "plan_serving",
    "profile_from_shares",
    "replicas_for",
    "spot_replicas",
]
