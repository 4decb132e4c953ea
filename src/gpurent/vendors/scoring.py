"""The guide's weighted scorecard, from evidence (pure: values in, frozen results out).

Each criterion is normalised to 0-100 by a monotone function of its evidence (docs/vendors.md):

- hardware (guide 30%, "measured benchmark results"): per GPU type, the mean of (a) the bench
  verdict's measured / datasheet fraction, capped at 1, over the datasheet-checked figures
  (matmul, memory bandwidth, host-device, all-reduce), and (b) measured / best provider's
  measured for the same GPU type and figure, where another provider ran it too; 100 x the mean
  of (a) and (b) (or the one known), averaged over GPU types.
- network (25%, "cross-rack latency < 2 us, bandwidth compliance > 95%"): the mean of
  `latency_score(p50)` (100 at <= 2 us, 50 at 20 us, 0 at >= 200 us, log-linear between) and
  `compliance_score` (100 x compliance / 0.95, capped at 100); the worst link counts.
- elasticity (20%, "scale-out within 5 minutes"): 100 x the mean over timings of
  min(1, 300 s / timing).
- cost (15%, "including hidden costs such as data transfer"): 100 x cheapest total / this
  total, for the reference job's compute (billing minimum and steps), egress, storage and IPs.
- support (10%, "24x7 GPU experts"): 40 for 24x7, 40 for GPU experts, 20 x min(1, 1 h /
  response time).

A criterion without evidence is *missing*: the vendor's total is renormalised over the criteria
it has, and `what_if` says where it would rank were each missing score 0 or 100.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpurent.cloud.billing import BILLING_RULES, BillingRule, EgressTo, billing_rule
from gpurent.errors import InputError, closest
from gpurent.pricing.costs import billed_hours
from gpurent.units import HOURS_PER_MONTH
from gpurent.vendors.file import CRITERIA, BenchEvidence, Provider, ReferenceJob, weights_table

GUIDE_WEIGHTS: tuple[tuple[str, float], ...] = (
    ("hardware", 0.30),
    ("network", 0.25),
    ("elasticity", 0.20),
    ("cost", 0.15),
    ("support", 0.10),
)
GUIDE_SOURCE = "the seed guide, section 7.1 (key evaluation indicators)"
LATENCY_FULL_US = 2.0  # the guide's cross-rack latency target
LATENCY_DECADES_TO_ZERO = 2.0  # 100 x (2 us / latency) decays to 0 two decades above: 200 us
COMPLIANCE_TARGET = 0.95  # the guide's bandwidth compliance target
SCALE_OUT_TARGET_S = 300.0  # the guide's "scale-out within 5 minutes"
SUPPORT_24X7_POINTS = 40.0
SUPPORT_EXPERT_POINTS = 40.0
SUPPORT_RESPONSE_POINTS = 20.0
SUPPORT_RESPONSE_FULL_H = 1.0
WEIGHT_SUM_TOLERANCE = 1e-6
HARDWARE_BENCHMARKS = ("matmul", "membw", "hostdev", "allreduce")


# ---------------------------------------------------------------------------- scalar functions


def _clamp(x: float) -> float:
    return min(100.0, max(0.0, x))


def latency_score(p50_us: float) -> float:
    """100 at <= 2 us; 100 x (1 - log10(latency / 2 us) / 2) above: 50 at 20 us, 0 at 200 us."""
    if p50_us <= LATENCY_FULL_US:
        return 100.0
    return _clamp(100.0 * (1.0 - math.log10(p50_us / LATENCY_FULL_US) / LATENCY_DECADES_TO_ZERO))


def compliance_score(compliance: float) -> float:
    """100 x compliance / 0.95, capped at 100 (the guide: compliance > 95%)."""
    return _clamp(100.0 * compliance / COMPLIANCE_TARGET)


def elasticity_score(timings_s: Sequence[float]) -> float:
    """100 x the mean over timings of min(1, 300 s / timing)."""
    return _clamp(100.0 * sum(min(1.0, SCALE_OUT_TARGET_S / t) for t in timings_s) / len(timings_s))


def cost_score(total_usd: float, cheapest_usd: float) -> float:
    """100 x cheapest / this (100 for the cheapest; a free job scores 100)."""
    if total_usd <= 0.0:
        return 100.0
    return _clamp(100.0 * cheapest_usd / total_usd)


def support_score(always_24x7: bool, gpu_experts: bool, response_time_h: float) -> float:
    """40 for 24x7, 40 for GPU experts, 20 x min(1, 1 h / response time)."""
    response = min(1.0, SUPPORT_RESPONSE_FULL_H / response_time_h)
    return _clamp(
        SUPPORT_24X7_POINTS * always_24x7
        + SUPPORT_EXPERT_POINTS * gpu_experts
        + SUPPORT_RESPONSE_POINTS * response
    )


def hardware_fraction_score(datasheet_fraction: float | None, best_fraction: float | None) -> float:
    """100 x the mean of min(1, measured/datasheet) and measured/best (whichever are known)."""
    parts = [min(1.0, datasheet_fraction)] if datasheet_fraction is not None else []
    if best_fraction is not None:
        parts.append(min(1.0, best_fraction))
    return _clamp(100.0 * sum(parts) / len(parts)) if parts else 0.0


# ---------------------------------------------------------------------------- weights


def resolve_weights(
    given: Sequence[tuple[str, float]] | None, *, strict: bool, where: str = "--weights"
) -> tuple[tuple[tuple[str, float], ...], tuple[str, ...]]:
    """The weights to use and warnings: named weights replace the guide's, the rest keep theirs;
    a sum other than 1 is normalised with a warning, or refused when `strict`."""
    weights = dict(GUIDE_WEIGHTS)
    for name, w in given or ():
        if name not in weights:
            raise InputError(
                f"{where}: unknown criterion {name!r} (criteria: {', '.join(CRITERIA)})"
            )
        weights[name] = w
    total = sum(weights.values())
    if total <= 0.0:
        raise InputError(f"{where}: the weights sum to 0; give at least one positive weight")
    warnings: list[str] = []
    if abs(total - 1.0) > WEIGHT_SUM_TOLERANCE:
        shown = ", ".join(f"{k}={w:g}" for k, w in weights.items())
        if strict:
            raise InputError(
                f"{where}: the weights sum to {total:g}, not 1 ({shown}); fix them or drop --strict"
            )
        warnings.append(f"{where}: the weights sum to {total:g}, not 1 ({shown}); normalised")
    return tuple((k, w / total) for k, w in weights.items()), tuple(warnings)


def parse_weights(text: str, where: str = "--weights") -> tuple[tuple[str, float], ...]:
    """`hardware=0.3,network=0.25,...` as (criterion, weight) pairs."""
    pairs: dict[str, object] = {}
    for item in (p.strip() for p in text.split(",")):
        if not item:
            continue
        name, sep, value = item.partition("=")
        if not sep:
            raise InputError(f"{where}: {item!r} is not CRITERION=WEIGHT (e.g. hardware=0.3)")
        pairs[name.strip().lower()] = value.strip()
    if not pairs:
        raise InputError(f"{where}: give CRITERION=WEIGHT pairs, e.g. hardware=0.3,network=0.25")
    return weights_table(pairs, where)


# ---------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True, kw_only=True)
class CostItem:
    item: str  # "compute", "egress", "storage", "public IPs"
    usd: float
    basis: str  # the arithmetic, e.g. "8 GPUs x 100 h billed x $3.93/GPU-h"
    source: str  # "vendors file", the billing table's source, or "not stated"


@dataclass(frozen=True, slots=True, kw_only=True)
class CriterionScore:
    criterion: str
    score: float | None  # 0-100; None: missing evidence
    evidence: str  # the raw evidence in one line, or why it is missing
    details: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Contribution:
    criterion: str
    weight: float  # the configured weight
    effective_weight: float  # renormalised over the vendor's criteria with evidence; 0 if missing
    points: float | None  # effective weight x score; None when missing


@dataclass(frozen=True, slots=True, kw_only=True)
class VendorScore:
    name: str
    rank: int  # 1 = best
    total: float  # 0-100, renormalised over the criteria with evidence
    weight_covered: float  # sum of the weights of the criteria with evidence
    criteria: tuple[CriterionScore, ...]
    contributions: tuple[Contribution, ...]
    cost_items: tuple[CostItem, ...]
    cost_total_usd: float | None

    def score(self, criterion: str) -> float | None:
        return next(c.score for c in self.criteria if c.criterion == criterion)

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(c.criterion for c in self.criteria if c.score is None)


@dataclass(frozen=True, slots=True, kw_only=True)
class MissingWhatIf:
    vendor: str
    missing: tuple[str, ...]
    rank: int
    rank_if_0: int
    rank_if_100: int
    top_if_0: str
    top_if_100: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Scorecard:
    weights: tuple[tuple[str, float], ...]
    weights_source: str
    job: ReferenceJob
    vendors: tuple[VendorScore, ...]  # best first
    what_if: tuple[MissingWhatIf, ...]
    warnings: tuple[str, ...]

    @property
    def top(self) -> str:
        return self.vendors[0].name


# ---------------------------------------------------------------------------- criteria


def _hardware_keys(ev: BenchEvidence) -> dict[str, float]:
    out: dict[str, float] = {}
    for m in ev.result.measurements:
        if (
            m.value is not None
            and m.benchmark in HARDWARE_BENCHMARKS
            and m.key != "matmul.numpy-fp32"
        ):
            out[m.key] = m.value
    for run in ev.result.model_runs:
        out[f"model.{run.model}.{run.precision}.x{run.world_size}"] = run.throughput
    return out


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs)


def _per_gpu(provider: Provider) -> dict[str, tuple[dict[str, float], list[float]]]:
    """GPU type -> (measurement key -> mean value over files, datasheet fractions)."""
    out: dict[str, tuple[dict[str, list[float]], list[float]]] = {}
    for ev in provider.bench:
        values, fractions = out.setdefault(ev.gpu, ({}, []))
        for key, value in _hardware_keys(ev).items():
            values.setdefault(key, []).append(value)
        for row in ev.result.verdict:
            bench = row.check.split(".", 1)[0]
            if bench in HARDWARE_BENCHMARKS and row.fraction is not None and row.expected:
                fractions.append(row.fraction)
    return {g: ({k: _mean(xs) for k, xs in vals.items()}, fr) for g, (vals, fr) in out.items()}


def _hardware(providers: Sequence[Provider]) -> list[CriterionScore]:
    per = [_per_gpu(p) for p in providers]
    best: dict[tuple[str, str], float] = {}
    runs: dict[tuple[str, str], int] = {}
    for table in per:
        for gpu, (values, _) in table.items():
            for key, value in values.items():
                best[(gpu, key)] = max(best.get((gpu, key), 0.0), value)
                runs[(gpu, key)] = runs.get((gpu, key), 0) + 1
    out = []
    for provider, table in zip(providers, per, strict=True):
        if not table:
            out.append(
                CriterionScore(criterion="hardware", score=None, evidence="no bench results")
            )
            continue
        scores, details = [], []
        for gpu, (values, fractions) in table.items():
            sheet = _mean([min(1.0, f) for f in fractions]) if fractions else None
            ratios = [
                v / best[(gpu, k)]
                for k, v in values.items()
                if best[(gpu, k)] > 0 and runs[(gpu, k)] > 1
            ]
            vs_best = _mean(ratios) if ratios else None
            if sheet is None and vs_best is None:
                continue
            s = hardware_fraction_score(sheet, vs_best)
            scores.append(s)
            files = ", ".join(ev.path for ev in provider.bench if ev.gpu == gpu)
            sheet_text = (
                f"{sheet:.0%} of datasheet over {len(fractions)} figures"
                if sheet is not None
                else "no datasheet check"
            )
            best_text = (
                f"{vs_best:.0%} of the best provider over {len(ratios)} figures"
                if vs_best is not None
                else "no other provider ran these figures on this GPU"
            )
            details.append(f"{gpu}: {sheet_text}; {best_text} ({files})")
        if not scores:
            out.append(
                CriterionScore(
                    criterion="hardware",
                    score=None,
                    evidence="bench results without datasheet checks or comparable figures",
                )
            )
            continue
        out.append(
            CriterionScore(
                criterion="hardware",
                score=_mean(scores),
                evidence="; ".join(details),
                details=tuple(details),
            )
        )
    return out


def _network(provider: Provider) -> CriterionScore:
    latencies = [n.latency_p50_us for n in provider.network if n.latency_p50_us is not None]
    compliances = [n.compliance for n in provider.network if n.compliance is not None]
    if not latencies and not compliances:
        why = (
            "netcheck results without latency or compliance"
            if provider.network
            else "no network evidence"
        )
        return CriterionScore(criterion="network", score=None, evidence=why)
    parts, text = [], []
    if latencies:
        worst = max(latencies)
        p99s = [n.latency_p99_us for n in provider.network if n.latency_p99_us is not None]
        rdma = any(n.over_rdma for n in provider.network)
        parts.append(latency_score(worst))
        tail = f", p99 {max(p99s):g} us" if p99s else ""
        text.append(f"latency p50 {worst:g} us{tail}{' (RDMA)' if rdma else ''}: {parts[-1]:.0f}")
    else:
        text.append("latency: not measured")
    if compliances:
        worst_c = min(compliances)
        parts.append(compliance_score(worst_c))
        text.append(f"bandwidth compliance {worst_c:.1%}: {parts[-1]:.0f}")
    else:
        text.append("compliance: not measured")
    sources = ", ".join(dict.fromkeys(n.source for n in provider.network))
    return CriterionScore(
        criterion="network",
        score=_mean(parts),
        evidence="; ".join(text) + f" ({sources})",
        details=tuple(text),
    )


def _elasticity(provider: Provider) -> CriterionScore:
    t = provider.scale_out_s
    if not t:
        return CriterionScore(criterion="elasticity", score=None, evidence="no scale-out timings")
    ordered = sorted(t)
    median = (
        ordered[len(ordered) // 2]
        if len(ordered) % 2
        else _mean(ordered[len(ordered) // 2 - 1 : len(ordered) // 2 + 1])
    )
    within = sum(1 for x in t if x <= SCALE_OUT_TARGET_S)
    return CriterionScore(
        criterion="elasticity",
        score=elasticity_score(t),
        evidence=(
            f"{len(t)} scale-out(s), median {median:g} s, worst {ordered[-1]:g} s, "
            f"{within}/{len(t)} within 5 min ({provider.scale_out_source})"
        ),
    )


def _egress_rate(provider: Provider, rule: BillingRule, dest: str) -> tuple[float, str]:
    stated = dict(provider.hidden.egress_usd_per_gb)
    if dest in stated:
        return stated[dest], "vendors file"
    return rule.egress_rate(
        EgressTo(dest)
    ), f"gpurent.cloud.billing {rule.provider}: {rule.egress_source}"


def job_cost(provider: Provider, job: ReferenceJob) -> tuple[CostItem, ...] | None:
    """The reference job's cost items at this provider; None without a GPU-hour price."""
    if provider.gpu_usd_per_hour is None:
        return None
    rule = billing_rule(provider.catalog_provider)
    rule_source = f"gpurent.cloud.billing {rule.provider}"
    if provider.hidden.minimum_billing_h is not None:
        minimum_s = round(provider.hidden.minimum_billing_h * 3600)
        min_source = "vendors file (minimum billing)"
    else:
        minimum_s = rule.minimum_s
        min_source = f"{rule_source}: {rule.billing_source}"
    hours = billed_hours(job.hours * 3600.0, rule.step_s, minimum_s)
    compute = provider.gpu_usd_per_hour * job.gpus * hours
    items = [
        CostItem(
            item="compute",
            usd=compute,
            basis=f"{job.gpus} GPUs x {hours:g} h billed x ${provider.gpu_usd_per_hour:g}/GPU-h",
            source=f"price: vendors file; billing steps: {min_source}",
        )
    ]
    rate, source = _egress_rate(provider, rule, job.egress_to)
    items.append(
        CostItem(
            item=f"egress ({job.egress_to})",
            usd=job.egress_gb * rate,
            basis=f"{job.egress_gb:g} GB x ${rate:g}/GB",
            source=source,
        )
    )
    if provider.hidden.storage_usd_per_gb_month is not None:
        storage_rate, storage_source = provider.hidden.storage_usd_per_gb_month, "vendors file"
    else:
        storage_rate = rule.storage_usd_per_gb_month
        storage_source = f"{rule_source}: {rule.storage_source}"
    items.append(
        CostItem(
            item="storage",
            usd=job.storage_gb * storage_rate * job.hours / HOURS_PER_MONTH,
            basis=(
                f"{job.storage_gb:g} GB x ${storage_rate:g}/GB-month x {job.hours:g} h "
                f"/ {HOURS_PER_MONTH:g} h"
            ),
            source=storage_source,
        )
    )
    if provider.hidden.ip_usd_per_hour is not None:
        items.append(
            CostItem(
                item="public IPs",
                usd=provider.hidden.ip_usd_per_hour * job.public_ips * job.hours,
                basis=(
                    f"{job.public_ips} x {job.hours:g} h x ${provider.hidden.ip_usd_per_hour:g}/h"
                ),
                source="vendors file",
            )
        )
    else:
        items.append(
            CostItem(
                item="public IPs",
                usd=0.0,
                basis="not stated: counted as $0",
                source="not stated in the vendors file; ask the vendor",
            )
        )
    return tuple(items)


