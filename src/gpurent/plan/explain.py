"""Explanations: why the best candidate, what limits it, what the alternatives trade, and where the
pick departs from the guide's scenario matrix. Pure text from result objects, numbers included."""

from __future__ import annotations

from collections.abc import Sequence

from gpurent.estimate.result import Bottleneck
from gpurent.plan.constraints import Objective, PricingModel, Risk
from gpurent.plan.result import Candidate, Explanation, MatrixComparison, Tradeoff
from gpurent.plan.scenarios import Scenario
from gpurent.units import format_duration, format_usd


def _pct(new: float, old: float) -> str:
    if old <= 0:
        return "n/a"
    return f"{(new - old) / old * 100:+.0f}%"


def _time_phrase(delta_s: float) -> str:
    if abs(delta_s) < 1:
        return "same time"
    return f"{format_duration(abs(delta_s))} {'slower' if delta_s > 0 else 'faster'}"


def tradeoff(alt: Candidate, best: Candidate, role: str) -> Tradeoff:
    """`alt` against `best`: cost and time differences in one line."""
    d_cost = alt.cost_usd - best.cost_usd
    d_time = alt.time_s - best.time_s
    sign = "+" if d_cost >= 0 else "-"
    summary = (
        f"{role}: {alt.gpus_label} on {alt.label} costs {format_usd(alt.cost_usd)} "
        f"({sign}{format_usd(abs(d_cost))}, {_pct(alt.cost_usd, best.cost_usd)}) and is "
        f"{_time_phrase(d_time)} ({format_duration(alt.time_s)})"
    )
    if alt.pricing is not best.pricing:
        summary += f"; {alt.pricing.value} instead of {best.pricing.value}"
    return Tradeoff(
        candidate=alt, role=role, cost_delta_usd=d_cost, time_delta_s=d_time, summary=summary
    )


def _why_p90(best: Candidate, objective: Objective, runner: Candidate | None, n: int) -> list[str]:
    """The first lines under `--risk p90`: the pick and the runner-up at the pessimistic end."""
    if objective is Objective.FASTEST:
        lines = [f"fastest at the p90 of {n} candidates: {format_duration(best.time_high_s)}"]
        if runner is not None:
            lines.append(
                f"{format_duration(runner.time_high_s - best.time_high_s)} ahead of the "
                f"runner-up at the p90 ({runner.gpus_label}, {runner.label})"
            )
        return lines
    lines = [f"cheapest at the p90 of {n} candidates: {format_usd(best.cost_high_usd)}"]
    if runner is not None:
        lines.append(
            f"{format_usd(runner.cost_high_usd - best.cost_high_usd)} cheaper at the p90 than "
            f"the runner-up ({runner.gpus_label}, {runner.label})"
        )
    return lines


def _why(
    best: Candidate,
    objective: Objective,
    runner: Candidate | None,
    n: int,
    risk: Risk = Risk.MEDIAN,
) -> list[str]:
    per_unit = f"${best.cost_per_unit_usd:.3g} per {best.cost_unit}"
    if best.cost_per_epoch_usd is not None:
        per_unit += f", ${best.cost_per_epoch_usd:.3g} per epoch"
    lines: list[str]
    if risk is Risk.P90 and objective is not Objective.THROUGHPUT_PER_DOLLAR:
        lines = _why_p90(best, objective, runner, n)
    elif objective is Objective.FASTEST:
        lines = [f"fastest of {n} candidates: {format_duration(best.time_s)}"]
    elif objective is Objective.THROUGHPUT_PER_DOLLAR:
        lines = [
            f"most work per dollar of {n} candidates: {best.work_per_usd:,.0f} "
            f"{best.work_unit} per $ ({per_unit})"
        ]
    elif objective is Objective.DEADLINE:
        lines = [f"cheapest of {n} candidates that finish within the deadline ({per_unit})"]
    else:
        lines = [f"cheapest of {n} candidates meeting the constraints ({per_unit})"]
    if runner is not None and not (
        risk is Risk.P90 and objective is not Objective.THROUGHPUT_PER_DOLLAR
    ):
        if objective is Objective.THROUGHPUT_PER_DOLLAR and runner.work_per_usd > 0:
            ratio = best.work_per_usd / runner.work_per_usd
            lines.append(
                f"{ratio:.2f}x the {best.work_unit} per dollar of the runner-up "
                f"({runner.gpus_label}, {runner.label})"
            )
        elif objective is Objective.FASTEST:
            lines.append(
                f"{format_duration(runner.time_s - best.time_s)} ahead of the runner-up "
                f"({runner.gpus_label}, {runner.label})"
            )
        else:
            lines.append(
                f"{format_usd(runner.cost_usd - best.cost_usd)} cheaper than the runner-up "
                f"({runner.gpus_label}, {runner.label})"
            )
    lines.append(
        f"layout {best.layout.label}, micro-batch {best.layout.batch_size_per_gpu}"
        + (
            f" x {best.layout.gradient_accumulation} accumulation steps"
            if best.layout.gradient_accumulation > 1
            else ""
        )
        + f"; throughput {best.throughput:,.0f} {best.throughput_unit} (80%: "
        f"{best.throughput_low:,.0f}-{best.throughput_high:,.0f})"
    )
    return lines


