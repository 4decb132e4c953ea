"""The planner: what to rent, where, how to pay, and what it will cost to finish a job.

Public API: `make_plan(workload, offers, constraints, assumptions, estimator, scenario=...)`
returns a frozen `Plan`; `Constraints`, `Objective`, `PricingModel`, `Interconnect` describe the
request; `SCENARIOS`/`get_scenario` hold the guide's scenario matrix; `default_estimator` wraps
`gpurent.estimate.estimate` for `make_plan`.
"""

from gpurent.plan.constraints import Constraints, Interconnect, Objective, PricingModel
from gpurent.plan.layouts import EstimatorFn, Layout
from gpurent.plan.planner import make_plan
from gpurent.plan.result import Candidate, Explanation, Plan
from gpurent.plan.scenarios import SCENARIOS, Scenario, get_scenario

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
