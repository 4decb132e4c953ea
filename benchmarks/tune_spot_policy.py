"""Tuning harness for spot policies: candidates vs failover uniform progress (UP), every cell.

Usage: python benchmarks/tune_spot_policy.py --trace-dir DIR [--prices FILE]
[--on-demand-price 3.06] [--starts 30] [--split tune|validate|all] [--singles]
[--synthetic yes|no|only] [--candidates "lifetime-up;lifetime-up:f=inf;ez:z=2,n=10;iw"]
[--changeover-hours 0.2] [--cr 0.95] [--deadline-hours 48] [--price-sets k5,real]
[--sets v100,syn-alike] [--list-worse] [--synthetic-seed 11]

Cells: price settings (real V100 prices when --prices is given, and --price-ratio k in
{2, 3, 5}) x d in {0.05, 0.2} h x C/R in {0.6, 0.8, 0.95} x R in {24, 48, 96} h x zone sets
(every single zone, and random zone triples drawn with random.Random(7): the first half for
tuning, the second, disjoint, for validation). Plus four synthetic 9-zone trace sets of other
statistics (generated here with a fixed seed, `synthetic_sets`): zones alike, zones unlike,
strong daily cycle, and frequent shared regional outages. Prints per candidate: mean relative
change vs UP over cells, the worst cell, how many cells are worse by > 0.2% (and how many of
those beyond noise: the paired mean difference over runs > 2 standard errors), deadline misses.
No hindsight optimum here (it is 100x slower); `report_spot_policies.py` has it.

The filters (--changeover-hours, --cr, --deadline-hours, --price-sets, --sets; each takes a
comma-separated list) keep a subset of the same cells with the same runs, so a cell's figures
do not depend on the filter. --list-worse prints every cell worse than UP beyond noise, with
the arguments that `diagnose_spot_policy.py` needs to replay it. --synthetic-seed (default 11,
the sets every split so far used) draws other synthetic sets of the same statistics: with
another seed even their single zones are traces no split has seen, so they can tune a rule
where single zones matter without touching the validation cells.
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from gpurent.errors import InputError
from gpurent.spot.io.trace import Trace, align_zones
from gpurent.spot.io.trace_io import attach_prices, load_trace
from gpurent.spot.sim.job_market import ON_DEMAND, JobSpec, build_market, run_starts
from gpurent.spot.sim.lifetimes import ZoneSpells, residual_bounds_ticks
from gpurent.spot.sim.policies import (
    BreakEvenUniformProgressPolicy,
    CatchUpSlackValuePolicy,
    FlooredOutageIdlePolicy,
    LifetimeUniformProgressPolicy,
    OutageIdleSlackValuePolicy,
    Policy,
    ProvenUniformProgressPolicy,
    SlackValueUniformProgressPolicy,
    UniformProgressPolicy,
)
from gpurent.spot.sim.policies.base import RunView, first_zone
from gpurent.spot.sim.policies.breakeven_up import break_even_ticks
from gpurent.spot.sim.simulator import simulate
from gpurent.spot.sim.slack_value import FloatArr, SlackValueTable

GAP_H = 195 / 3600
TICKS = int(45 * 24 / GAP_H)


class EvidenceZones(LifetimeUniformProgressPolicy):
    """lifetime-up, but a new spot instance goes to zone B instead of failover's zone A only
    when B's lower confidence bound on remaining life exceeds A's upper bound."""

    name = "evidence-zones"
    z_score = 2.0
    min_samples = 10

    def pick_zone(self, t: int, row: tuple[bool, ...]) -> int:
        a = first_zone(row)
        if a < 0 or sum(row) < 2:
            return a
        now = self._start + t
        spells: list[ZoneSpells] = self._spells
        _, hi_a = residual_bounds_ticks(spells[a], now, self.z_score, self.min_samples)
        if math.isinf(hi_a):
            return a
        best, best_lo = a, hi_a
        for z, ok in enumerate(row):
            if ok and z != a:
                lo, _ = residual_bounds_ticks(spells[z], now, self.z_score, self.min_samples)
                if lo > best_lo:
                    best, best_lo = z, lo
        return best


class IdleWait(LifetimeUniformProgressPolicy):
    """lifetime-up, but from idle (e.g. right after a preemption), while not behind UP's line
    and with slack to spare, skip a zone whose remaining life is surely (upper confidence
    bound) below the break-even k D / (k - 1) ticks: wait a tick instead of a changeover."""

    name = "idle-wait"
    z_score = 2.0
    min_samples = 10

    def decide(self, t: int, progress_ticks: float, current: int, row: tuple[bool, ...]) -> int:
        if current < 0 and not self.net.committed and not self.behind(t, progress_ticks):
            z = self.pick_zone(t, row)
            if z >= 0 and self.net.slack(t, progress_ticks) > 4 * self._d:
                now = self._start + t
                spot = self._spot[z][now]
                k = self._od / spot if spot > 0 else float("inf")
                even = self._d * (k / (k - 1.0) if math.isfinite(k) and k > 1 else 1.0)
                _, hi = residual_bounds_ticks(self._spells[z], now, self.z_score, self.min_samples)
                if hi < even:
                    return -1
        return super().decide(t, progress_ticks, current, row)


class SurvivalFloor(BreakEvenUniformProgressPolicy):
    """breakeven-up whose rule acts only where at least `survival_floor` of the past spells
    that outlived the current spell's age lasted the break-even life more (round 6, tried)."""

    survival_floor = 0.5

    def _spot_allowed(self, now: int, zone: int, need: float) -> bool:
        spells = self._spells[zone]
        age = now - int(spells.spell_start_at[now]) + 1
        seen = int(np.searchsorted(spells.ends, now, side="right"))
        longer = spells.lengths[:seen][spells.lengths[:seen] > age]
        if len(longer) < self.min_samples:  # no evidence: as breakeven-up
            return super()._spot_allowed(now, zone, need)
        share = float(np.count_nonzero(longer > age + need)) / len(longer)
        return share >= self.survival_floor and super()._spot_allowed(now, zone, need)


