"""Catch-up-priced slack value (`dp-up2`, round 10 of issue 16): `dp-up` whose lost returns
cost the on-demand catch-up the policy itself then runs, and whose priced "no" is final.

Round 9's diagnosis (docs/benchmarks.md, "Spot policy round 9"): dp-up's losing returns are
taken near UP's line, and most of those spells end a few ticks later. dp-up prices a lost
outcome's continuation as V(s - 2D - 1, w'), the table's expected cost to finish, which assumes
the job may take spot again at once, as the table's optimum would. The policy does not: below
UP's line it stays on on-demand (UP's hysteresis) until the line, falling by s0 / N = 1 - C/R
slack ticks a tick, comes down to its slack (lifetime-up's and proven-up's early returns only
shorten this where their own evidence allows). So `dp-up2` prices each lost outcome, a spell
with residual R < w + D (the past spells that outlived the current age, as dp-up), as

    R + D + k c + V(s', w' - c),   s' = s - 2D - 1,  w' = w - (R - D),
    c = clip(hold_share x (s_line(t + R + 1) - s') / (s0 / N), 0, w'),

with s_line(t) = s0 (1 - t / N) + 2D W / N, the slack at UP's line (the job is behind UP while
its progress is below W (t + 2D) / N). The spot run itself lowers the line by R s0 / N, so a
long spell lost late costs little catch-up, a blip near the line costs the whole deficit over
1 - C/R. Since the table's V(s', w') <= k c + V(s', w' - c) (on-demand for c ticks is one of
its choices), the price of a loss only rises.

Second, a veto: where that comparison was made (dp-up's gates passed) and finds taking spot
no cheaper than staying (take >= (1 - `veto_share`) x stay, `veto_share` 0), dp-up2 stays.
dp-up then let proven-up's break-even rule decide, and that rule prices a lost tick of slack at
one on-demand tick, the very underpricing round 9 found (in us-east-1d both rules agreed on
every losing return). Between that and the margin (take cheaper, but by less than 10 %), the
break-even rule still decides, as in dp-up. So dp-up2 leaves on-demand for spot on no tick
where dp-up would stay (`tests/spot/test_dp_up2.py` checks it in lockstep). Everything comes
from the run's plan and the zone's spells that ended before now; the safety net is dp-up's, so
no feasible deadline is missed.

Measured (docs/benchmarks.md, "Spot policy round 10"): tuning split -3.49% vs failover UP (dp-up
-3.49%); V100 validation cells -2.85% (dp-up -2.87%, lifetime-up -1.55%), 0 misses, but dp-up's
cells beyond noise remain (2 V100, 1 seed-12, 3 synthetic validation), so it is a named
alternative, not `auto`. The catch-up term almost never changes a decision there.
"""

from __future__ import annotations

import numpy as np

from gpurent.errors import InputError
from gpurent.spot.sim.policies.dp_up import SlackValueUniformProgressPolicy
from gpurent.spot.sim.slack_value import FloatArr


class CatchUpSlackValuePolicy(SlackValueUniformProgressPolicy):
    """dp-up whose lost returns also cost UP's on-demand catch-up (see module)."""

    name = "dp-up2"

    hold_share = 1.0
    """Share of UP's catch-up after a loss that is priced as held on on-demand (1: all of it)."""
    veto_share: float | None = 0.0
    """Where the priced comparison finds taking spot no cheaper than staying, stay: proven-up's
    break-even rule, which prices a lost slack tick at one on-demand tick, does not overrule it
    (see module)."""

    def __init__(self) -> None:
        super().__init__()
        if not 0.0 <= self.hold_share <= 1.0:
            raise InputError(f"dp-up2 hold share {self.hold_share} out of range: use 0..1")

    def _hold_after_loss(
        self,
        t: float,
        residual_ticks: FloatArr,
        slack_after_ticks: float,
        work_after_ticks: FloatArr,
    ) -> FloatArr | None:
        """UP's catch-up after each lost outcome, in on-demand ticks (see module)."""
        work = np.maximum(work_after_ticks, 0.0)
        fall = self._s0 / self._n  # slack ticks UP's line falls a tick
        if fall <= 0.0:
            return work
        at_loss = t + residual_ticks + 1.0
        line = self._s0 * (1.0 - at_loss / self._n) + self._two_d * self._rate
        hold = self.hold_share * (line - slack_after_ticks) / fall
        return np.minimum(np.maximum(hold, 0.0), work)
