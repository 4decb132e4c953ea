"""The planner's shortcuts (issue 12, "plan < 1 s") leave every plan exactly as it was: the same
JSON with and without them, on several presets of the bundled catalog."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from gpurent.catalog.gpu import GpuSpec
from gpurent.cli.plan_cmds import load_offers
from gpurent.estimate import Estimator, bundled_estimator
from gpurent.estimate.result import Estimate
from gpurent.plan import Constraints, make_plan
from gpurent.pricing.costs import CostAssumptions
from gpurent.report.plan_json import plan_to_dict
from gpurent.workload import preset
from gpurent.workload.spec import Task, Workload


class TimedOnly:
    """The bundled estimator without its `memory_fits` seam: every layout tried is timed, as
    the planner did before it; counts the estimates it makes."""

    def __init__(self) -> None:
        self.inner: Estimator = bundled_estimator()
        self.calls = 0

    def __call__(
        self,
        workload: Workload,
        gpu: GpuSpec,
        num_gpus: int,
        nodes: int,
        inter_node_gbps: float | None,
    ) -> Estimate:
        self.calls += 1
        return self.inner(workload, gpu, num_gpus, nodes, inter_node_gbps)

    def find_gpu(self, name: str) -> GpuSpec | None:
        return self.inner.find_gpu(name)


class Counted(TimedOnly):
    """`TimedOnly` with the seam back: the planner times only the layouts that fit."""

    def memory_fits(self, workload: Workload, gpu: GpuSpec, num_gpus: int, nodes: int) -> bool:
        return self.inner.memory_fits(workload, gpu, num_gpus, nodes)


def _workloads() -> dict[str, Workload]:
    full_70b = Workload(model="llama3-70b", task=Task.FINETUNE_FULL, name="llama3-70b full")
    return {
        "llama-lora": preset("llama-lora"),
        "bert-large-pretrain": preset("bert-large-pretrain"),
        "llm-inference": preset("llm-inference"),
        "llama3-70b full fine-tune": replace(full_70b, precision=preset("llama-lora").precision),
    }


@pytest.mark.parametrize("name", list(_workloads()))
def test_plan_json_is_the_same_with_and_without_the_memory_check(name: str) -> None:
    workload = _workloads()[name]
    offers = load_offers(None)
    plain, checked = TimedOnly(), Counted()
    docs = [
        json.dumps(plan_to_dict(make_plan(workload, offers, Constraints(), CostAssumptions(), e)))
        for e in (plain, checked)
    ]
    assert docs[0] == docs[1]
    doc = json.loads(docs[0])
    assert doc["stats"]["estimator_calls"] == plain.calls  # every layout tried was timed
    assert checked.calls <= plain.calls


def test_the_memory_check_skips_timing_layouts_that_do_not_fit() -> None:
    """llama-lora's first layouts overflow the smaller GPUs: those are no longer timed."""
    offers = load_offers(None)
    plain, checked = TimedOnly(), Counted()
    for e in (plain, checked):
        make_plan(preset("llama-lora"), offers, Constraints(), CostAssumptions(), e)
    assert checked.calls < plain.calls
