"""The job and market of the spot simulator; time in ticks of the trace, fractional.

Model of "Can't Be Late" (Wu et al., NSDI'24, section 3, and its simulator sky_spot's
`Strategy.step`): a job needs C hours of compute and must finish within R hours; at each tick
it is idle, on spot (only where available) or on on-demand; every switch onto a new instance
sets a remaining overhead of d hours, and a tick of gap hours on a held instance yields
max(gap - remaining, 0) hours of progress (the remaining overhead falls by the rest). Billing
is per held hour, at the held instance's price; it stops the moment the work is done.

`TickPlan` states the job in (fractional) ticks: deadline N = R / gap, work W = C / gap,
changeover D = d / gap; the run lasts ceil(N) ticks, the last one cut at the deadline. The
deadline is feasible on on-demand when D + W <= N.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpurent.errors import DataError, InputError
from gpurent.spot.io.trace import AlignedZones

_EPS = 1e-9

IDLE = -1
"""Action/state code: no instance."""
ON_DEMAND = 0
"""Action/state code: the on-demand instance. Spot in zone z is z + 1."""


@dataclass(frozen=True, slots=True, kw_only=True)
class JobSpec:
    """A deadline job: `job_hours` of compute due `deadline_hours` after it starts."""

    job_hours: float
    deadline_hours: float
    changeover_hours: float
    nodes: int = 1

    def __post_init__(self) -> None:
        if not (math.isfinite(self.job_hours) and self.job_hours > 0):
            raise InputError(f"--job-hours must be > 0, got {self.job_hours}")
        if not (math.isfinite(self.deadline_hours) and self.deadline_hours > 0):
            raise InputError(f"--deadline-hours must be > 0, got {self.deadline_hours}")
        if self.deadline_hours < self.job_hours:
            raise InputError(
                f"--deadline-hours {self.deadline_hours:g} is shorter than --job-hours "
                f"{self.job_hours:g}; no schedule can finish; give a later deadline"
            )
        if not (math.isfinite(self.changeover_hours) and self.changeover_hours >= 0):
            raise InputError(f"--changeover-hours must be >= 0, got {self.changeover_hours}")
        if self.nodes < 1:
            raise InputError(f"--nodes must be >= 1, got {self.nodes}")


@dataclass(frozen=True, slots=True, kw_only=True)
class TickPlan:
    """A JobSpec in ticks of `gap_hours`, fractional (see the module docstring)."""

    gap_hours: float
    deadline_ticks: float
    """N = R / gap."""
    work_ticks: float
    """W = C / gap."""
    changeover_ticks: float
    """D = d / gap."""

    @property
    def run_ticks(self) -> int:
        """Ticks a run may last: ceil(N), the last one cut at the deadline."""
        return max(1, math.ceil(self.deadline_ticks - _EPS))

    @property
    def feasible_on_demand(self) -> bool:
        """Whether the job can finish by the deadline on on-demand from the first tick."""
        return self.changeover_ticks + self.work_ticks <= self.deadline_ticks + _EPS


def tick_plan(job: JobSpec, gap_hours: float) -> TickPlan:
    """The job in ticks of the trace (nothing rounded)."""
    return TickPlan(
        gap_hours=gap_hours,
        deadline_ticks=job.deadline_hours / gap_hours,
        work_ticks=job.job_hours / gap_hours,
        changeover_ticks=job.changeover_hours / gap_hours,
    )


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Market:
    """Zones aligned tick by tick, with prices per node.

    `usable[z, t]`: the job's `nodes` spot instances can be had in zone z at tick t.
    `spot_usd_per_hour[z, t]`: spot price per node. With `--price-ratio k` prices are relative:
    spot 1, on-demand k.
    """

    zone_names: tuple[str, ...]
    gap_hours: float
    usable: npt.NDArray[np.bool_]
    spot_usd_per_hour: npt.NDArray[np.float64]
    on_demand_usd_per_hour: float

    @property
    def zones(self) -> int:
        """Number of zones."""
        return len(self.zone_names)

    @property
    def ticks(self) -> int:
        """Number of ticks in the market."""
        return int(self.usable.shape[1])


def build_market(
    zones: AlignedZones,
    *,
    nodes: int = 1,
    price_ratio: float | None = None,
    on_demand_usd_per_hour: float | None = None,
) -> Market:
    """Prices from `price_ratio` (spot 1, on-demand k) or from the traces and an on-demand price.

    Without a ratio the traces must carry spot prices, and the on-demand price comes from
    `on_demand_usd_per_hour` or else from the traces' metadata.
    """
    traces = zones.traces
    usable = np.array([[v >= nodes for v in tr.available] for tr in traces], dtype=np.bool_)
    if price_ratio is not None:
        if not (math.isfinite(price_ratio) and price_ratio >= 1):
            raise InputError(f"--price-ratio must be >= 1 (on-demand / spot), got {price_ratio}")
        spot = np.ones(usable.shape, dtype=np.float64)
        od = float(price_ratio)
    else:
        missing = [tr.name for tr in traces if tr.price_usd_per_hour is None]
        if missing:
            raise InputError(
                f"trace {missing[0]!r} has no spot prices; pass --price-ratio K "
                "(on-demand / spot) or --prices FILE"
            )
        spot = np.array([tr.price_usd_per_hour for tr in traces], dtype=np.float64)
        known = [tr.on_demand_usd_per_hour for tr in traces if tr.on_demand_usd_per_hour]
        od_value = on_demand_usd_per_hour if on_demand_usd_per_hour is not None else None
        if od_value is None and known:
            od_value = known[0]
        if od_value is None:
            raise InputError(
                "the on-demand price is unknown; pass --on-demand-price USD_PER_HOUR "
                "or --price-ratio K"
            )
        if not (math.isfinite(od_value) and od_value > 0):
            raise InputError(f"--on-demand-price must be > 0 $/h, got {od_value}")
        od = float(od_value)
    if usable.shape[1] == 0:
        raise DataError("the traces have no ticks")
    return Market(
        zone_names=tuple(tr.name for tr in traces),
        gap_hours=zones.gap_hours,
        usable=usable,
        spot_usd_per_hour=spot,
        on_demand_usd_per_hour=od,
    )


def run_starts(market: Market, job: JobSpec, starts: int) -> list[int]:
    """Start ticks of the runs: run i starts at i * floor((T - ceil(R / gap)) / S)."""
    if starts < 1:
        raise InputError(f"--starts must be >= 1, got {starts}")
    room = market.ticks - math.ceil(job.deadline_hours / market.gap_hours - _EPS)
    if room < 0:
        names = ", ".join(repr(n) for n in market.zone_names)
        need = math.ceil(job.deadline_hours / market.gap_hours - _EPS)
        which = f"traces {names} have" if market.zones > 1 else f"trace {names} has"
        raise InputError(
            f"{which} {market.ticks} ticks ({market.ticks * market.gap_hours:.1f} h), shorter "
            f"than the deadline {job.deadline_hours:g} h, which needs at least {need}; "
            "give a longer trace or an earlier deadline"
        )
    stride = room // starts
    return [i * stride for i in range(starts)]
