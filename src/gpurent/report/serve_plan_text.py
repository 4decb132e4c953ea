"""`gpurent plan --serve` as text: the ranked table's rows (shared by the terminal, Markdown,
CSV and HTML renderings), the explanation lines and the schedule."""

from __future__ import annotations

import csv
import io

from gpurent.plan.serving import ServeCandidate, ServePlan
from gpurent.report.serving_report import slo_bounds

HEADERS = (
    "#",
    "offer",
    "pricing",
    "replicas x GPUs",
    "instances",
    "load/replica req/s",
    "limit",
    "p99 TTFT ms",
    "$/h",
    "$/month",
    "$/1M out tok",
)

CSV_COLUMNS = (
    "rank",
    "provider",
    "instance_type",
    "region",
    "gpu_name",
    "gpus_per_instance",
    "pricing",
    "price_usd_per_hour",
    "tensor_parallel",
    "replicas",
    "replicas_low",
    "replicas_high",
    "instances",
    "num_gpus",
    "load_per_replica_per_s",
    "load_low_per_s",
    "load_high_per_s",
    "limiting",
    "ttft_p99_ms",
    "tpot_p99_ms",
    "cost_usd_per_hour",
    "cost_usd_per_month",
    "cost_low_usd_per_month",
    "cost_high_usd_per_month",
    "cost_per_million_output_tokens_usd",
    "as_of",
)


def _usd(x: float) -> str:
    return f"{x:,.2f}" if x < 1000 else f"{x:,.0f}"


def row(c: ServeCandidate) -> tuple[str, ...]:
    """The serving candidate's row of the plan table."""
    load = c.load_per_replica_per_s
    return (
        str(c.rank),
        f"{c.provider} {c.instance_type} ({c.region})",
        c.pricing,
        f"{c.replicas} x {c.tensor_parallel} {c.gpu_name}",
        f"{c.instances} x {c.gpus_per_instance}",
        f"{load.value:.3g} ({load.low:.3g}-{load.high:.3g})",
        c.limiting,
        f"{c.ttft_p99_ms.value:.0f}",
        _usd(c.cost_usd_per_hour),
        f"{_usd(c.cost_usd_per_month)} ({_usd(c.cost_low_usd_per_month)}-"
        f"{_usd(c.cost_high_usd_per_month)})",
        f"{c.cost_per_million_output_tokens_usd:.3f}",
    )


SHORT_HEADERS = ("#", "offer", "fleet", "req/s/replica", "p99 TTFT ms", "$/month", "$/1M tok")


def short_row(c: ServeCandidate) -> tuple[str, ...]:
    """The terminal's narrower row: offer, fleet, load, TTFT, monthly cost and its range."""
    load = c.load_per_replica_per_s
    return (
        str(c.rank),
        f"{c.provider} {c.instance_type} ({c.region})",
        f"{c.replicas} x {c.tensor_parallel} {c.gpu_name} {c.pricing} on {c.instances} inst.",
        f"{load.value:.3g} ({load.low:.3g}-{load.high:.3g})",
        f"{c.ttft_p99_ms.value:.0f}",
        f"{_usd(c.cost_usd_per_month)} ({_usd(c.cost_low_usd_per_month)}-"
        f"{_usd(c.cost_high_usd_per_month)})",
        f"{c.cost_per_million_output_tokens_usd:.3f}",
    )


def title(plan: ServePlan) -> str:
    """The serving plan's title: workload, rate, token lengths and SLOs."""
    w = plan.workload
    parts = slo_bounds(w.slo, ("TTFT p50", "TTFT p99", "TPOT p99", "e2e p99"))
    return (
        f"Serving plan: {w.name or w.model} ({w.model}, {w.weights.value}, {w.engine.value}) "
        f"at {plan.rate_per_s:g} req/s, prompts {w.prompt.label}, outputs {w.output.label}; "
        f"SLOs: {', '.join(parts) or 'none'}"
    )


def explanation_lines(plan: ServePlan) -> list[str]:
    """Why the best candidate won (or why nothing is feasible), one line each."""
    e = plan.explanation
    if e is None:
        return [plan.infeasible_line()]
    out = [e.headline, *(f"- {line}" for line in e.why), f"- {e.next_cost}"]
    if e.matrix:
        out.append(f"- {e.matrix}")
    return out


def schedule_rows(c: ServeCandidate) -> list[tuple[str, ...]]:
    """The candidate's hour-by-hour schedule rows, empty without a traffic profile."""
    if c.schedule is None:
        return []
    return [
        (
            f"{r.hour:02d}",
            f"{r.rate_per_s:.3g}",
            str(r.replicas),
            str(r.instances),
            _usd(r.cost_usd),
        )
        for r in c.schedule.hours
    ]


