"""The planner: what to rent, where, how to pay, and what it will cost to finish a job.

Public API: `make_plan(workload, offers, constraints, assumptions, estimator, scenario=...)`
returns a frozen `Plan`; `Constraints`, `Objective`, `PricingModel`, `Interconnect` describe the
request; `SCENARIOS`/`get_scenario` hold the guide's scenario matrix; `default_estimator` wraps
`gpurent.estimate.estimate` for `make_plan`.

The planner proper (and through it the estimator) is imported on first use, so that importing
the constraints (as every `gpurent` start-up does, for the CLI's defaults) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from gpurent.plan.constraints import Constraints, Interconnect, Objective, PricingModel
from gpurent.plan.scenarios import SCENARIOS, Scenario, get_scenario

if TYPE_CHECKING:
    from gpurent.plan.estimator import default_estimator
    from gpurent.plan.layouts import EstimatorFn, Layout
    from gpurent.plan.planner import make_plan
    from gpurent.plan.result import Candidate, Explanation, Plan

_LAZY = {
    "default_estimator": "gpurent.plan.estimator",
    "EstimatorFn": "gpurent.plan.layouts",
    "Layout": "gpurent.plan.layouts",
    "make_plan": "gpurent.plan.planner",
    "Candidate": "gpurent.plan.result",
    "Explanation": "gpurent.plan.result",
    "Plan": "gpurent.plan.result",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'gpurent.plan' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "SCENARIOS",
    "Candidate",
    "Constraints",
    "EstimatorFn",
    "Explanation",
    "Interconnect",
    "Layout",
    "Objective",
    "Plan",
    "PricingModel",
    "Scenario",
    "default_estimator",
    "get_scenario",
    "make_plan",
]
