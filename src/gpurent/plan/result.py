"""The planner's result objects (frozen): candidates, the ranked plan, its explanation.

Renderers (terminal, Markdown, HTML, JSON) read these and never compute anything of their own.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpurent.estimate.result import Bottleneck, MemoryBreakdown
from gpurent.plan.availability import Availability
from gpurent.plan.constraints import Objective, PricingModel, Risk
from gpurent.plan.layouts import Layout
from gpurent.pricing.costs import CostBreakdown, SetupTime, SpotOverhead


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """One way to run the job: an offer x nodes x layout x pricing model, with its outcome."""

    rank: int  # 1-based position in the ranked list (0 for candidates outside it)
    provider: str
    instance_type: str
    region: str
    also_in_regions: int  # further regions with the same instance at the same or higher cost
    gpu_name: str
    gpus_per_node: int
    nodes: int
    gpu_memory_gib: float  # per GPU
    inter_node_gbps: float | None  # None for one node
    network_assumed: bool  # True when the inter-node figure is the stated default
    pricing: PricingModel
    price_usd_per_hour: float  # per instance, as charged under `pricing`
    layout: Layout
    compute_time_s: float  # pure compute, without spot overhead
    run_time_s: float  # compute with the spot overhead (restores after interruptions included)
    setup: SetupTime  # provisioning, image, dataset, model, output transfer
    term_hours: float  # a reserved candidate's commitment term, billed whole (0: none)
    time_s: float  # expected wall time to the last byte of output: setup + run
    cost: CostBreakdown
    work_units: float  # units of `work_unit` done (e.g. tokens)
    work_unit: str  # "tokens", "images", "sequences", "samples"
    cost_per_unit_usd: float  # per `cost_unit`
    cost_unit: str  # "1M tokens", "1k images", ...
    cost_per_epoch_usd: float | None
    throughput: float  # estimator throughput, `throughput_unit`
    throughput_unit: str
    work_per_usd: float  # work units per dollar of running cost (incl. spot overhead)
    bottleneck: Bottleneck
    scaling_efficiency: float
    mfu: float | None
    memory: MemoryBreakdown
    basis: str  # estimator basis: measured | calibrated | roofline
    spot: SpotOverhead | None
    spot_rate_source: str  # where the assumed interruption rate comes from ("" when not spot)
    availability: Availability  # is the price too good to be capacity?
    meets_deadline: bool | None  # None when no deadline was given
    within_budget: bool | None  # None when no budget was given
    as_of: str
    notes: tuple[str, ...]  # risks and caveats
    # the estimate's 80% interval (`Estimate.interval_*`) carried to throughput, wall time and
    # cost: `_low` time/cost at the high throughput bound, `_high` (the p90) at the low one
    throughput_low: float
    throughput_high: float
    time_low_s: float
    time_high_s: float
    cost_low_usd: float
    cost_high_usd: float
    interval_class: str

    @property
    def num_gpus(self) -> int:
        """Total GPUs across all nodes."""
        return self.gpus_per_node * self.nodes

    @property
    def cost_usd(self) -> float:
        """Total cost of the run in USD."""
        return self.cost.total_usd

    @property
    def label(self) -> str:
        """One-line name of the candidate: nodes, provider, instance type, region and pricing."""
        nodes = f"{self.nodes}x " if self.nodes > 1 else ""
        return f"{nodes}{self.provider} {self.instance_type} ({self.region}, {self.pricing.value})"

    @property
    def gpus_label(self) -> str:
        """The GPUs as text, e.g. "8x H100" or "2 nodes x 8x H100"."""
        per_node = f"{self.gpus_per_node}x {self.gpu_name}"
        return f"{self.nodes} nodes x {per_node}" if self.nodes > 1 else per_node


@dataclass(frozen=True, slots=True, kw_only=True)
class Tradeoff:
    """An alternative against the recommendation (deltas positive = the alternative is more)."""

    candidate: Candidate
    role: str  # "runner-up", "fastest", "cheapest", "best on-demand", ...
    cost_delta_usd: float
    time_delta_s: float
    summary: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MatrixComparison:
    """Where the recommendation departs from the guide's scenario matrix, with numbers."""

    scenario: str
    matrix_gpus: tuple[str, ...]
    matrix_best: Candidate | None  # best candidate on a matrix GPU under the same objective
    agrees: bool
    summary: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Explanation:
    """Why the best candidate, what limits it, and what the alternatives trade."""

    headline: str
    why: tuple[str, ...]
    memory: tuple[str, ...]
    limits: tuple[str, ...]
    risks: tuple[str, ...]
    alternatives: tuple[Tradeoff, ...]
    matrix: MatrixComparison | None


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadSummary:
    """The workload as the plan shows it: name, model, task, precision and amount of work."""

    name: str
    model: str
    task: str
    precision: str
    work: str  # "2e9 tokens", "90 epochs of 1281167 samples", "1 h of running (no amount given)"
    work_given: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """A ranked plan. `feasible` is False when no candidate meets every constraint; then `top`
    holds the closest alternatives and `infeasible_reasons` says what failed (never empty)."""

    workload: WorkloadSummary
    objective: Objective
    scenario: str | None
    constraints: tuple[str, ...]
    feasible: bool
    top: tuple[Candidate, ...]
    pareto: tuple[Candidate, ...]  # time vs cost, fastest first
    explanation: Explanation | None
    infeasible_reasons: tuple[str, ...]
    catalog_offers: int
    offers_considered: int  # after the constraint filters
    configurations: int  # distinct (GPU, GPUs per node, nodes, network) evaluated
    estimator_calls: int
    candidates_evaluated: int  # offer x nodes x pricing combinations priced
    price_as_of: tuple[str, ...]
    assumptions: tuple[str, ...]
    risk: Risk = Risk.MEDIAN  # which end of the 80% ranges the ranking used

    @property
    def best(self) -> Candidate | None:
        """The cheapest candidate by the objective, or None when nothing is feasible."""
        return self.top[0] if self.feasible and self.top else None
