"""The planner: what to rent, where, how to pay, and what it will cost to finish a job.

Public API: `make_plan(workload, offers, constraints, assumptions, estimator, scenario=...)`
returns a frozen `Plan`; `Constraints`, `Objective`, `PricingModel`, `Interconnect` describe the
request; `SCENARIOS`/`get_scenario` hold the guide's scenario matrix. The estimator is passed
in: a `gpurent.estimate.Estimator` (built once at the edge, with the user's calibration, by
`gpurent.estimate.calibration_file.load_estimator`) or any `EstimatorFn`.

The planner proper (and through it the estimator) is imported on first use, so that importing
the constraints (as every `gpurent` start-up does, for the CLI's defaults) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from gpurent.catalog.links import Interconnect
from gpurent.plan.constraints import Constraints, Objective, PricingModel
from gpurent.plan.scenarios import SCENARIOS, Scenario, get_scenario

if TYPE_CHECKING:
    from gpurent.plan.layouts import EstimatorFn, Layout
    from gpurent.plan.planner import make_plan
    from gpurent.plan.result import Candidate, Explanation, Plan

_LAZY = {
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
    "get_scenario",
    "make_plan",
]