SCHEDULE_HEADERS = ("hour", "req/s", "replicas", "instances", "$")


def render_markdown(plan: ServePlan) -> str:
    """The serving plan as a Markdown document."""
    lines = [f"# {title(plan)}", ""]
    lines += explanation_lines(plan)
    if plan.candidates:
        lines += ["", "| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
        lines += [
            "| " + " | ".join(cell.replace("|", "/") for cell in row(c)) + " |" for c in plan.top
        ]
        best = plan.best
        if best is not None and best.schedule is not None:
            lines += ["", "## Replica schedule of the pick", ""]
            lines += ["| " + " | ".join(SCHEDULE_HEADERS) + " |", "|" + "---|" * 5]
            lines += ["| " + " | ".join(r) + " |" for r in schedule_rows(best)]
        lines += ["", "## Pareto front (cost/h vs p99 TTFT)", ""]
        lines += [
            f"- {c.label}: ${_usd(c.cost_usd_per_hour)}/h, p99 TTFT {c.ttft_p99_ms.value:.0f} ms"
            for c in plan.pareto
        ]
    lines += ["", "## Assumptions", "", *(f"- {a}" for a in plan.assumptions)]
    if plan.price_as_of:
        lines.append(f"- prices dated {', '.join(plan.price_as_of)}")
    return "\n".join(lines) + "\n"


def render_csv(plan: ServePlan) -> str:
    """The serving plan's top candidates as CSV text with a header line."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for c in plan.top:
        load = c.load_per_replica_per_s
        w.writerow(
            (
                c.rank, c.provider, c.instance_type, c.region, c.gpu_name, c.gpus_per_instance,
                c.pricing, f"{c.price_usd_per_hour:.6g}", c.tensor_parallel, c.replicas,
                c.replicas_low, c.replicas_high, c.instances, c.num_gpus, f"{load.value:.6g}",
                f"{load.low:.6g}", f"{load.high:.6g}", c.limiting, f"{c.ttft_p99_ms.value:.6g}",
                f"{c.tpot_p99_ms.value:.6g}", f"{c.cost_usd_per_hour:.6g}",
                f"{c.cost_usd_per_month:.6g}", f"{c.cost_low_usd_per_month:.6g}",
                f"{c.cost_high_usd_per_month:.6g}", f"{c.cost_per_million_output_tokens_usd:.6g}",
                c.as_of,
            )
        )  # fmt: skip
    return buf.getvalue()


def render_html(plan: ServePlan) -> str:
    """One page (report/templates/serve_plan.html.j2): the explanation, the ranked table, the
    cost per hour vs p99 TTFT chart with each candidate's 80 % intervals (the Pareto front
    joined, the pick marked) and the pick's schedule when a profile was given."""
    from markupsafe import Markup

    from gpurent.report import charts
    from gpurent.report.html import render_page

    pareto = {c.label for c in plan.pareto}
    best = plan.best
    shown = {c.label: c for c in (*plan.top, *plan.pareto)}
    points = [
        charts.Point(
            x=c.ttft_p99_ms.value,
            y=c.cost_usd_per_hour,
            x_low=c.ttft_p99_ms.low,
            x_high=c.ttft_p99_ms.high,
            y_low=c.cost_low_usd_per_hour,
            y_high=c.cost_high_usd_per_hour,
            label=f"{label}: ${_usd(c.cost_usd_per_hour)}/h, {c.ttft_p99_ms.value:.0f} ms",
            highlight=label in pareto,
            best=best is not None and label == best.label,
        )
        for label, c in shown.items()
    ]
    tables: list[tuple[str, tuple[str, ...], list[tuple[str, ...]]]] = []
    figures = []
    if plan.candidates:
        tables.append(("cheapest per month first", HEADERS, [row(c) for c in plan.top]))
        if best is not None and best.schedule is not None:
            tables.append(("replica schedule of the pick", SCHEDULE_HEADERS, schedule_rows(best)))
        chart = charts.scatter(points, x_label="p99 TTFT at the rate (ms)", y_label="USD/h")
        figures.append(("cost per hour vs p99 TTFT (Pareto front joined)", Markup(chart)))
    heading = title(plan)
    return render_page(
        "serve_plan.html.j2",
        title=heading,
        kind="plan --serve",
        provenance="prices dated " + (", ".join(plan.price_as_of) or "-"),
        heading=heading,
        lines=explanation_lines(plan),
        tables=tables,
        figures=figures,
        assumptions=list(plan.assumptions),
    )


__all__ = [
    "CSV_COLUMNS",
    "HEADERS",
    "SCHEDULE_HEADERS",
    "SHORT_HEADERS",
    "explanation_lines",
    "render_csv",
    "render_html",
    "render_markdown",
    "row",
    "schedule_rows",
    "short_row",
    "title",
]
