"""Break-even Uniform Progress (`breakeven-up`): lifetime-up that prices the way back to spot.

Where `lifetime-up` loses against the hindsight optimum (docs/benchmarks.md, "Policies, round
5"): at tight deadlines most of the gap is on-demand bought while spot is there. On 3 V100
zones at d = 0.2 h, C/R = 0.95 ours holds on-demand for ~206 ticks of a run while some zone has
spot, the optimum for ~34. UP's hysteresis (and lifetime-up's slack reserve for the early
return) keeps the job on on-demand until it is back above a slack line, but on on-demand the
slack does not grow: on spot and on on-demand the job progresses alike, one tick per tick. So
a catch-up on on-demand while spot is up buys nothing for the slack; what switching costs is

- the changeover: D ticks billed at the spot price, and D ticks of slack;
- if the spot instance is lost before the job ends (taken as certain: an upper bound), the
  lost tick and one more changeover: 1 + D ticks of slack and D ticks billed at up to the
  on-demand price;

and what it gains is (k - 1) x spot price per tick spent on spot instead of on-demand, over the
spot's remaining life, capped at the work left. A tick of slack is worth at most one on-demand
tick replaced by spot, (k - 1) x spot price (an upper bound: slack never used is worth
nothing). So, with k = on-demand / spot price now and L the predicted remaining life capped at
the work left (ticks),

    leave on-demand for spot  iff  (k - 1) L > D + k D + (k - 1)(2 D + 1),
    i.e.                          L > 1 + D (3 k - 1) / (k - 1)    (= `break_even_ticks`).

L is E[min(L - a, w) | L > a], the mean over the zone's spells that ended before now and
outlived the current spell's age a of their remaining life capped at the work left w
(`lifetimes.capped_residual_ticks`; never the future); with fewer than `min_samples` such
spells, no evidence: lifetime-up's rule decides. Pricing slack at one on-demand tick holds only
while slack is not scarce; where a lost instance could leave too little for the preemptions
still to come, a slack tick decides whether spot can be taken later at all. So the rule acts
only while the slack after the changeover exceeds 3D + `reserve_factor` (0.5, the one
parameter tuned, on `tune_spot_policy.py --split tune`) x lifetime-up's predicted preemption
losses (D + 1) x work left / mean spell; otherwise lifetime-up decides.

Measured (docs/benchmarks.md, "Policies, round 5"): validation split -2.91% vs failover UP on
average (lifetime-up -1.57%), 0 misses, but 8 of 4,320 cells worse than UP beyond noise
(d = 0.2 h), so it is a named alternative, not `auto`. The safety net still has the last word
(a new spot instance only with room for 2D), so no feasible deadline is missed; everything else
(idle/on-demand by UP's line, the cheapest zone, moves to a much cheaper zone) is lifetime-up.
"""

from __future__ import annotations

from gpurent.spot.sim.lifetimes import capped_residual_of
from gpurent.spot.sim.policies.lifetime_up import LifetimeUniformProgressPolicy


def break_even_ticks(changeover_ticks: float, price_ratio: float) -> float:
    """Remaining spot life (ticks) above which leaving on-demand for spot pays, with a lost
    instance's tick and changeover counted as certain and slack priced at (k - 1) spot ticks:
    1 + D (3k - 1) / (k - 1); infinite where spot is not cheaper (k <= 1)."""
    if price_ratio <= 1.0:
        return float("inf")
    return 1.0 + changeover_ticks * (3.0 * price_ratio - 1.0) / (price_ratio - 1.0)


class BreakEvenUniformProgressPolicy(LifetimeUniformProgressPolicy):
    """lifetime-up that leaves an on-demand catch-up for spot as soon as the spot's predicted
    remaining life pays the changeover and the slack it risks (see module)."""

    name = "breakeven-up"

    min_samples = 10
    """Spells (that ended before now and outlived the current age) needed to trust L."""
    life_margin = 1.0
    """L must exceed this many times the break-even life (1: the rule as derived)."""
    reserve_factor: float | None = 0.5
    """The rule acts only while the slack after the changeover keeps 3D plus this many times
    the slack the rest of the job is predicted to lose to preemptions (lifetime-up's preemption
    reserve): below it slack is scarce and worth more than one on-demand tick. None: no bound
    (tried on the tuning split: far worse where slack is scarce)."""

    age_factor: float | None = None
    """The rule acts only once the zone's current spell has lasted this many times the
    break-even life (round 6, `proven-up`; waiting on on-demand costs no slack). None: at
    any age (round 5)."""

    def _early_return(self, t: int, progress_ticks: float, zone: int) -> bool:
        """Leave on-demand for spot in `zone` (see module), or where lifetime-up would."""
        if not self.net.may_take_spot(t, progress_ticks):
            return False
        now = self._start + t
        spot = self._spot[zone][now]
        if spot >= self._od:
            return False
        k = self._od / spot if spot > 0 else float("inf")
        need = self._d * 3.0 + 1.0 if k == float("inf") else break_even_ticks(self._d, k)
        # Three gates, each handing over to lifetime-up; the cheapest (the spell's age) first.
        if not self._spot_allowed(now, zone, need):
            return super()._early_return(t, progress_ticks, zone)
        life = capped_residual_of(
            self._outliving(zone, now), self._w - progress_ticks, self.min_samples
        )
        if life is None or life <= self.life_margin * need:
            return super()._early_return(t, progress_ticks, zone)
        if self.reserve_factor is None:
            return True
        reserve = self._preemption_reserve(now, progress_ticks)
        if reserve == float("inf"):
            return super()._early_return(t, progress_ticks, zone)
        slack_after = self.net.slack(t, progress_ticks) - self._d
        bound = 3 * self._d + self.reserve_factor / self.need_factor * reserve
        if slack_after > bound and self._loss_affordable(t, progress_ticks, zone, need, life):
            return True
        return super()._early_return(t, progress_ticks, zone)

    def _loss_affordable(
        self, t: int, progress_ticks: float, zone: int, need: float, life: float
    ) -> bool:
        """Whether what a loss of the new spot instance would cost is worth risking; here
        always (the break-even already counts the loss as certain). The round-7 candidates of
        `benchmarks/tune_spot_policy.py` (`lookahead-up`, `lcb`) override it."""
        del t, progress_ticks, zone, need, life
        return True

    def _spot_allowed(self, now: int, zone: int, need: float) -> bool:
        """Whether the zone's current spell has lasted `age_factor` x the break-even life."""
        if self.age_factor is None:
            return True
        age = now - self._start_at[zone][now] + 1
        return age >= self.age_factor * need