class Lookahead(ProvenUniformProgressPolicy):
    """proven-up (round 7, tried): a return to spot whose loss would take the slack below the
    break-even rule's bound (s - 2D - 1 - D <= 3D + 0.5 x predicted preemption losses) is taken
    only if L - break-even > `crossing_factor` x p x H: p, the share of the zone's past spells
    that outlived the current age and ended within the break-even life more; H, the ticks of
    on-demand the loss would cause (until the bound, falling with the work left, or UP's line,
    falling by 1 - C/R a tick, is below the slack; at most the work left). docs/benchmarks.md,
    "Spot policy round 7"."""

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
        spells = self._spells[zone]
        age = now - int(spells.spell_start_at[now]) + 1
        seen = int(np.searchsorted(spells.ends, now, side="right"))
        longer = spells.lengths[:seen][spells.lengths[:seen] > age]
        p = float(np.count_nonzero(longer - age <= need)) / len(longer)
        hold = left
        if reserve > 0 and left > 0:
            hold = min(hold, deficit / (reserve / left))
        up_rate = 1.0 - self._w / self._n
        if up_rate > 0:
            up_line = (self._n - self._w) * (1.0 - t / self._n) + self._two_d * self._rate
            hold = min(hold, max(0.0, up_line - s_loss) / up_rate)
        return life - need > self.crossing_factor * p * hold


