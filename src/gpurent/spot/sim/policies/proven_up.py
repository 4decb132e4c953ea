"""Proven-spell Uniform Progress (`proven-up`, round 6 of issue 16): `breakeven-up` that waits
on on-demand until the spot spell has proven itself.

Where `breakeven-up` loses against failover UP (docs/benchmarks.md, "Spot policy round 6"): in
the 8 validation cells worse than UP beyond noise (d = 0.2 h; 6 of them one V100 zone,
us-east-1d, R = 24 h) it leaves the on-demand catch-up for spot about twice as often as UP
(3.9 against 2.0 times a run) and loses most of those instances within the break-even life
(3.05 against 1.3 a run). The zone's spells are heavy tailed, so the capped mean residual life
at a spell's first tick is long (the mean is carried by the few long spells), while the spell
just begun is most likely one of the many short ones: a flapping zone is re-entered on every
blip, and each loss costs 2D + 1 ticks of slack. Once slack falls below the rule's bound,
lifetime-up's catch-up (UP's line) holds on-demand for hundreds of ticks: a slack tick is worth
far more there than the one on-demand tick the break-even prices it at.

Waiting costs no slack on on-demand: the job progresses there as on spot. So `proven-up` lets
the break-even rule act only once the zone's current spell has lasted `age_factor` x the
break-even life 1 + D (3k - 1) / (k - 1) ticks (heavy tails: a spell that has lasted a while
tends to last; the remaining life is then the capped mean residual at that age, as before).
What it costs is the on-demand bought while waiting, at most age_factor x the break-even per
return; what it saves is the slack of the blips. `age_factor` (0.5) is the one parameter,
chosen on the tuning split of `benchmarks/tune_spot_policy.py` and on synthetic sets of a seed
no split had seen (`--synthetic-seed 12`; docs/benchmarks.md). Everything else,
the safety net included, is `breakeven-up` (and so `lifetime-up`): no feasible deadline is
missed.

Measured (docs/benchmarks.md, "Spot policy round 6"): validation split -2.79% vs failover UP on
average (breakeven-up -2.91%, lifetime-up -1.57%), 0 misses, worst cell +2.17% (breakeven-up
+6.38%), but 2 of 4,320 cells worse than UP beyond noise (breakeven-up 8; one V100 zone,
d = 0.2 h, C/R = 0.8, R = 24 h), so it is a named alternative, not `auto`.
"""

from __future__ import annotations

from gpurent.spot.sim.policies.breakeven_up import BreakEvenUniformProgressPolicy


class ProvenUniformProgressPolicy(BreakEvenUniformProgressPolicy):
    """breakeven-up whose way back from on-demand waits until the spot spell has lasted the
    break-even life (see module)."""

    name = "proven-up"

    age_factor: float | None = 0.5
