"""Slack-valued Uniform Progress (`dp-up`, round 8 of issue 16): `proven-up` whose way back
from an on-demand catch-up is decided by what the slack it risks is worth to the rest of run.

Round 7's diagnosis: `proven-up`'s returns that are lost within the break-even life happen while
the slack is still above the break-even rule's bound, where a bound-based look-ahead never acts.
So `dp-up` prices slack everywhere: per zone and run it solves a coarse dynamic programme over
(slack, work left) (`gpurent.spot.sim.slack_value`) from the zone's spells that ended before
now (preemptions per usable tick, mean outage; never the future), and where proven-up's gates
pass (evidence of >= 10 spells outliving the current age, the spell's age gate) it leaves
on-demand for spot only if the expected cost of taking spot now,

    D + mean over the past spells that outlived the current age a, with residual R = L - a, of
      w + D                                if R - D >= w (the job ends on spot),
      R + D + V(s - 2D - 1, w - (R - D))   otherwise (lost: changeover and lost tick in slack,
                                           the restart's changeover in cost),

is below that of one more tick on on-demand, k + V(s, w - 1), by the share `margin`. V is the
table's expected cost to finish. Elsewhere lifetime-up decides, and the shared safety net keeps
every feasible deadline. `margin` (0.1) was chosen on the tuning split's V100 triples.

Measured (docs/benchmarks.md, "Spot policy round 8"): on the 1,080 V100 validation cells -2.87%
vs failover UP on average (proven-up -2.29%, lifetime-up -1.55%), 0 misses, but the same 2
cells as proven-up worse than UP beyond noise (+1.02%, +1.00%), so it is a named alternative,
not `auto`.
"""

from __future__ import annotations

import numpy as np

from gpurent.errors import InputError
from gpurent.spot.sim.policies.base import RunView
from gpurent.spot.sim.policies.proven_up import ProvenUniformProgressPolicy
from gpurent.spot.sim.slack_value import FloatArr, SlackValueTable, solve_slack_value