def _cost(
    providers: Sequence[Provider], job: ReferenceJob
) -> list[tuple[CriterionScore, tuple[CostItem, ...], float | None]]:
    costs = [job_cost(p, job) for p in providers]
    totals = [sum(i.usd for i in c) if c is not None else None for c in costs]
    known = [t for t in totals if t is not None]
    cheapest = min(known) if known else 0.0
    out: list[tuple[CriterionScore, tuple[CostItem, ...], float | None]] = []
    for items, total in zip(costs, totals, strict=True):
        if items is None or total is None:
            out.append(
                (
                    CriterionScore(
                        criterion="cost",
                        score=None,
                        evidence="no GPU-hour price (gpu_usd_per_hour)",
                    ),
                    (),
                    None,
                )
            )
            continue
        hidden = total - items[0].usd
        text = (
            f"${total:,.2f} for {job.gpus} GPUs x {job.hours:g} h "
            f"(hidden costs ${hidden:,.2f}, {hidden / total:.1%})"
            if total > 0
            else "$0"
        )
        out.append(
            (
                CriterionScore(criterion="cost", score=cost_score(total, cheapest), evidence=text),
                items,
                total,
            )
        )
    return out


def _support(provider: Provider) -> CriterionScore:
    s = provider.support
    if s is None:
        return CriterionScore(criterion="support", score=None, evidence="no support terms")
    text = (
        f"24x7: {'yes' if s.always_24x7 else 'no'}; "
        f"GPU experts: {'yes' if s.gpu_experts else 'no'}; "
        f"response within {s.response_time_h:g} h"
    )
    return CriterionScore(
        criterion="support",
        score=support_score(s.always_24x7, s.gpu_experts, s.response_time_h),
        evidence=text,
    )


