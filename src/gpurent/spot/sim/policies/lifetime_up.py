"""Lifetime-aware Uniform Progress (`lifetime-up`, gpurent's default `--policy auto`).

Uniform Progress ("Can't Be Late", Wu et al., NSDI'24, section 5.2: safety net, exploitation,
uniform progress, failover to the first zone with spot) with one change, in UP's hysteresis.
UP, once on on-demand, stays there until its progress is ahead of the line ep(t + 2D). In
slack terms (slack s = ticks left - work ticks left), the line is s_up(t) = s0 (1 - t / N),
which falls by only s0 / N = 1 - C/R per tick while on-demand keeps s constant: at C/R = 0.95
and d = 0.2 h a catch-up lasts ~10 h of on-demand even when spot is back after minutes.

*Early return.* While UP's hysteresis would hold it on on-demand, `lifetime-up` takes spot in
the zone failover UP would take if both
1. that zone's predicted remaining spot lifetime (the mean residual life E[L - a | L > a] of
   its spells that ended before now, `lifetimes.mean_residual_ticks`; never the future) is
   above `life_factor` x k D / (k - 1) ticks, k = on-demand / spot price now. CBL section 4:
   leaving on-demand for spot pays only if the spot lasts longer than about k d / (k - 1);
   the factor covers the changeover back to on-demand and the estimate's error;
2. the slack left after the changeover stays above the safety net's 2D, one more changeover
   (the way back) and a reserve: the smaller of
   - `slack_share` x s_up(t): the job may run below UP's line, but only by a bounded share,
     so a run of short spells cannot burn the slack that later outages need; and
   - the slack the predicted preemptions of the rest of the job will eat:
     `need_factor` x (D + 1) x (work ticks left) / (mean spell length), the mean pooled over
     the zones' spells that ended before now (each preemption costs the lost tick and a
     changeover). Where spot spells are long against the work left, this reserve is far below
     UP's line (UP's line ignores how often spot is lost), so the job leaves on-demand sooner.
*Cheapest zone* (session 2). Where several zones have spot, take the one whose spot price is
lowest now (ties, as with `--price-ratio`, keep failover's order: the first). Failover UP takes
the first zone in the order given, whatever it costs. And move a running spot instance to a
zone whose spot is at least `move_margin` (25%) cheaper when the slack after the changeover
keeps the same reserve as the early return, and that zone's predicted remaining life exceeds
`move_life_factor` (6) x the ticks that pay the changeover back, D p_new / (p_old - p_new).
With flat prices nothing changes.

Everything else is UP, so the shared safety net keeps every feasible deadline.

The preemption reserve (round 3) was chosen with `benchmarks/tune_spot_policy.py`: over 1728
tuning cells (V100 and four synthetic sets, k in {2, 3, 5}, d in {0.05, 0.2} h, C/R in
{0.6, 0.8, 0.95}, R in {24, 48, 96} h, zone triples) it lowered the mean cost vs UP from
-1.4% to -1.6% (factor 2) and the worst cell from +1.2% to +0.2%, both within noise.

Measured (docs/benchmarks.md): never worse than UP per zone or per zone triple on the AWS
V100 traces (60 starts, real prices and k = 3); in the tuning harness (V100 and synthetic
traces, k in {2, 3, 5}, 20 starts) up to 1.1% worse in a few cells, none beyond noise, and
up to 1.5% worse in 2 of 128 cells where cheap synthetic zones are the flaky ones
(`benchmarks/check_spot_zone_prices.py`). The gain is largest where zones' prices differ and at
tight deadlines (C/R = 0.95) with small changeovers, where UP's catch-up is longest.

Rejected by measurement (kept out on purpose): choosing among available zones by predicted
lifetime or spell age (better on V100 on average, but up to 9-20% worse than failover UP on
synthetic zones with other statistics), and leaving on-demand with no slack bound (up to 9%
worse at C/R = 0.95, d = 0.2 h). Session 2 also rejected zone choice by hour-of-day or overall
preemption rate and by capped residual life, idling through short all-zone outages, and
skipping short-lived zones when slack is scarce (docs/benchmarks.md, round 4).
"""