class LifeBound(ProvenUniformProgressPolicy):
    """proven-up whose break-even return needs a lower confidence bound on the capped residual
    life (mean - `life_z` standard errors over the spells that outlived the current age) above
    the break-even, not the mean alone (round 7, tried): few or heavy-tailed spells widen it."""

    life_z = 1.0

    def _loss_affordable(
        self, t: int, progress_ticks: float, zone: int, need: float, life: float
    ) -> bool:
        now = self._start + t
        spells = self._spells[zone]
        age = now - int(spells.spell_start_at[now]) + 1
        seen = int(np.searchsorted(spells.ends, now, side="right"))
        longer = spells.lengths[:seen][spells.lengths[:seen] > age]
        capped = np.minimum(longer - age, self._w - progress_ticks)
        half = self.life_z * float(capped.std(ddof=1)) / math.sqrt(len(capped))
        return life - half > need


class GuardedSlackValue(SlackValueUniformProgressPolicy):
    """dp-up with round 9's safeguards against a flapping zone's lost returns (both from what
    the run has seen so far only):
    - backoff: each early return in this run whose spot instance was preempted within the
      break-even life multiplies that zone's age gate by `backoff` (`forgive`: a return that
      outlived the break-even life resets the zone's count);
    - recent evidence: where at least `recent_samples` of the zone's spells that ended in the
      last `recent_hours` outlived the current age, their mean residual life must exceed the
      break-even life too (a zone flapping now is judged by now, not by its whole history)."""

    backoff: float | None = None
    forgive = False
    recent_hours: float | None = None
    recent_samples = 3

    def start(self, run: RunView) -> None:
        super().start(run)
        self._short: dict[int, int] = {}
        self._bet: tuple[int, int, float] | None = None

    def decide(self, t: int, progress_ticks: float, current: int, row: tuple[bool, ...]) -> int:
        if self._bet is not None:
            zone, since, need = self._bet
            if current == zone + 1:
                if t - since >= need:  # outlived the break-even life: a good return
                    self._bet = None
                    if self.forgive:
                        self._short.pop(zone, None)
            else:
                self._bet = None
                if not row[zone] and t - since < need:  # preempted within it: a short one
                    self._short[zone] = self._short.get(zone, 0) + 1
        act = super().decide(t, progress_ticks, current, row)
        if (
            current == ON_DEMAND
            and act > ON_DEMAND
            and progress_ticks < self._rate * (t + self._two_d)
        ):  # left on-demand while UP's hysteresis would hold it: an early return
            spot = self._spot[act - 1][self._start + t]
            need = break_even_ticks(self._d, self._od / spot) if spot > 0 else 3 * self._d + 1
            self._bet = (act - 1, t, need)
        return act

    def _spot_allowed(self, now: int, zone: int, need: float) -> bool:
        b = self.backoff
        if b is not None and zone in self._short:
            need *= b ** self._short[zone]
        if not super()._spot_allowed(now, zone, need):
            return False
        if self.recent_hours is None or self._market is None:
            return True
        window = int(self.recent_hours / self._market.gap_hours)
        ended = self._ended_by[zone]
        first = ended[now - window] if now >= window else 0
        lengths = self._spells[zone].lengths[first : ended[now]]
        age = now - self._start_at[zone][now] + 1
        longer = lengths[lengths > age]
        if len(longer) < self.recent_samples:
            return True
        return float(longer.sum()) / len(longer) - age > need


class WaitAndSee(CatchUpSlackValuePolicy):
    """dp-up2 whose stay may also be UP's own plan for the current spell (round 10, tried):
    hold on on-demand for UP's catch-up c0 (to UP's line), then take the spell if it still
    lives. Over the past spells outliving the current age (residual R): R <= c0 costs
    k c0 + V(s, w - c0) (the blip passed on on-demand, no slack lost); R > c0 costs k c0 plus
    taking spot then with residual R - c0 (lost: the catch-up from that loss too). The stay is
    the cheaper of that and one more on-demand tick, so a long spell's gain is not credited to
    a return now where UP would ride most of it after its catch-up."""

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
        fall = self._s0 / self._n
        if fall <= 0.0:
            return one_tick
        line = self._s0 * (1.0 - t / self._n) + self._two_d * self._rate
        c0 = min(max((line - slack_ticks) / fall, 1.0), work_ticks)
        k, d = table.price_ratio, self._d
        w = work_ticks - c0
        r = residual_ticks - c0
        alive = r > 0.0
        done = np.maximum(r - d, 0.0)
        lost = r - d < w
        s_lost = slack_ticks - 2 * d - 1
        hold = self._hold_after_loss(t + c0, r, s_lost, w - done)
        assert hold is not None
        n = len(r)
        slack = np.where(alive, s_lost, slack_ticks)
        work = np.where(alive, w - done - hold, w)
        cont = table.cost_at(slack, work)
        later = np.where(lost, d + r + d + k * hold + cont, d + w + d)
        each = np.where(alive, later, cont)
        wait = k * c0 + float(each.sum()) / n
        return min(one_tick, wait)


