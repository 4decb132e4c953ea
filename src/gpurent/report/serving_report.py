"""A serving estimate (`estimate.serving.ServingEstimate`) as lines, a table, JSON and HTML
(with an inline SVG plot of latency against throughput). Pure: returns text and values."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from gpurent.estimate.serving import Figure, ServingEstimate, ServingPoint
from gpurent.report import charts
from gpurent.workload.serving import ServingSlo

if TYPE_CHECKING:
    from gpurent.workload.serving import ServingWorkload

CURVE_HEADERS = (
    "clients",
    "req/s",
    "output tok/s",
    "TTFT p50 ms",
    "TTFT p99 ms",
    "TPOT p50 ms",
    "TPOT p99 ms",
)
_SLO_NAMES = {
    "ttft_p50_ms": "TTFT p50",
    "ttft_p99_ms": "TTFT p99",
    "tpot_ms": "TPOT",
    "e2e_p99_s": "end-to-end p99",
    "capacity": "capacity (no SLO binds before the replica saturates)",
    "memory": "memory (the model does not fit)",
}


def _num(x: float) -> str:
    if not math.isfinite(x):
        return "inf"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.3g}"


def figure_text(f: Figure) -> str:
    """`value [low-high]`."""
    if not math.isfinite(f.value):
        return "inf"
    return f"{_num(f.value)} [{_num(f.low)}-{_num(f.high)}]"


def title(est: ServingEstimate) -> str:
    """The serving estimate's title: model, GPUs and layout, engine, weights and KV precision."""
    w, c = est.curve.workload, est.curve
    gpus = c.tensor_parallel * est.replicas
    layout = f"{est.replicas} replica(s) x {c.tensor_parallel} GPU(s)"
    label = w.name or w.model
    return (
        f"Serving {label} ({w.model}) on {gpus}x {c.gpu} ({layout}), {w.engine.value}, "
        f"weights {w.weights.value}, KV cache {c.memory.kv_precision.value}"
    )


def summary_lines(est: ServingEstimate) -> list[str]:
    """The memory, the single-request times and the SLO answer, one fact per line."""
    w, c, m = est.curve.workload, est.curve, est.curve.memory
    lines = [
        f"traffic: prompt {w.prompt.label} tokens (mean {w.prompt.mean:.0f}), output "
        f"{w.output.label} (mean {w.output.mean:.0f})"
        + (f", {w.request_rate_per_s:g} req/s asked" if w.request_rate_per_s else "")
        + (f", prefix-cache hits {w.prefix_cache_hit_rate:.0%}" if w.prefix_cache_hit_rate else "")
        + (
            f", speculative decoding {w.speculation.tokens_per_step:.2f} tokens/step"
            if w.speculation
            else ""
        ),
        f"memory per GPU: weights {m.weights_gib:.1f} GiB, activations {m.activations_gib:.1f} "
        f"GiB, runtime {m.runtime_gib:.1f} GiB, KV cache {max(m.kv_cache_gib, 0):.1f} GiB of "
        f"{m.capacity_gib:.1f} GiB usable ({w.gpu_memory_utilization:.0%})",
        f"KV cache: {m.kv_bytes_per_token / 1024:.0f} KiB per token, {m.kv_tokens:,} tokens; "
        f"{m.kv_at_max_concurrency_gib:.1f} GiB at max concurrency {m.max_concurrency} "
        f"(limited by {m.limited_by}, {m.tokens_per_request:.0f} tokens per request)",
        f"one request alone: prefill {figure_text(c.prefill_ms)} ms, decode step "
        f"{figure_text(c.decode_step_ms)} ms",
    ]
    lines.extend(slo_lines(est))
    lines.append(f"engine constants: {c.engine_basis}")
    lines.extend(c.notes)
    return lines


def slo_bounds(slo: ServingSlo, names: tuple[str, str, str, str]) -> list[str]:
    """ "NAME <= VALUE UNIT" for each objective asked, in the order TTFT p50, TTFT p99, TPOT and
    end-to-end p99, with the `names` the caller shows for those four."""
    values = (
        (slo.ttft_p50_ms, " ms"),
        (slo.ttft_p99_ms, " ms"),
        (slo.tpot_ms, " ms"),
        (slo.e2e_p99_s, " s"),
    )
    return [
        f"{name} <= {value:g}{unit}"
        for name, (value, unit) in zip(names, values, strict=True)
        if value is not None
    ]


