"""A LoRA fine-tune that needs ZeRO-3 on single-GPU nodes over a slow network no longer tops a
plan at 100% scaling (issue 12): the frozen base weights are all-gathered every micro-batch."""

from __future__ import annotations

from dataclasses import replace

from plan_fakes import offer

from gpurent.estimate import bundled_estimator
from gpurent.plan import Constraints, make_plan
from gpurent.pricing.costs import CostAssumptions
from gpurent.workload import preset


def test_single_gpu_nodes_over_25_gbit_lose_to_an_nvlink_node_for_lora_zero3() -> None:
    wl = replace(preset("llama-lora"), model="llama2-70b")  # 140 GB of base weights: ZeRO-3
    offers = [
        offer("GH200", 1, 3.0, network_gbps=25.0, provider="lambda"),
        offer("H100", 8, 30.0, network_gbps=3200.0),
    ]
    plan = make_plan(wl, offers, Constraints(max_nodes=3), CostAssumptions(), bundled_estimator())
    assert plan.feasible
    assert plan.top[0].gpu_name == "H100-SXM5-80GB"
    slow = [c for c in plan.top if c.gpu_name == "GH200-96GB"]
    assert slow, "the GH200 nodes are still a candidate"
    for c in slow:
        assert c.nodes > 1 and c.layout.sharding == "zero3"
        assert c.scaling_efficiency < 0.3
        assert c.bottleneck == "communication"