def dp_up4_class(opts: str) -> type[FlooredOutageIdlePolicy]:
    """dp-up4 (round 12) by its options ',c=..,h=..,z=..,o=0|1,f=outage|line|none,s=..,p=..':
    dp-up3's four, floor_kind, line_share and prior_rho ('p=none': no prior). A bad option is a
    one-line InputError."""
    known = {"c", "h", "z", "o", "f", "s", "p"}
    kv: dict[str, str] = {}
    for item in (o for o in opts.split(",") if o):
        key, eq, value = item.partition("=")
        if not eq or key not in known:
            raise InputError(f"dp-up4 option {item!r} unknown: use {', '.join(sorted(known))}=..")
        kv[key] = value
    base = FlooredOutageIdlePolicy
    try:
        attrs: dict[str, float | int | bool | str | None] = {
            "outage_reserve_factor": float(kv.get("c", base.outage_reserve_factor)),
            "min_history_hours": float(kv.get("h", base.min_history_hours)),
            "min_zones": int(kv.get("z", base.min_zones)),
            "leave_on_demand": kv.get("o", "0") == "1",
            "floor_kind": kv.get("f", base.floor_kind),
            "line_share": float(kv.get("s", base.line_share)),
            "prior_rho": base.prior_rho,
        }
        if "p" in kv:  # 'none': no prior (dp-up2 decides before enough history)
            attrs["prior_rho"] = None if kv["p"] == "none" else float(kv["p"])
    except ValueError as err:
        raise InputError(f"dp-up4 options {opts!r}: {err}") from None
    cls = type("D4", (FlooredOutageIdlePolicy,), attrs)
    cls()  # the policy's own range checks, as one-line InputErrors
    return cls


class ByZones:
    """An `auto` candidate (round 12): lifetime-up on one zone, a multi-zone policy (dp-up4)
    on two or more, chosen per run by the market's zone count."""

    name = "by-zones"

    def __init__(self, many: Callable[[], Policy]) -> None:
        self._one: Policy = LifetimeUniformProgressPolicy()
        self._many = many()
        self._now: Policy = self._one

    def start(self, run: RunView) -> None:
        self._now = self._many if run.market.zones >= 2 else self._one
        self._now.start(run)

    def decide(self, t: int, progress_ticks: float, current: int, row: tuple[bool, ...]) -> int:
        return self._now.decide(t, progress_ticks, current, row)


