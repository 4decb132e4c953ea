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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpurent.cloud.billing import BILLING_RULES
from gpurent.errors import closest
from gpurent.vendors.costs import CostItem, job_cost
from gpurent.vendors.evidence import BenchEvidence
from gpurent.vendors.file import Provider, ReferenceJob
from gpurent.vendors.normalise import (
    SCALE_OUT_TARGET_S,
    compliance_score,
    cost_score,
    elasticity_score,
    hardware_fraction_score,
    latency_score,
    support_score,
)
from gpurent.vendors.weights import GUIDE_SOURCE

HARDWARE_BENCHMARKS = ("matmul", "membw", "hostdev", "allreduce")


# ---------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True, kw_only=True)
class CriterionScore:
    """One criterion's score (0-100, None if missing) and the evidence behind it."""

    criterion: str
    score: float | None  # 0-100; None: missing evidence
    evidence: str  # the raw evidence in one line, or why it is missing
    details: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Contribution:
    """One criterion's weight and its points in a vendor's total."""

    criterion: str
    weight: float  # the configured weight
    effective_weight: float  # renormalised over the vendor's criteria with evidence; 0 if missing
    points: float | None  # effective weight x score; None when missing


@dataclass(frozen=True, slots=True, kw_only=True)
class VendorScore:
    """One vendor's rank, total (0-100), scores per criterion and reference job cost."""

    name: str
    rank: int  # 1 = best
    total: float  # 0-100, renormalised over the criteria with evidence
    weight_covered: float  # sum of the weights of the criteria with evidence
    criteria: tuple[CriterionScore, ...]
    contributions: tuple[Contribution, ...]
    cost_items: tuple[CostItem, ...]
    cost_total_usd: float | None

    def score(self, criterion: str) -> float | None:
        """The vendor's score on criterion, or None if missing."""
        return next(c.score for c in self.criteria if c.criterion == criterion)

    @property
    def missing(self) -> tuple[str, ...]:
        """The criteria the vendor has no evidence for."""
        return tuple(c.criterion for c in self.criteria if c.score is None)


@dataclass(frozen=True, slots=True, kw_only=True)
class MissingWhatIf:
    """How a vendor's rank, and the top choice, would move if its missing scores were 0 or 100."""

    vendor: str
    missing: tuple[str, ...]
    rank: int
    rank_if_0: int
    rank_if_100: int
    top_if_0: str
    top_if_100: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Scorecard:
    """The scorecard: weights, reference job, vendors best first and what-if notes."""

    weights: tuple[tuple[str, float], ...]
    weights_source: str
    job: ReferenceJob
    vendors: tuple[VendorScore, ...]  # best first
    what_if: tuple[MissingWhatIf, ...]
    warnings: tuple[str, ...]

    @property
    def top(self) -> str:
        """Name of the best vendor."""
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