def slo_lines(est: ServingEstimate) -> list[str]:
    """The SLO lines: the highest load that meets what was asked, and what limits it."""
    w, load = est.curve.workload, est.load
    wanted = slo_bounds(w.slo, ("TTFT p50", "TTFT p99", "TPOT", "end-to-end p99"))
    asked = ", ".join(wanted) if wanted else "no SLO given: the highest stable load"
    binding = _SLO_NAMES.get(load.limiting, load.limiting)
    if not load.met:
        if load.limiting == "memory":
            return [f"max load ({asked}): none, the model does not fit"]
        return [
            f"max load ({asked}): none; even a single request misses {binding} by {load.miss:.2f}x"
        ]
    lines = [
        f"max load ({asked}): {figure_text(load.request_rate_per_s)} req/s on "
        f"{load.replicas} replica(s), limited by {binding}"
    ]
    if est.requested is not None and w.request_rate_per_s is not None:
        p = est.requested
        state = (
            "unstable (beyond the replicas' capacity)"
            if not p.stable
            else f"TTFT p99 {figure_text(p.ttft_p99_ms)} ms, TPOT p99 "
            f"{figure_text(p.tpot_p99_ms)} ms"
        )
        lines.append(f"at {w.request_rate_per_s:g} req/s: {state}")
    if est.requested is not None and w.concurrency is not None:
        p = est.requested
        lines.append(
            f"at {w.concurrency} clients ({p.concurrency:g} per replica): "
            f"{_num(p.request_rate_per_s.value * est.replicas)} req/s, TTFT p99 "
            f"{figure_text(p.ttft_p99_ms)} ms, TPOT p99 {figure_text(p.tpot_p99_ms)} ms"
        )
    if est.replicas_needed is not None and w.request_rate_per_s is not None:
        lines.append(
            f"replicas needed for {w.request_rate_per_s:g} req/s within the SLOs: "
            f"{est.replicas_needed}"
        )
    return lines


def curve_rows(est: ServingEstimate) -> list[tuple[str, ...]]:
    """Point values; `interval_caption` gives the intervals' multipliers."""
    return [
        (
            f"{p.concurrency:g}",
            _num(p.request_rate_per_s.value),
            _num(p.output_tokens_per_s.value),
            _num(p.ttft_p50_ms.value),
            _num(p.ttft_p99_ms.value),
            _num(p.tpot_p50_ms.value),
            _num(p.tpot_p99_ms.value),
        )
        for p in est.curve.rows
    ]


def _span(f: Figure) -> str:
    if not math.isfinite(f.value) or f.value <= 0:
        return "-"
    return f"x{f.low / f.value:.2f}-{f.high / f.value:.2f}"


def interval_caption(est: ServingEstimate) -> str:
    """The 80 % intervals of the curve's figures, as multipliers of the values."""
    if not est.curve.rows:
        return ""
    p = est.curve.rows[0]
    return (
        f"80 % intervals: throughput {_span(p.output_tokens_per_s)}, TTFT "
        f"{_span(p.ttft_p99_ms)}, TPOT {_span(p.tpot_p99_ms)}"
    )


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _figure_json(f: Figure) -> dict[str, float | None]:
    return {"value": _finite(f.value), "low": _finite(f.low), "high": _finite(f.high)}


def _point_json(p: ServingPoint) -> dict[str, Any]:
    out: dict[str, Any] = {"concurrency": _finite(p.concurrency), "batch": p.batch}
    out["stable"] = p.stable
    for name in (
        "request_rate_per_s",
        "output_tokens_per_s",
        "ttft_mean_ms",
        "ttft_p50_ms",
        "ttft_p99_ms",
        "tpot_p50_ms",
        "tpot_p99_ms",
        "e2e_p99_s",
    ):
        out[name] = _figure_json(getattr(p, name))
    return out