def make(name: str) -> Callable[[], Policy]:
    """Candidate by spec: 'up'; 'lifetime-up' (':f=..' its need_factor, 'f=inf' round 2's
    rule); 'breakeven-up' (round 5, ':m=..,n=..,r=..,q=..' its life_margin, min_samples,
    reserve_factor ('r=none' for no slack bound), age_factor ('g=..', round 6) and
    survival_floor ('q=..', round 6, tried); 'proven-up' (round 6, ':g=..' its age_factor);
    'lookahead-up' (round 7, ':c=..,g=..' its crossing_factor and age_factor, 'g=none': off);
    'lcb' (round 7, tried: proven-up with a confidence bound on the life, ':z=..');
    'dp-up' (round 8: slack-valued return, ':m=..,h=..,g=..' its margin, hazard_factor and
    age_factor, 'g=none': off; round 9: ':b=..' its backoff, ':f=1' forgive, ':w=..,n=..'
    recent_hours and recent_samples); 'dp-up2' (round 10: lost returns priced with UP's
    catch-up, ':c=..,m=..,v=..' its hold_share, margin and veto_share, 'v=none': no veto,
    'v=m': the margin; ':s=wait' the stay priced as UP's plan for the spell, class WaitAndSee);
    'dp-up3' (round 11: idle through an outage of every zone, ':c=..,h=..,z=..,o=0|1' its
    outage_reserve_factor, min_history_hours, min_zones and leave_on_demand);
    'dp-up4' (round 12: dp-up3 with a floor and a prior, options in `dp_up4_class`);
    'by-zones' (round 12: lifetime-up on one zone, dp-up4 with the same options on more);
    'ez' (evidence zones) and 'iw' (idle wait), both with ':z=..,n=..'."""
    base, _, opts = name.partition(":")
    if base == "dp-up4":  # round 12
        return dp_up4_class(opts)
    if base == "by-zones":  # round 12: an `auto` candidate by zone count
        many = dp_up4_class(opts)
        return lambda: ByZones(many)
    kv = dict(o.split("=") for o in opts.split(",") if o)
    if base == "up":
        return UniformProgressPolicy
    if base == "lifetime-up":  # f=inf: round 2's rule (no preemption reserve)
        return type("LU", (LifetimeUniformProgressPolicy,), {"need_factor": float(kv.get("f", 2))})
    if base == "ez":
        attrs = {"z_score": float(kv.get("z", 2.0)), "min_samples": int(kv.get("n", 10))}
        cls = type("EZ", (EvidenceZones,), attrs)
        return cls
    if base == "breakeven-up":  # round 5; m: life_margin, n: min_samples
        attrs = {
            "life_margin": float(kv.get("m", 1.0)),
            "min_samples": int(kv.get("n", 10)),
            "reserve_factor": None if kv.get("r") == "none" else float(kv.get("r", 0.5)),
            "age_factor": float(kv["g"]) if "g" in kv else None,
        }
        if "q" in kv:
            attrs["survival_floor"] = float(kv["q"])
            return type("BQ", (SurvivalFloor,), attrs)
        return type("BE", (BreakEvenUniformProgressPolicy,), attrs)
    if base == "proven-up":  # round 6; g: age_factor
        g = {"age_factor": float(kv.get("g", ProvenUniformProgressPolicy.age_factor or 1.0))}
        return type("PU", (ProvenUniformProgressPolicy,), g)
    if base == "lookahead-up":  # round 7; c: crossing_factor, g: age_factor ('none': off)
        la: dict[str, float | None] = {
            "crossing_factor": float(kv.get("c", Lookahead.crossing_factor))
        }
        if "g" in kv:
            la["age_factor"] = None if kv["g"] == "none" else float(kv["g"])
        return type("LA", (Lookahead,), la)
    if base == "dp-up":  # round 8; m: margin, h: hazard_factor, g: age_factor ('none': off)
        dp: dict[str, float | None] = {
            "margin": float(kv.get("m", SlackValueUniformProgressPolicy.margin)),
            "hazard_factor": float(kv.get("h", SlackValueUniformProgressPolicy.hazard_factor)),
        }
        if "g" in kv:
            dp["age_factor"] = None if kv["g"] == "none" else float(kv["g"])
        if "b" in kv or "w" in kv:  # round 9's safeguards (class GuardedSlackValue)
            dp["backoff"] = float(kv["b"]) if "b" in kv else None
            dp["forgive"] = kv.get("f") == "1"
            dp["recent_hours"] = float(kv["w"]) if "w" in kv else None
            dp["recent_samples"] = int(kv.get("n", 3))
            return type("GD", (GuardedSlackValue,), dp)
        return type("DP", (SlackValueUniformProgressPolicy,), dp)
    if base == "dp-up2":  # round 10; c: hold_share, m: margin, v: veto_share
        margin = float(kv.get("m", CatchUpSlackValuePolicy.margin))
        veto = kv.get("v", str(CatchUpSlackValuePolicy.veto_share))
        d2: dict[str, float | None] = {
            "hold_share": float(kv.get("c", CatchUpSlackValuePolicy.hold_share)),
            "margin": margin,
            # 'none': dp-up's fallback; 'm': the veto wherever the margin is not met
            "veto_share": None if veto == "none" else margin if veto == "m" else float(veto),
        }
        if kv.get("s") == "wait":  # round 10, tried: the stay may be UP's plan for the spell
            return type("DW", (WaitAndSee,), d2)
        return type("D2", (CatchUpSlackValuePolicy,), d2)
    if base == "dp-up3":  # round 11; c: outage_reserve_factor, h: min_history_hours, z: min_zones
        d3: dict[str, float | int | bool] = {
            "outage_reserve_factor": float(
                kv.get("c", OutageIdleSlackValuePolicy.outage_reserve_factor)
            ),
            "min_history_hours": float(kv.get("h", OutageIdleSlackValuePolicy.min_history_hours)),
            "min_zones": int(kv.get("z", OutageIdleSlackValuePolicy.min_zones)),
            "leave_on_demand": kv.get("o", "0") == "1",
        }
        return type("D3", (OutageIdleSlackValuePolicy,), d3)
    if base == "lcb":  # round 7, tried; z: life_z
        return type("LB", (LifeBound,), {"life_z": float(kv.get("z", 1.0))})
    if base == "iw":
        attrs = {"z_score": float(kv.get("z", 2.0)), "min_samples": int(kv.get("n", 10))}
        return type("IW", (IdleWait,), attrs)
    raise SystemExit(f"unknown candidate {name}")


