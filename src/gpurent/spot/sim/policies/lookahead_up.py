"""Look-ahead Uniform Progress (`lookahead-up`, round 7 of issue 16): `proven-up` that, before
a return to spot, prices what a loss of the new instance would do to its own slack bound.

Where `proven-up` still loses against failover UP (docs/benchmarks.md, "Spot policy round 6":
one V100 zone, d = 0.2 h, C/R = 0.8, R = 24 h), the break-even return is taken with little
slack above the bound below which the break-even rule stops acting (3D + 0.5 x the predicted
preemption losses, `breakeven-up`'s `reserve_factor`). The break-even life counts a loss as
certain but prices each lost slack tick at one on-demand tick replaced by spot; once a loss
takes the slack below the bound, though, the job sits in an on-demand catch-up until a rule
lets it go again, which can take hundreds of ticks. So, in ticks, with s the slack now, D the
changeover, w the work left and B the bound:

- a loss of the new spell costs 2D + 1 slack (the changeover there, the lost tick, the
  changeover back), leaving s_loss = s - 2D - 1;
- if s_loss - D > B, the rule would still act after the loss: `proven-up` decides;
- else the loss holds the job on on-demand for H ticks: until B (which falls with w, by
  0.5 x (D + 1) / mean spell per tick) or UP's hysteresis line (which falls by 1 - C/R per
  tick) is below the slack, at most w; each held tick costs at most (k - 1) spot;
- the loss happens with probability p: the share of the zone's past spells that outlived
  the current spell's age a and ended within the break-even life more (never the future);
- return only if the expected saving over the break-even, (k - 1) x (L - break-even), exceeds
  `crossing_factor` x p x (k - 1) x H, i.e. L - break-even > c p H (L: the capped mean
  residual life, as in `breakeven-up`). Otherwise lifetime-up's rule decides.

One parameter, c = `crossing_factor`, chosen on the tuning split of
`benchmarks/tune_spot_policy.py` (docs/benchmarks.md, "Spot policy round 7"); the age gate
(0.5) and the slack bound (0.5) are `proven-up`'s. The safety net still has the last word, so no
feasible deadline is missed.
"""

from __future__ import annotations

from gpurent.spot.sim.lifetimes import ending_share
from gpurent.spot.sim.policies.proven_up import ProvenUniformProgressPolicy


class LookaheadUniformProgressPolicy(ProvenUniformProgressPolicy):
    """proven-up that returns to spot near its slack bound only where the spot is likely to
    outlive the break-even or the catch-up a loss would cause is short (see module)."""

    name = "lookahead-up"

    crossing_factor = 1.0
    """Weight of the expected cost of a loss that takes the slack below the bound."""

    def _loss_affordable(
        self, t: int, progress_ticks: float, zone: int, need: float, life: float
    ) -> bool:
        """Expected saving over the break-even beats the expected catch-up a loss would cause."""
        d, now = self._d, self._start + t
        left = self._w - progress_ticks
        factor = self.reserve_factor or 0.0
        reserve = factor / self.need_factor * self._preemption_reserve(now, progress_ticks)
        s_loss = self.net.slack(t, progress_ticks) - 2 * d - 1
        deficit = 3 * d + reserve - (s_loss - d)
        if deficit <= 0:
            return True
        p = ending_share(self._spells[zone], now, need, self.min_samples)
        if p is None:
            return True
        hold = left
        if reserve > 0 and left > 0:
            hold = min(hold, deficit / (reserve / left))
        up_rate = 1.0 - self._w / self._n
        if up_rate > 0:
            up_line = (self._n - self._w) * (1.0 - t / self._n) + self._two_d * self._rate
            hold = min(hold, max(0.0, up_line - s_loss) / up_rate)
        return life - need > self.crossing_factor * p * hold