def serving_json(est: ServingEstimate) -> dict[str, Any]:
    """The estimate as plain JSON values (every figure {value, low, high}; inf as null)."""
    w, c, m = est.curve.workload, est.curve, est.curve.memory
    return {
        "workload": {
            "name": w.name,
            "model": w.model,
            "engine": w.engine.value,
            "weights": w.weights.value,
            "kv_cache": m.kv_precision.value,
            "prompt_tokens": {"label": w.prompt.label, "mean": w.prompt.mean},
            "output_tokens": {"label": w.output.label, "mean": w.output.mean},
            "request_rate_per_s": w.request_rate_per_s,
            "concurrency": w.concurrency,
            "slo": {
                "ttft_p50_ms": w.slo.ttft_p50_ms,
                "ttft_p99_ms": w.slo.ttft_p99_ms,
                "tpot_ms": w.slo.tpot_ms,
                "e2e_p99_s": w.slo.e2e_p99_s,
            },
            "prefix_cache_hit_rate": w.prefix_cache_hit_rate,
            "speculative_tokens_per_step": (
                w.speculation.tokens_per_step if w.speculation else None
            ),
        },
        "gpu": c.gpu,
        "tensor_parallel": c.tensor_parallel,
        "replicas": est.replicas,
        "memory": {
            "capacity_gib": m.capacity_gib,
            "weights_gib": m.weights_gib,
            "activations_gib": m.activations_gib,
            "runtime_gib": m.runtime_gib,
            "kv_cache_gib": m.kv_cache_gib,
            "kv_bytes_per_token": m.kv_bytes_per_token,
            "kv_tokens": m.kv_tokens,
            "kv_at_max_concurrency_gib": m.kv_at_max_concurrency_gib,
            "max_concurrency": m.max_concurrency,
            "limited_by": m.limited_by,
        },
        "prefill_ms": _figure_json(c.prefill_ms),
        "decode_step_ms": _figure_json(c.decode_step_ms),
        "curve": [_point_json(p) for p in c.rows],
        "max_load": {
            "met": est.load.met,
            "request_rate_per_s": _figure_json(est.load.request_rate_per_s),
            "per_replica_rate_per_s": est.load.per_replica_rate_per_s,
            "limiting": est.load.limiting,
            "miss": _finite(est.load.miss),
            "at": _point_json(est.load.at),
        },
        "requested": None if est.requested is None else _point_json(est.requested),
        "replicas_needed": est.replicas_needed,
        "engine_basis": c.engine_basis,
        "notes": list(c.notes),
    }


_PLOTS = (("TTFT p99 (ms)", "ttft_p99_ms"), ("TPOT p99 (ms)", "tpot_p99_ms"))


def serving_html(est: ServingEstimate) -> str:
    """One page (report/templates/serving.html.j2): the summary, the curve table and two
    plots of latency against output throughput, one point per concurrency with its 80 %
    intervals, joined in order."""
    from markupsafe import Markup

    from gpurent.report.html import render_page

    figures = []
    for name, attr in _PLOTS:
        points = [
            charts.Point(
                x=p.output_tokens_per_s.value,
                y=getattr(p, attr).value,
                x_low=p.output_tokens_per_s.low,
                x_high=p.output_tokens_per_s.high,
                y_low=getattr(p, attr).low,
                y_high=getattr(p, attr).high,
                label=f"{p.concurrency:g} clients: {_num(p.output_tokens_per_s.value)} tok/s, "
                f"{name} {_num(getattr(p, attr).value)}",
                highlight=True,
            )
            for p in est.curve.rows
            if p.stable
            and math.isfinite(getattr(p, attr).value)
            and p.output_tokens_per_s.value > 0
        ]
        chart = charts.scatter(points, x_label="output tokens/s", y_label=name)
        figures.append((f"{name} vs output throughput (one replica)", Markup(chart)))
    return render_page(
        "serving.html.j2",
        title=title(est),
        kind="estimate --serve",
        provenance=f"serving model constants: {est.curve.engine_basis}",
        heading=title(est),
        lines=summary_lines(est),
        headers=CURVE_HEADERS,
        rows=curve_rows(est),
        caption=interval_caption(est),
        figures=figures,
    )


__all__ = [
    "CURVE_HEADERS",
    "curve_rows",
    "figure_text",
    "interval_caption",
    "serving_html",
    "serving_json",
    "slo_lines",
    "summary_lines",
    "title",
]


def unmet_line(est: ServingEstimate, wl: ServingWorkload, gpus: int, tp: int) -> str:
    """One line for an estimate whose model does not fit or whose SLOs no load meets."""
    why = (
        "does not fit in GPU memory"
        if est.load.limiting == "memory"
        else (f"misses {est.load.limiting} by {est.load.miss:.2f}x even at a vanishing load")
    )
    return (
        f"{wl.name or wl.model} on {gpus}x {est.curve.gpu} (tp {tp}): {why}; try more GPUs "
        "per replica, a faster GPU or a narrower quantization"
    )
