"""Lifetime-aware Uniform Progress (`lifetime-up`, gpurent's default `--policy auto`).

Uniform Progress ("Can't Be Late", Wu et al., NSDI'24, section 5.2: safety net, uniform
progress, hysteresis, exploitation) with one change, in the choice of zone: when it takes spot
(from idle, from on-demand, or after a preemption) it takes the usable zone with the longest
expected remaining spot lifetime, estimated online from the spells each zone showed before now
(`lifetimes.mean_residual_ticks`: never the future). Failover UP takes the first zone that has
spot instead. Every changeover costs d hours without progress; a zone whose spot lasts longer
pays fewer of them. Second, with several zones, UP's catch-up rule ("behind the line ep(t):
go on-demand") is relaxed while spot alone is forecast to cover `forecast_margin` times the
work left: the forecast is the share of the past week's ticks with spot in some zone, less the
changeovers its spells would cost. The safety net is UP's, so feasible deadlines are never
missed. On one zone both changes are off and the policy is exactly UP (target: never worse
than UP on one zone; an oracle of lifetimes gains only ~2% there, NSDI'24 section 6).
"""

from __future__ import annotations

import numpy as np

from gpurent.spot.lifetimes import ZoneSpells, mean_residual_ticks, zone_spells
from gpurent.spot.model import Market
from gpurent.spot.policies.base import RunView
from gpurent.spot.policies.baselines import UniformProgressPolicy


class LifetimeUniformProgressPolicy(UniformProgressPolicy):
    """UP whose spot choice is the zone with the longest predicted remaining lifetime."""

    name = "lifetime-up"

    forecast_margin = 1.25
    """Spot must be forecast to cover this many times the work left before UP's line is relaxed."""
    history_hours = 7 * 24.0
    """How far back the spot forecast looks (a week: covers the diurnal and weekly cycle)."""

    def __init__(self) -> None:
        super().__init__()
        self._spot_rate = 0.0
        self._market: Market | None = None
        self._spells: list[ZoneSpells] = []
        self._start = 0

    def start(self, run: RunView) -> None:
        super().start(run)
        if self._market is not run.market:
            self._market = run.market
            self._spells = [zone_spells(row) for row in run.market.usable]
        self._start = run.start_tick
        self._spot_rate = self._forecast(run) if run.market.zones > 1 else 0.0

    def _forecast(self, run: RunView) -> float:
        """Progress per tick expected from spot alone: the share of past ticks with spot in
        some zone, less the changeovers its spells would cost (0 without history)."""
        back = int(self.history_hours / run.plan.gap_hours)
        hist = run.market.usable[:, max(0, run.start_tick - back) : run.start_tick]
        if hist.shape[1] < 24:
            return 0.0
        anyz = np.asarray(hist.any(axis=0), dtype=np.bool_)
        avail = int(anyz.sum())
        if avail == 0:
            return 0.0
        spells = int((np.diff(anyz.astype(np.int8)) == 1).sum()) + int(anyz[0])
        eff = max(0.0, 1.0 - run.plan.changeover_ticks * spells / avail)
        return float(avail / hist.shape[1] * eff)

    def behind(self, t: int, progress_ticks: int) -> bool:
        if not super().behind(t, progress_ticks):
            return False
        if self._spot_rate <= 0:
            return True
        run = self.run
        assert run is not None
        left = run.plan.work_ticks - progress_ticks
        return self._spot_rate * (run.plan.deadline_ticks - t) < self.forecast_margin * left

    def pick_zone(self, t: int, row: tuple[bool, ...]) -> int:
        usable = [z for z, ok in enumerate(row) if ok]
        if len(usable) <= 1:
            return usable[0] if usable else -1
        now = self._start + t
        best, best_life = -1, -1.0
        for z in usable:
            life = mean_residual_ticks(self._spells[z], now)
            if life > best_life:
                best, best_life = z, life
        return best
