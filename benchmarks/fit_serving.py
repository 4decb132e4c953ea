"""Fit the serving model's per-engine efficiencies on the public serving measurements and write
them, with the fit's provenance, to src/gpurent/estimate/data/serving_constants.json.

    PYTHONPATH=src python benchmarks/fit_serving.py [--check]

Rows: benchmarks/data/serving/measurements.csv (sources in sources.csv). The held-out share
(`serving_rows.HOLD_EVERY`, seeded hash) is never used here; `bench_serving_accuracy.py`
scores it.

Per engine four constants: prefill compute efficiency, decode bandwidth efficiency, per-step
overhead and per-request overhead, minimising the mean squared log-residual over that engine's
fit rows (TTFT under load, more than 4 clients, is scored but not fitted) plus a prior pulling
each constant towards vLLM's (weight `PRIOR`; vLLM itself towards the assumed starting
values), so an engine with a handful of rows moves only as far as its rows say; then the two
constants every engine shares (the tensor-parallel all-reduce extra and the per-layer prefill
time) on every fit row, then the engines again; then a factor per server benchmark (source
with closed-loop or Poisson TTFT rows) on every engine's per-request overhead, pulled towards
1 by `PRIOR` and centred (geometric mean 1), and the engines once more beside those factors:
a source's own client, network and host cost no longer bends the engines' constants, which
become the typical source's. Predictions and every score run at factor 1. The optimiser is
a coordinate search in log space (no SciPy: the base install stays light). The interval: the
10th and 90th percentiles of the fit rows' log-residuals (TPOT, TTFT and throughput apart),
widened x `WIDEN` about their centre (few rows, several sources).
`--check` refits and fails if the written file differs (CI keeps the constants reproducible).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from serving_rows import HOLD_EVERY, SPLIT_SEED, Row, load_rows, log_residuals

from gpurent.estimate.constants import load_constants
from gpurent.estimate.serving import EngineCoeffs, ServingConstants, parse_serving_constants
from gpurent.workload.serving import Engine, WeightQuant

OUT = Path(__file__).resolve().parents[1] / "src" / "gpurent" / "estimate" / "data"
OUT_FILE = OUT / "serving_constants.json"
PRIOR = 0.02  # weight of a squared log-distance to the prior, per constant
WIDEN = 1.5
PARAMS = (
    "prefill_efficiency",
    "decode_bw_efficiency",
    "step_overhead_s",
    "request_overhead_s",
    "first_token_s",
)
BOUNDS = {
    "prefill_efficiency": (0.1, 1.0),
    "decode_bw_efficiency": (0.3, 1.0),
    "step_overhead_s": (1e-5, 0.05),
    "request_overhead_s": (1e-4, 1.0),
    "first_token_s": (1e-5, 0.1),
    "tp_allreduce_extra_s": (1e-7, 1e-3),
    "prefill_layer_s": (1e-7, 1e-3),
    "prefill_half_tokens": (1.0, 20000.0),
    "low_precision_factor": (0.3, 1.5),
    "request_factor": (0.05, 20.0),
}
SHARED_START = {
    "tp_allreduce_extra_s": 10e-6,
    "prefill_layer_s": 20e-6,
    "prefill_half_tokens": 100.0,
    "low_precision_factor": 1.0,
}
START = {
    "prefill_efficiency": 0.55,
    "decode_bw_efficiency": 0.8,
    "step_overhead_s": 0.0015,
    "request_overhead_s": 0.02,
    "first_token_s": 0.002,
}
# weight-only dequant factors and the runtime's own memory: assumed (no public measurement
# isolates them in these rows); stated in docs/serving.md
DEQUANT = {WeightQuant.INT8: 1.15, WeightQuant.AWQ_INT4: 1.3, WeightQuant.GPTQ_INT4: 1.3}
RUNTIME_GIB = 1.5
COMM = load_constants().comm  # the estimator's link coefficients, as the package reads them


def _constants(
    engines: Mapping[Engine, Mapping[str, float]],
    basis: Mapping[Engine, str],
    tp_allreduce_extra_s: float,
    prefill_layer_s: float,
    prefill_half_tokens: float,
    low_precision_factor: float,
) -> ServingConstants:
    return ServingConstants(
        engines={
            e: EngineCoeffs(
                prefill_efficiency=p["prefill_efficiency"],
                decode_bw_efficiency=p["decode_bw_efficiency"],
                step_overhead_s=p["step_overhead_s"],
                request_overhead_s=p["request_overhead_s"],
                first_token_s=p["first_token_s"],
                basis=basis[e],
            )
            for e, p in engines.items()
        },
        dequant_factor=DEQUANT,
        runtime_overhead_gib=RUNTIME_GIB,
        tp_allreduce_extra_s=tp_allreduce_extra_s,
        prefill_layer_s=prefill_layer_s,
        prefill_half_tokens=prefill_half_tokens,
        low_precision_factor=low_precision_factor,
        comm=COMM,
        latency_log_interval=(0.0, 0.0),
        ttft_log_interval=(0.0, 0.0),
        throughput_log_interval=(0.0, 0.0),
    )


def _objective(
    rows: list[Row],
    engine: Engine,
    params: dict[str, float],
    base: dict[Engine, dict[str, float]],
    prior: Mapping[str, float],
    shared: Mapping[str, float],
    factors: Mapping[str, float],
) -> float:
    engines = {**base, engine: params}
    k = _constants(engines, dict.fromkeys(engines, ""), **shared)
    res = [r for _, r in _residuals(rows, k, factors)]
    loss = sum(r * r for r in res) / max(len(res), 1)
    loss += PRIOR * sum(math.log(params[p] / prior[p]) ** 2 for p in PARAMS)
    return loss


def _with_request_factor(k: ServingConstants, factor: float) -> ServingConstants:
    if factor == 1.0:
        return k
    engines = {
        e: replace(c, request_overhead_s=c.request_overhead_s * factor)
        for e, c in k.engines.items()
    }
    return replace(k, engines=engines)


def _residuals(
    rows: list[Row], k: ServingConstants, factors: Mapping[str, float]
) -> list[tuple[Row, float]]:
    """log_residuals, each source's rows at its own per-request overhead factor (the fit's
    source-level offset: the client, network and host a benchmark ran on); a source without
    a factor, and every prediction the package makes, at 1."""
    by_source: dict[str, list[Row]] = {}
    for row in rows:
        by_source.setdefault(row.source, []).append(row)
    out: list[tuple[Row, float]] = []
    for source, mine in by_source.items():
        out.extend(log_residuals(mine, _with_request_factor(k, factors.get(source, 1.0))))
    return out


def _source_factors(rows: list[Row], k: ServingConstants) -> dict[str, float]:
    """Per source with server TTFT rows (closed loop or Poisson): the factor on every
    engine's per-request overhead that fits its rows best, pulled towards 1 by `PRIOR`; then
    scaled so their geometric mean is 1 (the engines' overheads take the common part)."""
    server = sorted(
        {r.source for r in rows if r.metric.startswith("ttft") and r.mode in ("closed", "poisson")}
    )
    factors: dict[str, float] = {}
    for source in server:
        mine = [r for r in rows if r.source == source]

        def loss(x: dict[str, float], mine: list[Row] = mine) -> float:
            f = x["request_factor"]
            res = [r for _, r in log_residuals(mine, _with_request_factor(k, f))]
            return sum(r * r for r in res) / len(res) + PRIOR * math.log(f) ** 2

        factors[source] = _coordinate_search(loss, {"request_factor": 1.0}, ("request_factor",))[
            "request_factor"
        ]
    return factors


def _coordinate_search(
    f: Callable[[dict[str, float]], float],
    start: dict[str, float],
    names: tuple[str, ...] = PARAMS,
) -> dict[str, float]:
    x = dict(start)
    best = f(x)
    step = math.log(2.0)
    while step > 0.01:
        improved = False
        for p in names:
            lo, hi = BOUNDS[p]
            for direction in (1.0, -1.0):
                trial = dict(x)
                trial[p] = min(hi, max(lo, x[p] * math.exp(direction * step)))
                if trial[p] == x[p]:
                    continue
                val = f(trial)
                if val < best - 1e-12:
                    x, best, improved = trial, val, True
                    break
        if not improved:
            step /= 2.0
    return x


def fit(
    rows: list[Row], held: Callable[[Row], bool] | None = None
) -> tuple[ServingConstants, dict[str, object]]:
    """Fit on the rows `held` leaves in (default: every row but the seeded held-out share;
    `cv_serving.py` passes a source's rows)."""
    out = held or (lambda r: r.held_out)
    train = [r for r in rows if not out(r)]
    # TTFT under load is scored, not fitted: it is the queueing approximation's figure, and
    # its large, load-amplified residuals would bend the device efficiencies
    fit_rows = [r for r in train if r.kind != "ttft-under-load"]
    by_engine = {e: [r for r in fit_rows if r.engine == e.value] for e in Engine}
    params: dict[Engine, dict[str, float]] = {e: dict(START) for e in Engine}
    basis: dict[Engine, str] = {}
    order = [Engine.VLLM] + [e for e in Engine if e is not Engine.VLLM]
    shared = dict(SHARED_START)
    factors: dict[str, float] = {}

    def fit_engines() -> None:
        for e in order:
            mine = by_engine[e]
            prior = START if e is Engine.VLLM else params[Engine.VLLM]
            if not mine:
                params[e] = dict(params[Engine.VLLM])
                basis[e] = "assumed: vLLM's constants (no public measurement in the fit set)"
                continue
            params[e] = _coordinate_search(
                lambda x, e=e, mine=mine, prior=prior: _objective(
                    mine, e, x, params, prior, shared, factors
                ),
                dict(params[e] if e in basis else prior),
            )
            sources = sorted({r.source for r in mine})
            basis[e] = f"fitted on {len(mine)} rows ({', '.join(sources)})"

    # engines, then the constants every engine shares (the all-reduce extra, the per-layer
    # prefill time) on every fit row, then the engines again
    fit_engines()

    def shared_loss(x: dict[str, float]) -> float:
        k = _constants(params, basis, **x)
        res = [r for _, r in _residuals(fit_rows, k, factors)]
        return sum(r * r for r in res) / max(len(res), 1)

    shared = _coordinate_search(shared_loss, shared, tuple(SHARED_START))
    fit_engines()
    # the source-level offset: each server benchmark's own per-request cost (its client,
    # network, host CPU), a factor per source on every engine's overhead; the engines keep the
    # typical source's overhead (the factors' geometric mean 1) and are refitted beside them.
    # Only the fit sees the factors: a prediction (and the score) is at factor 1
    factors.update(_source_factors(fit_rows, _constants(params, basis, **shared)))
    centre = math.exp(statistics.fmean(math.log(f) for f in factors.values())) if factors else 1.0
    for p in params.values():
        p["request_overhead_s"] *= centre
    for source in factors:
        factors[source] /= centre
    fit_engines()
    k = _constants(params, basis, **shared)
    res = log_residuals(train, k)
    lat = sorted(r for row, r in res if row.kind == "decode")
    ttft = sorted(r for row, r in res if row.kind in ("prefill", "ttft-under-load"))
    thr = sorted(r for row, r in res if row.kind == "throughput")
    k = replace(
        k,
        latency_log_interval=_interval(lat),
        ttft_log_interval=_interval(ttft),
        throughput_log_interval=_interval(thr),
    )
    provenance: dict[str, object] = {
        "script": "benchmarks/fit_serving.py",
        "data": "benchmarks/data/serving/measurements.csv (sources.csv)",
        "rows": len(rows),
        "fit_rows": len(train),
        "held_out": (
            f"sha256('{SPLIT_SEED}|key') % {HOLD_EVERY} == 0: {len(rows) - len(train)} rows"
        ),
        "interval": (
            f"10th/90th percentile of fit log-residuals, widened x{WIDEN}: latency from the "
            "TPOT rows, ttft from every TTFT row, throughput from the throughput rows"
        ),
        "source_request_factors": {s: round(f, 3) for s, f in sorted(factors.items())},
        "assumed": "dequant factors (int8 1.15, int4 1.3) and runtime memory 1.5 GiB",
    }
    return k, provenance


def _interval(sorted_res: list[float]) -> tuple[float, float]:
    if len(sorted_res) < 5:
        return (-0.3, 0.3)
    q = statistics.quantiles(sorted_res, n=10)
    lo, hi = q[0], q[-1]
    centre, half = (lo + hi) / 2.0, (hi - lo) / 2.0
    return (round(min(0.0, centre - half * WIDEN), 4), round(max(0.0, centre + half * WIDEN), 4))


def to_json(k: ServingConstants, provenance: Mapping[str, object]) -> str:
    doc = {
        "provenance": dict(provenance),
        "engines": {
            e.value: {
                "prefill_efficiency": round(c.prefill_efficiency, 4),
                "decode_bw_efficiency": round(c.decode_bw_efficiency, 4),
                "step_overhead_s": round(c.step_overhead_s, 6),
                "request_overhead_s": round(c.request_overhead_s, 5),
                "first_token_s": round(c.first_token_s, 6),
                "basis": c.basis,
            }
            for e, c in k.engines.items()
        },
        "dequant_factor": {q.value: f for q, f in k.dequant_factor.items()},
        "runtime_overhead_gib": k.runtime_overhead_gib,
        "tp_allreduce_extra_s": round(k.tp_allreduce_extra_s, 8),
        "prefill_layer_s": round(k.prefill_layer_s, 8),
        "prefill_half_tokens": round(k.prefill_half_tokens, 1),
        "low_precision_factor": round(k.low_precision_factor, 4),
        "intervals": {
            "latency": list(k.latency_log_interval),
            "ttft": list(k.ttft_log_interval),
            "throughput": list(k.throughput_log_interval),
        },
    }
    return json.dumps(doc, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if the written file is stale")
    args = ap.parse_args(argv)
    k, prov = fit(load_rows())
    text = to_json(k, prov)
    parse_serving_constants(json.loads(text), comm=COMM)  # what the package will read
    if args.check:
        same = OUT_FILE.read_text(encoding="utf-8") == text
        print("serving constants up to date" if same else "serving constants are stale")
        return 0 if same else 1
    OUT_FILE.write_text(text, encoding="utf-8")
    for e, c in k.engines.items():
        print(
            f"{e.value:13s} prefill {c.prefill_efficiency:.3f}  decode bw "
            f"{c.decode_bw_efficiency:.3f}  step {c.step_overhead_s * 1e3:.2f} ms  request "
            f"{c.request_overhead_s * 1e3:.1f} ms  first token {c.first_token_s * 1e3:.2f} ms  "
            f"({c.basis})"
        )
    print(
        f"tensor-parallel all-reduce extra: {k.tp_allreduce_extra_s * 1e6:.1f} us; prefill "
        f"per layer and chunk: {k.prefill_layer_s * 1e6:.1f} us; prefill at half efficiency "
        f"at {k.prefill_half_tokens:.0f} tokens per step; fp8/fp4 matmuls at "
        f"{k.low_precision_factor:.2f} of the 16-bit efficiency"
    )
    print(
        f"intervals: latency {k.latency_log_interval}, ttft {k.ttft_log_interval}, "
        f"throughput {k.throughput_log_interval}"
    )
    factors = prov.get("source_request_factors", {})
    if isinstance(factors, dict) and factors:
        listed = ", ".join(f"{s} {f:.2f}" for s, f in factors.items())
        print(f"per-request overhead factor per source (fit only; predictions at 1): {listed}")
    print(f"wrote {OUT_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