from __future__ import annotations

import numpy as np

from gpurent.spot.sim.job_market import ON_DEMAND, Market
from gpurent.spot.sim.lifetimes import (
    Outliving,
    ZoneSpells,
    mean_residual_of,
    outliving,
    zone_spells,
)
from gpurent.spot.sim.policies.base import RunView
from gpurent.spot.sim.policies.baselines import UniformProgressPolicy


class LifetimeUniformProgressPolicy(UniformProgressPolicy):
    """UP that leaves an on-demand catch-up early for a zone predicted to stay up, takes the
    cheapest zone with spot, and moves to a much cheaper one when the slack allows."""

    name = "lifetime-up"

    life_factor = 6.0
    """Predicted remaining spot life must exceed this many k D / (k - 1) ticks."""
    slack_share = 0.9
    """Slack after the changeover must stay above this share of UP's slack line (plus 3D)..."""
    need_factor = 2.0
    """...or above this many times the slack the predicted preemptions will eat (plus 3D)."""
    min_spells = 10
    """Pooled spells needed before the preemption reserve is trusted (else UP's line only)."""
    move_margin = 0.25
    """A running spot instance moves only to a zone whose spot is this much cheaper..."""
    move_life_factor = 6.0
    """...and predicted to live this many times the ticks that pay the changeover back."""

    def __init__(self) -> None:
        super().__init__()
        self._market: Market | None = None
        self._spells: list[ZoneSpells] = []
        self._start = 0
        self._d = 0.0
        self._s0 = 0.0
        self._n = 1.0
        self._w = 0.0
        self._spot: list[list[float]] = []
        self._od = 1.0
        # Per market, as plain lists (the per-tick checks index them faster than numpy): each
        # zone's spell start and past-spell count a tick and prefix sums of spell lengths; the
        # lowest spot price a tick and whether all zones have it.
        self._start_at: list[list[int]] = []
        self._ended_by: list[list[int]] = []
        self._length_sums: list[list[int]] = []
        self._cheapest: list[float] = []
        self._flat: list[bool] = []
        self._found_at: tuple[int, int] = (-1, -1)
        self._found: Outliving = None

    def start(self, run: RunView) -> None:
        """Reset for a new run; rebuild the zones' spells and prices when the market changed."""
        super().start(run)
        if self._market is not run.market:
            self._market = run.market
            self._spells = [zone_spells(row) for row in run.market.usable]
            spot = np.asarray(run.market.spot_usd_per_hour, dtype=np.float64)
            self._spot = spot.tolist()
            self._od = run.market.on_demand_usd_per_hour
            self._start_at = [s.spell_start_at.tolist() for s in self._spells]
            self._ended_by = [s.ended_by.tolist() for s in self._spells]
            self._length_sums = [s.length_sums.tolist() for s in self._spells]
            low = spot.min(axis=0)
            self._cheapest = low.tolist()
            self._flat = ((spot.max(axis=0) == low) & np.isfinite(low)).tolist()
            self._found_at = (-1, -1)
        self._start = run.start_tick
        self._d = run.plan.changeover_ticks
        self._n = run.plan.deadline_ticks
        self._s0 = run.plan.deadline_ticks - run.plan.work_ticks
        self._w = run.plan.work_ticks

    def pick_zone(self, t: int, row: tuple[bool, ...]) -> int:
        """The usable zone with the lowest spot price now; failover's first zone on ties."""
        now = self._start + t
        if self._flat[now]:  # every zone at one price: failover's first zone
            return row.index(True) if True in row else -1
        best, best_price = -1, float("inf")
        for z, ok in enumerate(row):
            if ok and self._spot[z][now] < best_price:
                best, best_price = z, self._spot[z][now]
        return best

    def decide(self, t: int, progress_ticks: float, current: int, row: tuple[bool, ...]) -> int:
        """As UniformProgressPolicy, but leave on-demand early for a zone predicted to stay up."""
        if (
            current == ON_DEMAND
            and not self.net.committed
            and progress_ticks < self._rate * (t + self._two_d)
        ):
            z = self.pick_zone(t, row)
            if z >= 0 and self._early_return(t, progress_ticks, z):
                return z + 1
        if current > ON_DEMAND and not self.net.committed:
            # Running spot (usable: the simulator idles a lost instance): move or stay, as UP
            # stays; zones are searched only where one is cheap enough to move to.
            if self._cheaper_somewhere(t, current - 1):
                z = self.pick_zone(t, row)
                if z >= 0 and z != current - 1 and self._move(t, progress_ticks, current - 1, z):
                    return z + 1
            return current
        return super().decide(t, progress_ticks, current, row)

    def _cheaper_somewhere(self, t: int, here: int) -> bool:
        """Whether any zone's spot is below the price a move needs (`_move`'s first test): a
        cheap filter, so the zones are searched only on ticks where a move can happen."""
        now = self._start + t
        return self._cheapest[now] < self._spot[here][now] * (1.0 - self.move_margin)

    def _outliving(self, zone: int, now: int) -> Outliving:
        """`lifetimes.outliving` of `zone` at `now`, kept for the tick's other estimates."""
        if self._found_at != (zone, now):
            self._found = outliving(self._spells[zone], now)
            self._found_at = (zone, now)
        return self._found

    def _slack_allows_changeover(self, t: int, progress_ticks: float) -> bool:
        """The slack after one more changeover keeps 3D and the reserve (see module)."""
        slack_after = self.net.slack(t, progress_ticks) - self._d
        reserve = self.slack_share * self._s0 * (1.0 - t / self._n)
        if slack_after > 3 * self._d + reserve:
            return True
        reserve = min(reserve, self._preemption_reserve(self._start + t, progress_ticks))
        return slack_after > 3 * self._d + reserve

    def _move(self, t: int, progress_ticks: float, here: int, zone: int) -> bool:
        """Leave running spot in `here` for spot in `zone` (see module: cheaper zone)."""
        now = self._start + t
        price_here, price_there = self._spot[here][now], self._spot[zone][now]
        if price_there >= price_here * (1.0 - self.move_margin):
            return False
        if not self._slack_allows_changeover(t, progress_ticks):
            return False
        payback = self._d * price_there / (price_here - price_there)
        return mean_residual_of(self._outliving(zone, now)) > self.move_life_factor * payback

    def _early_return(self, t: int, progress_ticks: float, zone: int) -> bool:
        """Leave on-demand for spot in `zone` while UP's hysteresis would stay (see module)."""
        if not self.net.may_take_spot(t, progress_ticks):
            return False
        if not self._slack_allows_changeover(t, progress_ticks):
            return False
        now = self._start + t
        spot = self._spot[zone][now]
        if spot >= self._od:
            return False
        k = self._od / spot if spot > 0 else float("inf")
        need = self.life_factor * self._d * (k / (k - 1.0) if k != float("inf") else 1.0)
        return mean_residual_of(self._outliving(zone, now)) > need

    def _preemption_reserve(self, now: int, progress_ticks: float) -> float:
        """Slack ticks the rest of the job is predicted to lose to preemptions (inf: unknown)."""
        count = total = 0
        for ended_by, sums in zip(self._ended_by, self._length_sums, strict=True):
            seen = ended_by[now]
            count += seen
            total += sums[seen]
        if count < self.min_spells or total <= 0:
            return float("inf")
        mean_life = total / count
        return self.need_factor * (self._d + 1) * (self._w - progress_ticks) / mean_life
