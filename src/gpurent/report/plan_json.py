"""The stable `gpurent plan --json` document (schema version 1, see docs/plan-json-schema.md).

Built field by field, not by dumping dataclasses, so that renaming an internal field cannot change
the public format by accident; `docs/plan.schema.json` is checked against real output in tests.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from gpurent.catalog.freshness import stale_price_warning
from gpurent.estimate.uncertainty import COVERAGE
from gpurent.plan.result import Candidate, Explanation, Plan

SCHEMA_VERSION = "1"


def _num(value: float | None) -> float | None:
    """Floats as JSON numbers; infinities and NaN as null."""
    if value is None or not math.isfinite(value):
        return None
    return float(value)


def candidate_to_dict(c: Candidate) -> dict[str, Any]:
    """The candidate as a JSON-ready dict."""
    m = c.memory
    spot = None
    if c.spot is not None:
        s = c.spot
        spot = {
            "interruptions_per_hour": _num(s.interruptions_per_hour),
            "mean_time_to_interruption_s": _num(s.mean_time_to_interruption_s),
            "checkpoint_cost_s": _num(s.checkpoint_cost_s),
            "checkpoint_interval_s": _num(s.checkpoint_interval_s),
            "expected_interruptions": _num(s.expected_interruptions),
            "checkpoint_time_s": _num(s.checkpoint_time_s),
            "lost_work_s": _num(s.lost_work_s),
            "restart_time_s": _num(s.restart_time_s),
            "slowdown": _num(s.slowdown),
        }
    lay = c.layout
    st = c.setup
    av = c.availability
    return {
        "rank": c.rank,
        "provider": c.provider,
        "instance_type": c.instance_type,
        "region": c.region,
        "also_in_regions": c.also_in_regions,
        "gpu_name": c.gpu_name,
        "gpus_per_node": c.gpus_per_node,
        "nodes": c.nodes,
        "num_gpus": c.num_gpus,
        "gpu_memory_gib": _num(c.gpu_memory_gib),
        "inter_node_gbps": _num(c.inter_node_gbps),
        "network_assumed": c.network_assumed,
        "pricing": c.pricing.value,
        "price_usd_per_hour": _num(c.price_usd_per_hour),
        "layout": {
            "label": lay.label,
            "data_parallel": lay.data_parallel,
            "tensor_parallel": lay.tensor_parallel,
            "pipeline_parallel": lay.pipeline_parallel,
            "virtual_pipeline_stages": lay.virtual_pipeline_stages,
            "sharding": lay.sharding.value,
            "activation_checkpointing": lay.activation_checkpointing,
            "batch_size_per_gpu": lay.batch_size_per_gpu,
            "gradient_accumulation": lay.gradient_accumulation,
        },
        "compute_time_s": _num(c.compute_time_s),
        "run_time_s": _num(c.run_time_s),
        "time_s": _num(c.time_s),
        "setup": {
            "provisioning_s": _num(st.provisioning_s),
            "image_s": _num(st.image_s),
            "dataset_s": _num(st.dataset_s),
            "model_s": _num(st.model_s),
            "output_s": _num(st.output_s),
            "restore_s": _num(c.spot.restart_time_s if c.spot else 0.0),
            "total_s": _num(st.total_s),
            "billed_s": _num(st.billed_s),
            "download_gbps": _num(st.download_gbps),
            "provisioning_billed": st.provisioning_billed,
            "sources": dict(st.sources),
        },
        "term_hours": _num(c.term_hours),
        "cost": {
            "compute_usd": _num(c.cost.compute_usd),
            "setup_usd": _num(c.cost.setup_usd),
            "billing_rounding_usd": _num(c.cost.billing_rounding_usd),
            "storage_usd": _num(c.cost.storage_usd),
            "egress_usd": _num(c.cost.egress_usd),
            "spot_overhead_usd": _num(c.cost.spot_overhead_usd),
            "total_usd": _num(c.cost.total_usd),
        },
        "availability": {
            "confidence": _num(av.confidence),
            "discount_vs_on_demand": _num(av.discount_vs_on_demand),
            "usual_discount": _num(av.usual_discount),
            "flag": av.flag,
            "basis": av.basis,
            "interruptions_per_hour": _num(c.spot.interruptions_per_hour) if c.spot else None,
            "interruption_rate_source": c.spot_rate_source,
        },
        "work_units": _num(c.work_units),
        "work_unit": c.work_unit,
        "cost_per_unit_usd": _num(c.cost_per_unit_usd),
        "cost_unit": c.cost_unit,
        "cost_per_epoch_usd": _num(c.cost_per_epoch_usd),
        "throughput": _num(c.throughput),
        "throughput_unit": c.throughput_unit,
        "work_per_usd": _num(c.work_per_usd),
        "bottleneck": c.bottleneck.value,
        "scaling_efficiency": _num(c.scaling_efficiency),
        "mfu": _num(c.mfu),
        "memory": {
            "weights_gib": _num(m.weights_gib),
            "gradients_gib": _num(m.gradients_gib),
            "optimizer_gib": _num(m.optimizer_gib),
            "activations_gib": _num(m.activations_gib),
            "kv_cache_gib": _num(m.kv_cache_gib),
            "overhead_gib": _num(m.overhead_gib),
            "total_gib": _num(m.total_gib),
            "capacity_gib": _num(m.capacity_gib),
            "headroom_gib": _num(m.headroom_gib),
        },
        "basis": c.basis,
        "spot": spot,
        "meets_deadline": c.meets_deadline,
        "within_budget": c.within_budget,
        "as_of": c.as_of,
        "notes": list(c.notes),
        "interval": {
            "coverage": COVERAGE,
            "class": c.interval_class,
            "throughput_low": _num(c.throughput_low),
            "throughput_high": _num(c.throughput_high),
            "time_low_s": _num(c.time_low_s),
            "time_high_s": _num(c.time_high_s),
            "cost_low_usd": _num(c.cost_low_usd),
            "cost_high_usd": _num(c.cost_high_usd),
        },
    }


def _explanation(e: Explanation | None) -> dict[str, Any] | None:
    if e is None:
        return None
    matrix = None
    if e.matrix is not None:
        mx = e.matrix
        matrix = {
            "scenario": mx.scenario,
            "matrix_gpus": list(mx.matrix_gpus),
            "agrees": mx.agrees,
            "summary": mx.summary,
            "matrix_best": candidate_to_dict(mx.matrix_best) if mx.matrix_best else None,
        }
    return {
        "headline": e.headline,
        "why": list(e.why),
        "memory": list(e.memory),
        "limits": list(e.limits),
        "risks": list(e.risks),
        "alternatives": [
            {
                "role": t.role,
                "summary": t.summary,
                "cost_delta_usd": _num(t.cost_delta_usd),
                "time_delta_s": _num(t.time_delta_s),
                "candidate": candidate_to_dict(t.candidate),
            }
            for t in e.alternatives
        ],
        "matrix": matrix,
    }


def plan_to_dict(plan: Plan, *, storage_gb_per_node: float | None = None) -> dict[str, Any]:
    """The plan as the stable JSON document. `storage_gb_per_node`: the block storage the costs
    assume, written as the optional field of that name (added within version 1; read by
    `gpurent deploy render`)."""
    w = plan.workload
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "workload": {
            "name": w.name,
            "model": w.model,
            "task": w.task,
            "precision": w.precision,
            "work": w.work,
            "work_given": w.work_given,
        },
        "scenario": plan.scenario,
        "objective": plan.objective.value,
        "risk": plan.risk.value,
        "constraints": list(plan.constraints),
        "feasible": plan.feasible,
        "infeasible_reasons": list(plan.infeasible_reasons),
        "best": candidate_to_dict(plan.best) if plan.best else None,
        "top": [candidate_to_dict(c) for c in plan.top],
        "pareto": [candidate_to_dict(c) for c in plan.pareto],
        "explanation": _explanation(plan.explanation),
        "stats": {
            "catalog_offers": plan.catalog_offers,
            "offers_considered": plan.offers_considered,
            "configurations": plan.configurations,
            "estimator_calls": plan.estimator_calls,
            "candidates_evaluated": plan.candidates_evaluated,
        },
        "price_as_of": list(plan.price_as_of),
        "assumptions": list(plan.assumptions),
    }
    if storage_gb_per_node is not None:
        doc["storage_gb_per_node"] = _num(storage_gb_per_node)
    return doc


def price_warnings(result: Plan, now: datetime) -> list[str]:
    """One warning per price date among the ranked rows that is over 30 days old (or unknown),
    naming the best-ranked row with it: the plan says so and still ranks them (issue 15)."""
    by_date: dict[str, list[str]] = {}
    for c in result.top:
        by_date.setdefault(c.as_of, []).append(c.label)
    out = []
    for as_of, labels in by_date.items():
        more = f" (and {len(labels) - 1} more ranked rows)" if len(labels) > 1 else ""
        line = stale_price_warning(labels[0] + more, as_of, now)
        if line is not None:
            out.append(line)
    return out


def plan_document(
    plan: Plan, storage_gb_per_node: float | None, warnings: list[str]
) -> dict[str, Any]:
    """What `gpurent plan --json` prints and `POST /api/plan` returns: the stable document and
    the stale-price warnings (raw text: JSON readers escape it themselves)."""
    return {**plan_to_dict(plan, storage_gb_per_node=storage_gb_per_node), "warnings": warnings}
