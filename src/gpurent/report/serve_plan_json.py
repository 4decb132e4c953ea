"""The `gpurent plan --serve --json` document (kind "serve-plan", schema version 1; see
docs/serving-plan.md). Built field by field, as the training plan's, so that renaming an
internal field cannot change the public format; floats that are not finite are null."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from gpurent.catalog.freshness import age_days
from gpurent.estimate.serving import Figure
from gpurent.estimate.uncertainty import COVERAGE
from gpurent.plan.serving import KIND, Closest, ServeCandidate, ServePlan

SCHEMA_VERSION = "1"


def _num(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return float(value)


def _figure(f: Figure) -> dict[str, float | None]:
    return {"value": _num(f.value), "low": _num(f.low), "high": _num(f.high)}


def candidate_to_dict(c: ServeCandidate, now: datetime | None = None) -> dict[str, Any]:
    """The serving candidate as a JSON-ready dict."""
    spot = None
    if c.spot is not None:
        s = c.spot
        spot = {
            "interruptions_per_hour": _num(s.interruptions_per_hour),
            "restart_s": _num(s.restart_s),
            "down_share": _num(s.down_share),
            "replicas_needed": s.replicas_needed,
            "replicas": s.replicas,
            "source": s.source,
        }
    schedule = None
    if c.schedule is not None:
        sch = c.schedule
        schedule = {
            "hours": [
                {
                    "hour": r.hour,
                    "rate_per_s": _num(r.rate_per_s),
                    "replicas": r.replicas,
                    "instances": r.instances,
                    "cost_usd": _num(r.cost_usd),
                }
                for r in sch.hours
            ],
            "cost_usd_per_day": _num(sch.cost_usd_per_day),
            "cost_usd_per_month": _num(sch.cost_usd_per_month),
            "peak_instances": sch.peak_instances,
            "gpu_hours_free_per_day": _num(sch.gpu_hours_free_per_day),
            "free_hours": list(sch.free_hours),
        }
    return {
        "rank": c.rank,
        "provider": c.provider,
        "instance_type": c.instance_type,
        "region": c.region,
        "also_in_regions": list(c.also_in_regions),
        "gpu_name": c.gpu_name,
        "gpus_per_instance": c.gpus_per_instance,
        "gpu_memory_gib": _num(c.gpu_memory_gib),
        "pricing": c.pricing,
        "price_usd_per_hour": _num(c.price_usd_per_hour),
        "tensor_parallel": c.tensor_parallel,
        "replicas_per_instance": c.replicas_per_instance,
        "replicas": c.replicas,
        "instances": c.instances,
        "num_gpus": c.num_gpus,
        "load_per_replica_per_s": _figure(c.load_per_replica_per_s),
        "limiting": c.limiting,
        "max_concurrency": c.max_concurrency,
        "concurrency_limited_by": c.concurrency_limited_by,
        "at_rate": {
            "ttft_p99_ms": _figure(c.ttft_p99_ms),
            "tpot_p99_ms": _figure(c.tpot_p99_ms),
            "e2e_p99_s": _figure(c.e2e_p99_s),
        },
        "cost_usd_per_hour": _num(c.cost_usd_per_hour),
        "cost_usd_per_month": _num(c.cost_usd_per_month),
        "cost_per_million_output_tokens_usd": _num(c.cost_per_million_output_tokens_usd),
        "interval": {
            "coverage": COVERAGE,
            "replicas_low": c.replicas_low,
            "replicas_high": c.replicas_high,
            "cost_low_usd_per_hour": _num(c.cost_low_usd_per_hour),
            "cost_high_usd_per_hour": _num(c.cost_high_usd_per_hour),
            "cost_low_usd_per_month": _num(c.cost_low_usd_per_month),
            "cost_high_usd_per_month": _num(c.cost_high_usd_per_month),
        },
        "spot": spot,
        "schedule": schedule,
        "as_of": c.as_of,
        "price_age_days": age_days(c.as_of, now) if now is not None else None,
        "price_source": c.source,
    }


def _closest(c: Closest | None) -> dict[str, Any] | None:
    if c is None:
        return None
    return {
        "gpu_name": c.gpu_name,
        "tensor_parallel": c.tensor_parallel,
        "limiting": c.limiting,
        "miss": _num(c.miss),
        "value": _num(c.value),
        "target": _num(c.target),
    }


def serve_plan_to_dict(plan: ServePlan, now: datetime | None = None) -> dict[str, Any]:
    """The plan as the stable JSON document; `now` (the CLI's clock) dates the prices."""
    w = plan.workload
    slo = w.slo
    opts = plan.options
    e = plan.explanation
    return {
        "kind": KIND,
        "schema_version": SCHEMA_VERSION,
        "workload": {
            "name": w.name,
            "model": w.model,
            "engine": w.engine.value,
            "weights": w.weights.value,
            "kv_cache": w.kv_cache.value if w.kv_cache is not None else None,
            "request_rate_per_s": _num(plan.rate_per_s),
            "prompt_tokens": w.prompt.label,
            "prompt_tokens_mean": _num(w.prompt.mean),
            "output_tokens": w.output.label,
            "output_tokens_mean": _num(w.output.mean),
            "slo": {
                "ttft_p50_ms": _num(slo.ttft_p50_ms),
                "ttft_p99_ms": _num(slo.ttft_p99_ms),
                "tpot_ms": _num(slo.tpot_ms),
                "e2e_p99_s": _num(slo.e2e_p99_s),
            },
        },
        "options": {
            "headroom": _num(opts.headroom),
            "spot": opts.spot,
            "traffic_profile": (
                [_num(x) for x in opts.profile.rates_per_s] if opts.profile is not None else None
            ),
            "traffic_profile_source": opts.profile.source if opts.profile is not None else None,
            "min_replicas": opts.min_replicas,
        },
        "feasible": plan.feasible,
        "infeasible_reason": None if plan.feasible else plan.infeasible_line(),
        "closest": _closest(plan.closest),
        "best": candidate_to_dict(plan.best, now) if plan.best else None,
        "candidates": [candidate_to_dict(c, now) for c in plan.top],
        "pareto": [candidate_to_dict(c, now) for c in plan.pareto],
        "explanation": (
            {
                "headline": e.headline,
                "why": list(e.why),
                "next": e.next_cost,
                "matrix": e.matrix or None,
            }
            if e is not None
            else None
        ),
        "stats": {
            "offers_considered": plan.offers_considered,
            "configurations": plan.configurations,
            "candidates": len(plan.candidates),
        },
        "price_as_of": list(plan.price_as_of),
        "assumptions": list(plan.assumptions),
    }


__all__ = ["SCHEMA_VERSION", "candidate_to_dict", "serve_plan_to_dict"]