def _range(c: Candidate, objective: Objective) -> tuple[float, float]:
    """The candidate's 80% range on the objective's axis."""
    if objective is Objective.FASTEST:
        return c.time_low_s, c.time_high_s
    if objective is Objective.THROUGHPUT_PER_DOLLAR:
        scale = c.work_per_usd / c.throughput if c.throughput > 0 else 0.0
        return c.throughput_low * scale, c.throughput_high * scale
    return c.cost_low_usd, c.cost_high_usd


def overlap_note(top: Sequence[Candidate], objective: Objective) -> str | None:
    """When the best pick's 80% range (cost; time for fastest; work per dollar for
    throughput-per-dollar) overlaps the next picks' ranges, say the ranking between them is
    within the estimate's error (None when the runner-up's range is clear of it)."""
    if len(top) < 2:
        return None
    lo, hi = _range(top[0], objective)
    n = 1
    for c in top[1:]:
        c_lo, c_hi = _range(c, objective)
        if c_lo > hi or c_hi < lo:
            break
        n += 1
    if n < 2:
        return None
    what = {
        Objective.FASTEST: "time",
        Objective.THROUGHPUT_PER_DOLLAR: "work-per-dollar",
    }.get(objective, "cost")
    return (
        f"the top {n} picks' 80% {what} ranges overlap: the ranking between them is within "
        "the estimate's error"
    )


def _memory(best: Candidate) -> list[str]:
    m = best.memory
    parts = [
        ("weights", m.weights_gib),
        ("gradients", m.gradients_gib),
        ("optimizer", m.optimizer_gib),
        ("activations", m.activations_gib),
        ("KV cache", m.kv_cache_gib),
        ("overhead", m.overhead_gib),
    ]
    lines = [f"{name} {gib:.1f} GiB" for name, gib in parts if gib > 0.05]
    lines.append(
        f"total {m.total_gib:.1f} of {m.capacity_gib:.0f} GiB per GPU "
        f"({m.headroom_gib:.1f} GiB free, {m.total_gib / m.capacity_gib:.0%} used)"
    )
    return lines


def _limits(best: Candidate) -> list[str]:
    lines = []
    if best.bottleneck is Bottleneck.COMPUTE:
        mfu = f" at {best.mfu:.0%} model FLOPs utilisation" if best.mfu is not None else ""
        lines.append(f"compute-bound{mfu}: a faster GPU, not more memory, would speed it up")
    elif best.bottleneck is Bottleneck.MEMORY_BANDWIDTH:
        lines.append("memory-bandwidth-bound: GPUs with faster HBM help more than more TFLOP/s")
    elif best.bottleneck is Bottleneck.COMMUNICATION:
        lines.append(
            "communication-bound: gradients/activations between GPUs cost more than compute; "
            "fewer, bigger GPUs or a faster interconnect would help"
        )
    if best.num_gpus > 1:
        lines.append(f"scaling efficiency {best.scaling_efficiency:.0%} over {best.num_gpus} GPUs")
    lines.append(f"estimate basis: {best.basis}")
    return lines