class SlackValueUniformProgressPolicy(ProvenUniformProgressPolicy):
    """proven-up whose break-even return is replaced by a slack-valued comparison (see module)."""

    name = "dp-up"

    margin = 0.1
    """Taking spot must be cheaper than one more on-demand tick by this share of the latter."""
    hazard_factor = 1.0
    """The table's preemption rate is this many times the zone's past rate (pessimism)."""
    grid = 24
    """Rows (work) and columns (slack) of the table."""
    veto_share: float | None = None
    """Where the priced comparison was made and taking spot does not beat staying by the
    margin: None (dp-up) lets proven-up's break-even rule decide; a share v stays on on-demand
    (a veto) where taking spot costs at least (1 - v) x staying, and lets the rule decide
    only between (`dp-up2`)."""

    def __init__(self) -> None:
        super().__init__()
        if not 0.0 <= self.margin < 1.0:
            raise InputError(f"dp-up margin {self.margin} out of range: use 0 <= margin < 1")
        if not self.hazard_factor > 0.0:
            raise InputError(f"dp-up hazard factor {self.hazard_factor} must be > 0")
        if self.grid < 2:
            raise InputError(f"dp-up grid {self.grid} too small: use at least 2")
        if self.veto_share is not None and not 0.0 <= self.veto_share <= self.margin:
            raise InputError(f"dp-up veto share {self.veto_share} out of range: use 0..margin")
        self._tables: dict[int, SlackValueTable] = {}

    def start(self, run: RunView) -> None:
        """Reset for a new run: the tables are solved again, from the spells seen by then."""
        super().start(run)
        self._tables = {}

    def _table(self, zone: int, now: int, k: float) -> SlackValueTable:
        """The zone's slack-value table for this run, from its spells that ended by `now`."""
        table = self._tables.get(zone)
        if table is not None and table.price_ratio == k:
            return table
        spells = self._spells[zone]
        seen = int(np.searchsorted(spells.ends, now, side="right"))
        up = float(spells.lengths[:seen].sum())
        rate = seen / up if up > 0 else 1.0
        downs = spells.starts[1:seen] - spells.ends[: max(seen - 1, 0)]
        outage = float(downs.mean()) if len(downs) else 1.0
        table = solve_slack_value(
            work_ticks=self._w,
            slack_ticks=max(self._s0, 1e-6),
            changeover_ticks=self._d,
            price_ratio=k,
            preemptions_per_tick=self.hazard_factor * rate,
            outage_ticks=outage,
            rows=self.grid,
            cols=self.grid,
        )
        self._tables[zone] = table
        return table

    def _early_return(self, t: int, progress_ticks: float, zone: int) -> bool:
        """Leave on-demand for spot in `zone` where that is cheaper by the table (see module)."""
        if not self.net.may_take_spot(t, progress_ticks):
            return False
        now = self._start + t
        spot = self._spot[zone][now]
        if spot >= self._od or spot <= 0:
            return super()._early_return(t, progress_ticks, zone)
        k = self._od / spot
        need = 1.0 + self._d * (3.0 * k - 1.0) / (k - 1.0)
        # Two gates, each handing over to proven-up; the cheapest (the spell's age) first.
        if not self._spot_allowed(now, zone, need):
            return super()._early_return(t, progress_ticks, zone)
        found = self._outliving(zone, now)
        if found is None or len(found[1]) < self.min_samples:
            return super()._early_return(t, progress_ticks, zone)
        age, longer = found
        residual = (longer - age).astype(np.float64)
        d, w = self._d, self._w - progress_ticks
        s = self.net.slack(t, progress_ticks)
        table = self._table(zone, now, k)
        done = np.maximum(residual - d, 0.0)
        lost = residual - d < w
        # One lookup for the spells' continuations and, last, the stay's (elementwise: the
        # same figures as two).
        slack = np.full(len(residual) + 1, s - 2 * d - 1)
        slack[-1] = s
        work = np.append(w - done, w - 1.0)
        hold = self._hold_after_loss(t, residual, s - 2 * d - 1, work[:-1])
        if hold is None:
            costs = table.cost_at(slack, work)
            each = np.where(lost, residual + d + costs[:-1], w + d)
        else:
            work[:-1] -= hold
            costs = table.cost_at(slack, work)
            each = np.where(lost, residual + d + k * hold + costs[:-1], w + d)
        take = d + float(each.sum()) / len(each)  # the mean (the same reduction, faster)
        stay = self._stay_cost(
            t,
            table,
            residual_ticks=residual,
            slack_ticks=s,
            work_ticks=w,
            one_tick=k + float(costs[-1]),
        )
        if take < (1.0 - self.margin) * stay:
            return True
        if self.veto_share is not None and take >= (1.0 - self.veto_share) * stay:
            return False
        return super()._early_return(t, progress_ticks, zone)

    def _hold_after_loss(
        self,
        t: float,
        residual_ticks: FloatArr,
        slack_after_ticks: float,
        work_after_ticks: FloatArr,
    ) -> FloatArr | None:
        """On-demand ticks the policy holds after each lost outcome before the table's choice
        resumes; None: none (dp-up prices the continuation as the table's optimum). `dp-up2`
        overrides it with UP's catch-up."""
        del t, residual_ticks, slack_after_ticks, work_after_ticks
        return None

    def _stay_cost(
        self,
        t: int,
        table: SlackValueTable,
        *,
        residual_ticks: FloatArr,
        slack_ticks: float,
        work_ticks: float,
        one_tick: float,
    ) -> float:
        """The expected cost of staying on on-demand, against which a return is priced; here
        `one_tick`, one more on-demand tick and the table's cost from there. A tuning
        candidate (`benchmarks/tune_spot_policy.py`, round 10's `wait`) overrides it."""
        del t, table, residual_ticks, slack_ticks, work_ticks
        return one_tick