# ---------------------------------------------------------------------------- totals and ranks


def weighted_total(
    scores: Mapping[str, float | None], weights: Mapping[str, float]
) -> tuple[float, float]:
    """(total renormalised over the criteria with a score, the weight they cover)."""
    covered = sum(weights[c] for c, s in scores.items() if s is not None)
    if covered <= 0.0:
        return 0.0, 0.0
    points = sum(weights[c] * s for c, s in scores.items() if s is not None)
    return points / covered, covered


def rank_order(
    names: Sequence[str], totals: Sequence[float], covered: Sequence[float] | None = None
) -> list[int]:
    """Indices best first: higher total first, ties in the given order; vendors without
    evidence for any weighted criterion (`covered` 0) last."""
    none = [c <= 0.0 for c in covered] if covered is not None else [False] * len(names)
    return sorted(range(len(names)), key=lambda i: (none[i], -totals[i], i))


def _what_if(
    names: Sequence[str],
    score_maps: Sequence[Mapping[str, float | None]],
    weights: Mapping[str, float],
) -> tuple[MissingWhatIf, ...]:
    base_pairs = [weighted_total(s, weights) for s in score_maps]
    base = [t for t, _ in base_pairs]
    covered = [c for _, c in base_pairs]
    base_rank = {i: r + 1 for r, i in enumerate(rank_order(names, base, covered))}
    out = []
    for i, scores in enumerate(score_maps):
        missing = tuple(c for c, s in scores.items() if s is None)
        if not missing:
            continue
        results = []
        for fill in (0.0, 100.0):
            filled = {c: (fill if s is None else s) for c, s in scores.items()}
            totals = list(base)
            cover = list(covered)
            totals[i], cover[i] = weighted_total(filled, weights)
            order = rank_order(names, totals, cover)
            results.append((order.index(i) + 1, names[order[0]]))
        out.append(
            MissingWhatIf(
                vendor=names[i],
                missing=missing,
                rank=base_rank[i],
                rank_if_0=results[0][0],
                rank_if_100=results[1][0],
                top_if_0=results[0][1],
                top_if_100=results[1][1],
            )
        )
    return tuple(out)


