"""Spend across machines: money spent, burn rate, idle money and the projected cost to finish,
per machine and per job or project. Pure: it takes samples and prices, returns frozen results.

Method (docs/serve.md "Spend"):
- spent and idle money are `gpurent.monitor.cost.meter` over the machine's samples at its price,
  so they equal what `gpurent monitor` shows for the same samples;
- the burn rate is the money spent over the samples of the last `window_s` seconds (before
  `now_s`) divided by the part of that window the machine has been sending for; 0 when its last
  sample is older than the window (the machine stopped reporting);
- with a plan (hours, cost), the projected cost to finish is what was spent plus the plan's hours
  still to run at the burn rate (the price when the burn rate is not known yet).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpurent.monitor.cost import CostMeter, CostReport, InstancePrice, meter
from gpurent.monitor.rules import Thresholds
from gpurent.monitor.sample import GpuSample, Sample
from gpurent.units import SECONDS_PER_HOUR

DEFAULT_WINDOW_S = 300.0


def cost_samples(rows: Iterable[Mapping[str, Any]]) -> list[Sample]:
    """Samples with what the cost meter reads (time; each GPU's index, lost flag, SM and busy
    %) from checked flat rows, oldest first: the meter over them equals the meter over the full
    samples (`monitor.sample.from_rows`), at a fraction of the cost of decoding every column."""
    grouped: dict[float, list[GpuSample]] = {}
    for r in rows:
        gpus = grouped.setdefault(float(r["timestamp"]), [])
        if r.get("gpu") is not None:
            gpus.append(
                GpuSample(
                    index=int(r["gpu"]),
                    lost=bool(r.get("lost") or False),
                    sm_util_pct=r.get("sm_util_pct"),
                    gpu_busy_pct=r.get("gpu_busy_pct"),
                )
            )
    return [
        Sample(timestamp_s=ts, gpus=tuple(sorted(grouped[ts], key=lambda g: g.index)))
        for ts in sorted(grouped)
    ]


@dataclass(frozen=True, slots=True, kw_only=True)
class MachinePlan:
    """What a machine was registered with: its job, project, price and plan."""

    name: str
    job: str = ""
    project: str = ""
    price_usd_per_hour: float | None = None
    gpu_count: int | None = None
    plan_hours: float | None = None
    plan_cost_usd: float | None = None

    def price(self) -> InstancePrice | None:
        """The machine's price for the cost meter, None when it was registered without one."""
        if self.price_usd_per_hour is None:
            return None
        return InstancePrice(
            label=f"machine {self.name}",
            price_usd_per_hour=self.price_usd_per_hour,
            gpu_count=self.gpu_count,
            source="registered price",
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class MachineSpend:
    """One machine's money so far. USD amounts are None when the machine has no price."""

    machine: str
    job: str
    project: str
    price_usd_per_hour: float | None
    samples: int
    first_s: float | None
    last_s: float | None
    elapsed_s: float
    spent_usd: float | None
    idle_wasted_usd: float | None
    underused_wasted_usd: float | None
    burn_usd_per_hour: float | None
    window_s: float
    plan_hours: float | None
    plan_cost_usd: float | None
    projected_cost_usd: float | None  # spent + the plan's remaining hours at the burn rate


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupSpend:
    """The machines of one job or project together."""

    scope: str  # "job" or "project"
    name: str
    machines: tuple[str, ...]
    spent_usd: float
    idle_wasted_usd: float
    underused_wasted_usd: float
    burn_usd_per_hour: float
    projected_cost_usd: float | None  # None unless every priced machine has a plan


def _burn(
    recent: Sequence[Sample],
    first_s: float | None,
    price: InstancePrice,
    *,
    thresholds: Thresholds,
    now_s: float,
    window_s: float,
) -> float:
    """$/h over the last `window_s` before `now_s`, from the samples in it (`first_s`: the
    machine's first sample ever, so a machine younger than the window is not diluted)."""
    if not recent or first_s is None or now_s - recent[-1].timestamp_s > window_s:
        return 0.0
    report = meter(recent, price, thresholds)
    covered_s = min(window_s, now_s - first_s)
    covered_s = max(covered_s, report.elapsed_s)
    if covered_s <= 0:
        return 0.0
    return report.spent_usd * SECONDS_PER_HOUR / covered_s


def machine_spend(
    plan: MachinePlan,
    samples: Sequence[Sample],
    *,
    now_s: float,
    window_s: float = DEFAULT_WINDOW_S,
    thresholds: Thresholds | None = None,
) -> MachineSpend:
    """`plan`'s machine over its `samples` (oldest first) as of `now_s`."""
    t = thresholds or Thresholds()
    price = plan.price()
    report = meter(samples, price, t) if price is not None and samples else None
    return spend_from_meter(
        plan,
        MeteredHistory(
            report=report,
            samples=len(samples),
            first_s=samples[0].timestamp_s if samples else None,
            last_s=samples[-1].timestamp_s if samples else None,
        ),
        [s for s in samples if s.timestamp_s >= now_s - window_s],
        now_s=now_s,
        window_s=window_s,
        thresholds=t,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class MeteredHistory:
    """A machine's whole history as the cost meter summed it (None: no price or no samples),
    without the samples themselves: what a server keeps per machine and extends on each read."""

    report: CostReport | None
    samples: int
    first_s: float | None
    last_s: float | None


def spend_from_meter(
    plan: MachinePlan,
    history: MeteredHistory,
    recent: Sequence[Sample],
    *,
    now_s: float,
    window_s: float = DEFAULT_WINDOW_S,
    thresholds: Thresholds | None = None,
) -> MachineSpend:
    """`plan`'s machine from its metered `history` and the `recent` samples (those of the last
    `window_s` before `now_s`, oldest first, for the burn rate): the same figures as
    `machine_spend` over every sample, in time that does not grow with the history."""
    t = thresholds or Thresholds()
    price = plan.price()
    spent = idle = under = burn = projected = None
    elapsed_s = 0.0
    if price is not None:
        report = history.report
        if report is not None:
            elapsed_s = report.elapsed_s
            spent, idle = report.spent_usd, report.idle_wasted_usd
            under = report.underused_wasted_usd
        else:
            spent = idle = under = 0.0
        burn = _burn(recent, history.first_s, price, thresholds=t, now_s=now_s, window_s=window_s)
        if plan.plan_hours is not None:
            remaining_h = max(0.0, plan.plan_hours - elapsed_s / SECONDS_PER_HOUR)
            rate = burn if burn > 0 else price.price_usd_per_hour
            projected = spent + remaining_h * rate
    elif history.first_s is not None and history.last_s is not None:
        elapsed_s = history.last_s - history.first_s
    return MachineSpend(
        machine=plan.name,
        job=plan.job,
        project=plan.project,
        price_usd_per_hour=plan.price_usd_per_hour,
        samples=history.samples,
        first_s=history.first_s,
        last_s=history.last_s,
        elapsed_s=elapsed_s,
        spent_usd=spent,
        idle_wasted_usd=idle,
        underused_wasted_usd=under,
        burn_usd_per_hour=burn,
        window_s=window_s,
        plan_hours=plan.plan_hours,
        plan_cost_usd=plan.plan_cost_usd,
        projected_cost_usd=projected,
    )


def group_spend(scope: str, machines: Iterable[MachineSpend]) -> list[GroupSpend]:
    """The machines grouped by their `scope` ("job" or "project"); unnamed ones left out."""
    groups: dict[str, list[MachineSpend]] = {}
    for m in machines:
        key = m.job if scope == "job" else m.project
        if key:
            groups.setdefault(key, []).append(m)
    out: list[GroupSpend] = []
    for name in sorted(groups):
        ms = groups[name]
        priced = [m for m in ms if m.spent_usd is not None]
        projections = [m.projected_cost_usd for m in priced]
        out.append(
            GroupSpend(
                scope=scope,
                name=name,
                machines=tuple(m.machine for m in ms),
                spent_usd=sum(m.spent_usd or 0.0 for m in priced),
                idle_wasted_usd=sum(m.idle_wasted_usd or 0.0 for m in priced),
                underused_wasted_usd=sum(m.underused_wasted_usd or 0.0 for m in priced),
                burn_usd_per_hour=sum(m.burn_usd_per_hour or 0.0 for m in priced),
                projected_cost_usd=sum(p for p in projections if p is not None)
                if priced and all(p is not None for p in projections)
                else None,
            )
        )
    return out


class SpendTracker:
    """Running money per machine, O(1) per sample: what budgets are checked against on each
    ingest. Feed each machine's samples in time order (`add`); `spent_usd` sums machines."""

    def __init__(self, thresholds: Thresholds | None = None) -> None:
        self._thresholds = thresholds or Thresholds()
        self._meters: dict[str, CostMeter] = {}
        self._plans: dict[str, MachinePlan] = {}

    def knows(self, machine: str) -> bool:
        """True once `machine` was started (seeded) in this tracker."""
        return machine in self._plans

    def start(self, plan: MachinePlan, history: Iterable[Sample] = ()) -> None:
        """Begin tracking `plan`'s machine, seeded with the samples it already has."""
        self._plans[plan.name] = plan
        price = plan.price()
        if price is None:
            self._meters.pop(plan.name, None)
            return
        m = CostMeter(price, self._thresholds)
        for s in history:
            m.add(s)
        self._meters[plan.name] = m

    def add(self, machine: str, samples: Iterable[Sample]) -> None:
        """Add a started machine's new samples (a machine without a price spends nothing)."""
        m = self._meters.get(machine)
        if m is not None:
            for s in samples:
                m.add(s)

    def metered(self, machine: str) -> bool:
        """True when `machine` is started and has a price (its samples count)."""
        return machine in self._meters

    def spent_usd(self, *, job: str = "", project: str = "") -> float:
        """Money spent by the machines of `job` (or of `project`)."""
        total = 0.0
        for name, m in self._meters.items():
            plan = self._plans[name]
            if (job and plan.job == job) or (project and plan.project == project):
                total += m.report().spent_usd
        return total