def _why_gpu(best: Candidate, other: Candidate) -> str:
    """Per-GPU speed and price ratios: the reason one GPU beats another per dollar."""
    speed = (best.throughput / best.num_gpus) / max(other.throughput / other.num_gpus, 1e-12)
    price = (best.price_usd_per_hour / best.gpus_per_node) / max(
        other.price_usd_per_hour / other.gpus_per_node, 1e-12
    )
    pricing = (
        f" ({best.pricing.value} vs {other.pricing.value})"
        if best.pricing is not other.pricing
        else ""
    )
    return (
        f"why: {speed:.1f}x the {best.throughput_unit} per GPU at {price:.1f}x the price per "
        f"GPU-hour{pricing}"
    )


def compare_with_matrix(
    best: Candidate, matrix_best: Candidate | None, scenario: Scenario, objective: Objective
) -> MatrixComparison:
    """Say whether the pick is on the matrix's GPU row, and if not, what the matrix's GPU gives."""
    agrees = best.gpu_name in scenario.matrix_gpus
    head = f"the {scenario.name} matrix says {scenario.matrix_gpu_text}"
    if agrees:
        summary = f"{head}; the pick ({best.gpu_name}) agrees"
    elif matrix_best is None:
        summary = (
            f"{head}; no offer with those GPUs meets the constraints, so the plan picks "
            f"{best.gpu_name}"
        )
    elif objective is Objective.THROUGHPUT_PER_DOLLAR and matrix_best.work_per_usd > 0:
        ratio = best.work_per_usd / matrix_best.work_per_usd
        summary = (
            f"{head}; {best.gpu_name} does this job at {ratio:.1f}x the {best.work_unit} per "
            f"dollar of the best {matrix_best.gpu_name} offer "
            f"({best.work_per_usd:,.0f} vs {matrix_best.work_per_usd:,.0f} per $)"
        )
    elif objective is Objective.FASTEST:
        summary = (
            f"{head}; {best.gpu_name} finishes in {format_duration(best.time_s)} vs "
            f"{format_duration(matrix_best.time_s)} on the fastest {matrix_best.gpu_name} offer"
        )
    else:
        summary = (
            f"{head}; {best.gpu_name} costs {format_usd(best.cost_usd)} to finish vs "
            f"{format_usd(matrix_best.cost_usd)} on the best {matrix_best.gpu_name} offer "
            f"({_pct(best.cost_usd, matrix_best.cost_usd)}), taking "
            f"{format_duration(best.time_s)} vs {format_duration(matrix_best.time_s)}"
        )
    if not agrees and matrix_best is not None:
        summary += "; " + _why_gpu(best, matrix_best)
    return MatrixComparison(
        scenario=scenario.name,
        matrix_gpus=scenario.matrix_gpus,
        matrix_best=matrix_best,
        agrees=agrees,
        summary=summary,
    )


def explain(
    best: Candidate,
    *,
    objective: Objective,
    runner_up: Candidate | None,
    fastest: Candidate | None,
    cheapest: Candidate | None,
    nearly_as_cheap: Candidate | None = None,
    best_on_demand: Candidate | None,
    feasible_count: int,
    matrix: MatrixComparison | None,
    top: Sequence[Candidate] = (),
    risk: Risk = Risk.MEDIAN,
) -> Explanation:
    """The explanation panel for `best` (see the module doc); `top`: the ranked picks, whose
    overlapping 80% ranges the explanation names (`overlap_note`)."""
    alternatives: list[Tradeoff] = []
    seen = {(best.label, best.nodes)}
    for alt, role in (
        (runner_up, "runner-up"),
        (nearly_as_cheap, "faster for <= 5% more"),
        (fastest, "fastest"),
        (cheapest, "cheapest"),
        (best_on_demand if best.pricing is PricingModel.SPOT else None, "best on-demand"),
    ):
        if alt is None or (alt.label, alt.nodes) in seen:
            continue
        seen.add((alt.label, alt.nodes))
        alternatives.append(tradeoff(alt, best, role))
    headline = (
        f"Rent {best.gpus_label} as {best.label}: {format_duration(best.time_s)}, "
        f"{format_usd(best.cost_usd)} to finish"
    )
    why = _why(best, objective, runner_up, feasible_count, risk)
    note = overlap_note(top, objective)
    if note is not None:
        why.append(note)
    return Explanation(
        headline=headline,
        why=tuple(why),
        memory=tuple(_memory(best)),
        limits=tuple(_limits(best)),
        risks=best.notes,
        alternatives=tuple(alternatives),
        matrix=matrix,
    )
