"""Outage-idling slack value (`dp-up3`, round 11 of issue 16): `dp-up2` that, on several zones,
waits idle through an outage of every zone while its slack covers what the rest of the job is
predicted to need, instead of UP's on-demand the moment the job is behind UP's line.

Round 11's diagnosis (docs/benchmarks.md, "Spot policy round 11";
`benchmarks/diagnose_three_zones.py`): on the tuning split's V100 triples dp-up2 costs 0.392 x
k C against the hindsight optimum's 0.358. Of that 0.034, 0.024 is on-demand bought while some
zone had spot, most of it after the safety net committed the job to on-demand at C/R = 0.95
(the slack spent on spells the optimum knew to skip, which rounds 4-10 found no online rule for);
0.011 is on-demand bought while no zone had spot, almost all at C/R = 0.6 and 0.8, where the
optimum idles through the outage: with three zones an outage of all of them is short against
that much slack, and idle costs no money. UP instead goes on-demand as soon as its progress is
below t W / N, and stays there until spot is back.

The rule, from what the run has observed only: a failover walk over the market before now
(hold a zone until it is lost, then take the first usable one) gives, per tick of spot
progress, the slack such a job loses: the ticks no zone had spot plus D for each new instance,

    rho(now) = (outage ticks + D x instances taken) / ticks some zone had spot,

over the history before `now` (at least `min_history_hours` of it, else dp-up2 decides). With no
zone usable and not committed by the safety net, idle and behind UP's line (where UP would buy
on-demand; with `leave_on_demand`, off by default, also on on-demand, where UP stays until spot
is back), `dp-up3` idles if the slack after this tick still keeps

    slack - 1 - e > 3D + outage_reserve_factor x rho(now) x (work left),

the slack the rest of the job is predicted to lose on spot (3D: the margin lifetime-up keeps
for a changeover; e = D when leaving on-demand, for the changeover back to it should the
outage outlast the slack, else 0). Else, and everywhere else, dp-up2 decides; the safety net
is shared, so no deadline feasible on on-demand is missed. On one zone it is dp-up2
(`min_zones` 2): an outage of one zone is the end of its own spell, which rounds 6-10
priced, and the brief of round 11 keeps one-zone behaviour as dp-up2's.

Measured (docs/benchmarks.md, "Spot policy round 11"): tuning split -4.43% vs failover UP
(dp-up2 -3.49%), 0 cells beyond noise; validation: V100 -2.95% (dp-up2 -2.85%), synthetic
-4.20% (dp-up2 -3.67%), 0 misses, issue-16 three-zone mean 0.602 (dp-up2 0.604); dp-up2's
one-zone cells beyond noise remain, so it is a named alternative, not `auto`.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from gpurent.errors import InputError
from gpurent.spot.sim.job_market import IDLE, ON_DEMAND, Market
from gpurent.spot.sim.policies.base import RunView
from gpurent.spot.sim.policies.dp_up2 import CatchUpSlackValuePolicy


def failover_history(usable: npt.NDArray[np.bool_]) -> tuple[list[int], list[int], list[int]]:
    """Prefix counts over the ticks before each tick of a failover walk on `usable` (zones x
    ticks): ticks with no usable zone, ticks with one, and spot instances taken (a new one
    after a loss or an outage; the first counts too). Entry a covers ticks 0..a-1."""
    ticks = int(usable.shape[1])
    up_now = np.asarray(usable.any(axis=0), dtype=np.bool_)
    any_up: list[bool] = up_now.tolist()
    rows = usable.T.tolist()
    held = -1
    taken = [0] * (ticks + 1)
    count = 0
    for a in range(ticks):
        row = rows[a]
        if held >= 0 and not row[held]:
            held = -1
        if held < 0 and any_up[a]:
            held = row.index(True)
            count += 1
        taken[a + 1] = count
    up = np.concatenate([[0], np.cumsum(up_now)]).astype(np.int64)
    out = np.arange(ticks + 1, dtype=np.int64) - up
    return out.tolist(), up.tolist(), taken


class OutageIdleSlackValuePolicy(CatchUpSlackValuePolicy):
    """dp-up2 that idles through an outage of every zone while the slack allows (see module)."""

    name = "dp-up3"

    outage_reserve_factor = 1.0
    """Idle only while the slack keeps this many times the slack the rest is predicted to lose."""
    min_history_hours = 24.0
    """History before now needed to trust the predicted loss (else dp-up2 decides)."""
    min_zones = 2
    """Markets with fewer zones are left to dp-up2."""
    leave_on_demand = False
    """Also leave on-demand for idle when every zone is out (the slack must then also keep the
    changeover D of going back to on-demand). Off: the job can swing between idle and
    on-demand, a changeover each, and in round 11's first tuning run (in which a name clash
    also changed breakeven-up's bound, docs/benchmarks.md) it made 2 cells worse than UP
    beyond noise where staying on on-demand made none."""

    def __init__(self) -> None:
        super().__init__()
        if not self.outage_reserve_factor >= 0.0:
            raise InputError(f"dp-up3 reserve factor {self.outage_reserve_factor} must be >= 0")
        self._walk_market: Market | None = None
        self._out: list[int] = []
        self._up: list[int] = []
        self._taken: list[int] = []
        self._min_history = 0
        self._active = False

    def start(self, run: RunView) -> None:
        """Reset for a new run; redo the failover walk when the market changed."""
        super().start(run)
        m = run.market
        self._active = m.zones >= self.min_zones
        if self._active and self._walk_market is not m:
            self._walk_market = m
            self._out, self._up, self._taken = failover_history(m.usable)
            self._min_history = int(np.ceil(self.min_history_hours / m.gap_hours))

    def decide(self, t: int, progress_ticks: float, current: int, row: tuple[bool, ...]) -> int:
        """Idle through an outage of every zone while the slack allows; else dp-up2."""
        if (
            self._active
            and True not in row
            and (current == IDLE or (current == ON_DEMAND and self.leave_on_demand))
            and not self.net.must_commit(t, progress_ticks, current)
            and (current == ON_DEMAND or self.behind(t, progress_ticks))
            and self._idle_affordable(t, progress_ticks, self._d if current == ON_DEMAND else 0.0)
        ):
            return IDLE
        return super().decide(t, progress_ticks, current, row)

    def _idle_affordable(self, t: int, progress_ticks: float, extra_ticks: float) -> bool:
        """The slack after an idle tick (and `extra_ticks`) keeps 3D and the predicted loss of
        the rest."""
        now = self._start + t
        if now < self._min_history or self._up[now] <= 0:
            return False
        rho = (self._out[now] + self._d * self._taken[now]) / self._up[now]
        need = 3 * self._d + self.outage_reserve_factor * rho * (self._w - progress_ticks)
        return self.net.slack(t, progress_ticks) - 1.0 - extra_ticks > need