def synthetic_sets(seed: int = 11) -> dict[str, list[Trace]]:
    """Four 9-zone sets, 45 days of 195 s ticks. A zone is a two-state chain: an up spell is
    short (hazard h_s) with probability q or long (hazard h_l) otherwise (a heavy-tailed
    mixture, so age predicts remaining life); down spells end with probability r per tick;
    the up hazard follows a daily cycle of amplitude a (phase per region); regional outages
    (3 regions of 3 zones) start with probability o per tick and last Exp(mean 1.5 h)."""
    rng = np.random.default_rng(seed)
    h = GAP_H

    def zone_params(kind: str) -> list[dict[str, float]]:
        out = []
        for _ in range(9):
            if kind == "alike":
                p = {"q": 0.6, "ms": 0.3, "ml": 8.0, "md": 1.0, "a": 0.3}
            else:
                p = {
                    "q": float(rng.uniform(0.3, 0.9)),
                    "ms": float(rng.uniform(0.1, 0.6)),
                    "ml": float(rng.uniform(2.0, 20.0)),
                    "md": float(rng.uniform(0.2, 4.0)),
                    "a": 0.8 if kind == "diurnal" else float(rng.uniform(0.0, 0.4)),
                }
            out.append(p)
        return out

    sets = {}
    for kind, outage in (
        ("alike", 1 / 400),
        ("unlike", 1 / 400),
        ("diurnal", 1 / 400),
        ("regional", 1 / 60),
    ):
        params = zone_params(kind)
        hours = np.arange(TICKS) * h
        region_down = np.zeros((3, TICKS), dtype=bool)
        for r in range(3):
            t = 0
            while t < TICKS:
                t += int(rng.exponential(1 / outage * 1.0))
                length = max(1, int(rng.exponential(1.5 / h)))
                region_down[r, t : t + length] = True
                t += length
        traces = []
        for z, p in enumerate(params):
            phase = 2 * math.pi * (z // 3) / 3
            cycle = 1 + p["a"] * np.sin(2 * math.pi * hours / 24 + phase)
            avail = np.zeros(TICKS, dtype=np.int64)
            up, long_spell = True, rng.random() > p["q"]
            u = rng.random(TICKS)
            for t in range(TICKS):
                if up:
                    hz = h / (p["ml"] if long_spell else p["ms"]) * cycle[t]
                    if u[t] < hz:
                        up = False
                else:
                    if u[t] < h / p["md"]:
                        up, long_spell = True, rng.random() > p["q"]
                avail[t] = int(up and not region_down[z // 3, t])
            traces.append(Trace(name=f"{kind}-z{z}", gap_hours=h, available=tuple(avail)))
        sets[kind] = traces
    return sets


def cell(args: tuple[list[Trace], float | None, float | None, JobSpec, int, list[str]]) -> list:
    zones, ratio, od, job, starts, cands = args
    m = build_market(align_zones(zones), price_ratio=ratio, on_demand_usd_per_hour=od)
    st = run_starts(m, job, starts)
    out = []
    for c in cands:
        s = simulate(make(c), m, job, st)
        runs = [r.cost_normalized for r in s.results]
        out.append((s.mean_cost_normalized, s.deadline_misses, runs))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trace-dir", type=Path, required=True)
    ap.add_argument("--prices", type=Path)
    ap.add_argument("--on-demand-price", type=float, default=3.06)
    ap.add_argument("--starts", type=int, default=30)
    ap.add_argument("--split", choices=("tune", "validate", "all"), default="all")
    ap.add_argument("--triples", type=int, default=12)
    ap.add_argument("--singles", action="store_true", help="also every single zone")
    ap.add_argument("--synthetic", choices=("yes", "no", "only"), default="yes")
    ap.add_argument("--candidates", default="lifetime-up;ez", help="separated by ;")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--changeover-hours", help="keep only these d (h), e.g. 0.2")
    ap.add_argument("--cr", help="keep only these C/R, e.g. 0.8,0.95")
    ap.add_argument("--deadline-hours", help="keep only these R (h), e.g. 48")
    ap.add_argument("--price-sets", help="keep only these prices: k2,k3,k5,real")
    ap.add_argument("--sets", help="keep only these trace sets: v100,syn-alike,...")
    ap.add_argument("--list-worse", action="store_true", help="list cells worse beyond noise")
    ap.add_argument("--synthetic-seed", type=int, default=11, help="seed of the synthetic sets")
    args = ap.parse_args()

    def keep(opt: str | None) -> set[str] | None:
        return None if opt is None else {x.strip() for x in opt.split(",") if x.strip()}

    keep_d, keep_cr, keep_r = (
        None if v is None else {round(float(x), 4) for x in v}
        for v in (keep(args.changeover_hours), keep(args.cr), keep(args.deadline_hours))
    )
    keep_prices, keep_sets = keep(args.price_sets), keep(args.sets)
    cands = ["up", *args.candidates.split(";")]
    files = sorted(p for p in args.trace_dir.glob("*.csv") if "summary" not in p.name)
    v100 = [load_trace(f)[0] for f in files]
    groups: list[tuple[str, list[Trace], float | None, float | None]] = []
    prices = ["k2", "k3", "k5"] + (["real"] if args.prices else [])

    def add(label: str, traces: list[Trace], real_ok: bool) -> None:
        rng = random.Random(7)
        combos = list(itertools.combinations(range(len(traces)), 3))
        tri = rng.sample(combos, args.triples)
        half = len(tri) // 2
        tri = {"tune": tri[:half], "validate": tri[half:], "all": tri}[args.split]
        sets = [[i] for i in range(len(traces))] if args.singles else []
        sets += [list(t) for t in tri]
        if keep_sets is not None and label not in keep_sets:
            return
        for pr in prices:
            if pr == "real" and not real_ok:
                continue
            if keep_prices is not None and pr not in keep_prices:
                continue
            for zs in sets:
                ratio = None if pr == "real" else float(pr[1:])
                groups.append(
                    (
                        f"{label}/{pr}/{len(zs)}z/{','.join(map(str, zs))}",
                        [traces[i] for i in zs],
                        ratio,
                        args.on_demand_price if pr == "real" else None,
                    )
                )

    if args.synthetic != "only":
        if args.prices:
            v100 = attach_prices(v100, args.prices)
        add("v100", v100, True)
    if args.synthetic != "no":
        for kind, traces in synthetic_sets(args.synthetic_seed).items():
            add(f"syn-{kind}", traces, False)
    jobs = [
        JobSpec(job_hours=f * r, deadline_hours=r, changeover_hours=d)
        for d, f, r in itertools.product((0.05, 0.2), (0.6, 0.8, 0.95), (24.0, 48.0, 96.0))
        if (keep_d is None or d in keep_d)
        and (keep_cr is None or f in keep_cr)
        and (keep_r is None or r in keep_r)
    ]
    work = [(g, j) for g in groups for j in jobs]
    with ProcessPoolExecutor(args.workers) as ex:
        res = list(
            ex.map(cell, [(g[1], g[2], g[3], j, args.starts, cands) for g, j in work], chunksize=8)
        )
    for ci, c in enumerate(cands[1:], start=1):
        rel = []
        for (g, j), r in zip(work, res, strict=True):
            diff = np.array(r[ci][2]) - np.array(r[0][2])
            se = float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else 0.0
            sig = diff.mean() > 2 * se and diff.mean() > 0.002 * r[0][0]
            rel.append((r[ci][0] / r[0][0] - 1, g[0], j, r[ci][1], sig, r[0][0], r[ci][0]))
        arr = np.array([x[0] for x in rel])
        worst = max(rel, key=lambda x: x[0])
        by_src: dict[str, list[float]] = {}
        for x in rel:
            by_src.setdefault(x[1].split("/")[0] + "/" + x[1].split("/")[2], []).append(x[0])
        print(
            f"{c}: cells {len(rel)} mean {arr.mean():+.2%} best {arr.min():+.2%} "
            f"worse>0.2% {int((arr > 0.002).sum())} (beyond 2 SE: {sum(x[4] for x in rel)}) "
            f"misses {sum(x[3] for x in rel)} "
            f"worst {worst[0]:+.2%} at {worst[1]} d={worst[2].changeover_hours} "
            f"C={worst[2].job_hours:g} R={worst[2].deadline_hours:g}"
        )
        if args.list_worse:
            for x in sorted((x for x in rel if x[4]), key=lambda x: -x[0]):
                set_name, pr, _, zs = x[1].split("/")
                price = (
                    f"--prices PRICES --on-demand-price {args.on_demand_price:g}"
                    if pr == "real"
                    else f"--price-ratio {pr[1:]}"
                )
                print(
                    f"    beyond noise {x[0]:+.2%} (UP {x[5]:.4f}, {c} {x[6]:.4f}): "
                    f"--set {set_name} --zones {zs} {price} "
                    f"--changeover-hours {x[2].changeover_hours:g} "
                    f"--cr {x[2].job_hours / x[2].deadline_hours:.2f} "
                    f"--deadline-hours {x[2].deadline_hours:g}"
                )
        for k, v in sorted(by_src.items()):
            print(f"    {k}: mean {np.mean(v):+.2%} worst {max(v):+.2%} best {min(v):+.2%}")
        by_job: dict[str, list[float]] = {}
        for x in rel:
            key = f"d={x[2].changeover_hours} C/R={x[2].job_hours / x[2].deadline_hours:.2f}"
            by_job.setdefault(key, []).append(x[0])
        for k, v in sorted(by_job.items()):
            worse = sum(1 for y in v if y > 0.002)
            print(f"    {k}: mean {np.mean(v):+.2%} worst {max(v):+.2%} worse>0.2% {worse}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