def score_vendors(
    providers: Sequence[Provider],
    weights: Sequence[tuple[str, float]],
    job: ReferenceJob,
    *,
    weights_source: str = GUIDE_SOURCE,
    warnings: Sequence[str] = (),
) -> Scorecard:
    """The ranked scorecard of `providers` under normalised `weights` (see `resolve_weights`)."""
    w = dict(weights)
    hardware = _hardware(providers)
    cost = _cost(providers, job)
    rows = []
    for i, p in enumerate(providers):
        criteria = (hardware[i], _network(p), _elasticity(p), cost[i][0], _support(p))
        rows.append((p, criteria, cost[i][1], cost[i][2]))
    names = [p.name for p in providers]
    score_maps = [{c.criterion: c.score for c in crit} for _, crit, _, _ in rows]
    totals = [weighted_total(s, w) for s in score_maps]
    order = rank_order(names, [t for t, _ in totals], [c for _, c in totals])
    vendors = []
    for rank, i in enumerate(order, start=1):
        p, crit, items, cost_total = rows[i]
        total, covered = totals[i]
        contributions = tuple(
            Contribution(
                criterion=c.criterion,
                weight=w[c.criterion],
                effective_weight=(w[c.criterion] / covered)
                if c.score is not None and covered
                else 0.0,
                points=(w[c.criterion] / covered * c.score)
                if c.score is not None and covered
                else None,
            )
            for c in crit
        )
        vendors.append(
            VendorScore(
                name=p.name,
                rank=rank,
                total=total,
                weight_covered=covered,
                criteria=crit,
                contributions=contributions,
                cost_items=items,
                cost_total_usd=cost_total,
            )
        )
    notes = list(warnings)
    for p in providers:
        if p.catalog_provider is not None and p.catalog_provider not in BILLING_RULES:
            near = closest(p.catalog_provider, BILLING_RULES)
            hint = f" (did you mean {', '.join(near)}?)" if near else ""
            notes.append(
                f"{p.name}: catalog {p.catalog_provider!r} has no billing row{hint}; the hidden "
                "costs it does not state use gpurent's assumed rates for other providers"
            )
    return Scorecard(
        weights=tuple(weights),
        weights_source=weights_source,
        job=job,
        vendors=tuple(vendors),
        what_if=_what_if(names, score_maps, w),
        warnings=tuple(notes),
    )
