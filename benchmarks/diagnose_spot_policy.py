"""Where an online spot policy loses against the hindsight optimum: per run, how each spends its
ticks (docs/benchmarks.md, "Policies, round 5").

Usage: python benchmarks/diagnose_spot_policy.py --trace-dir DIR [--prices FILE
--on-demand-price 3.06] [--price-ratio K] [--set v100|syn-alike|syn-unlike|syn-diurnal|
syn-regional] --zones 0,3,7 [--changeover-hours 0.05] [--cr 0.95] [--deadline-hours 48]
[--starts 30] [--policies lifetime-up,optimal,breakeven-up:r=0.5]

`--set` and the candidate specs (`breakeven-up:r=..`, see `tune_spot_policy.make`) are those of
`tune_spot_policy.py`, whose `--list-worse` prints the arguments of each cell it flags.

For each policy, the mean over runs of: cost (normalised), ticks on on-demand, of those the
ticks while some zone had spot ("od|spot": on-demand bought although spot was there), ticks on
spot, idle ticks (of those while some zone had spot: "idle|spot"), changeovers, preemptions,
and ticks billed for changeovers. Then, per run, how each left on-demand for spot ("returns"):
how many, how many of those spot instances were lost within the zone's break-even life
1 + D (3k - 1) / (k - 1) ticks ("short"), and the ticks before the deadline at which the safety
net committed the job to on-demand for good ("net at", 0 where it never did). A policy is
replayed through the simulator and its actions are recorded, so the figures are the
simulator's own.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tune_spot_policy import make, synthetic_sets

from gpurent.spot.io.trace import align_zones
from gpurent.spot.io.trace_io import attach_prices, load_trace
from gpurent.spot.sim.job_market import (
    IDLE,
    ON_DEMAND,
    JobSpec,
    build_market,
    run_starts,
    tick_plan,
)
from gpurent.spot.sim.optimal import optimal_runs
from gpurent.spot.sim.policies import ONLINE_POLICIES, Policy, RunView
from gpurent.spot.sim.simulator import simulate_run


@dataclass
class Tally:
    """Ticks per kind of action over the runs of one policy."""

    od: list[int] = field(default_factory=list)
    od_spot: list[int] = field(default_factory=list)
    spot: list[int] = field(default_factory=list)
    idle: list[int] = field(default_factory=list)
    idle_spot: list[int] = field(default_factory=list)
    returns: list[int] = field(default_factory=list)
    short: list[int] = field(default_factory=list)
    net_at: list[float] = field(default_factory=list)


class Recorder:
    """Wraps a policy and tallies its actions (until the run ends)."""

    def __init__(self, inner: Policy, tally: Tally, short_ticks: float = 0.0) -> None:
        self.inner = inner
        self.name = inner.name
        self.tally = tally
        self.short_ticks = short_ticks
        self._counts = [0, 0, 0, 0, 0]
        self._ret = [0, 0]
        self._net_at = 0.0
        self._held: int | None = None  # ticks on spot since leaving on-demand
        self._last = IDLE
        self._n = 0.0

    def start(self, run: RunView) -> None:
        self._flush()
        self.inner.start(run)
        self._n = run.plan.deadline_ticks

    def decide(self, t: int, progress_ticks: float, current: int, row: tuple[bool, ...]) -> int:
        if self._held is not None and self._last > ON_DEMAND and current == IDLE:
            self._ret[1] += self._held <= self.short_ticks  # lost soon after the return
            self._held = None
        act = self.inner.decide(t, progress_ticks, current, row)
        net = getattr(self.inner, "net", None)
        if net is not None and net.committed and not self._net_at:
            self._net_at = self._n - t
        if current == ON_DEMAND and act > ON_DEMAND:
            self._ret[0] += 1
            self._held = 0
        if self._held is not None:
            self._held = self._held + 1 if act > ON_DEMAND else None
        self._last = act
        c = self._counts
        if act == ON_DEMAND:
            c[0] += 1
            c[1] += any(row)
        elif act == IDLE:
            c[3] += 1
            c[4] += any(row)
        else:
            c[2] += 1
        return act

    def _flush(self) -> None:
        if any(self._counts):
            for lst, v in zip(
                (self.tally.od, self.tally.od_spot, self.tally.spot, self.tally.idle),
                self._counts,
                strict=False,
            ):
                lst.append(v)
            self.tally.idle_spot.append(self._counts[4])
            self.tally.returns.append(self._ret[0])
            self.tally.short.append(self._ret[1])
            self.tally.net_at.append(self._net_at)
        self._counts = [0, 0, 0, 0, 0]
        self._ret = [0, 0]
        self._net_at = 0.0
        self._held = None
        self._last = IDLE

    def finish(self) -> None:
        self._flush()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trace-dir", type=Path, required=True)
    ap.add_argument("--prices", type=Path)
    ap.add_argument("--on-demand-price", type=float)
    ap.add_argument("--price-ratio", type=float)
    ap.add_argument("--set", default="v100", help="v100 (the --trace-dir) or syn-KIND")
    ap.add_argument("--zones", default="0,1,2")
    ap.add_argument("--changeover-hours", type=float, default=0.05)
    ap.add_argument("--cr", type=float, default=0.95)
    ap.add_argument("--deadline-hours", type=float, default=48.0)
    ap.add_argument("--starts", type=int, default=30)
    ap.add_argument("--policies", default="uniform-progress,lifetime-up,optimal")
    args = ap.parse_args()
    files = sorted(p for p in args.trace_dir.glob("*.csv") if "summary" not in p.name)
    if args.set == "v100":
        traces = [load_trace(f)[0] for f in files]
        if args.prices and args.price_ratio is None:
            traces = attach_prices(traces, args.prices)
    else:
        traces = synthetic_sets()[args.set.removeprefix("syn-")]
    zones = [traces[int(i)] for i in args.zones.split(",")]
    market = build_market(
        align_zones(zones),
        price_ratio=args.price_ratio,
        on_demand_usd_per_hour=args.on_demand_price,
    )
    r_h = args.deadline_hours
    job = JobSpec(
        job_hours=args.cr * r_h, deadline_hours=r_h, changeover_hours=args.changeover_hours
    )
    plan = tick_plan(job, market.gap_hours)
    starts = run_starts(market, job, args.starts)
    print(f"zones {[z.name for z in zones]} d={job.changeover_hours} C/R={args.cr} R={r_h}")
    od_price = market.on_demand_usd_per_hour
    spot_now = float(np.mean(market.spot_usd_per_hour))
    k = od_price / spot_now if spot_now > 0 else float("inf")
    d = plan.changeover_ticks
    short = 1 + d * (3 * k - 1) / (k - 1) if k > 1 else float("inf")
    print(f"break-even life {short:.1f} ticks (k = {k:.2f} from the mean spot price)")
    print(
        "policy | cost | od | od|spot | spot | idle | idle|spot | changeovers | preemptions"
        " | returns | short | net at"
    )
    for name in args.policies.split(","):
        tally = Tally()
        if name == "optimal":
            # The optimum's schedule is replayed through the simulator; record that replay.
            from gpurent.spot.sim import optimal as opt

            orig = opt.simulate_run

            def rec_run(
                policy: Policy, *a: object, tally: Tally = tally, orig: object = orig, **k: object
            ) -> object:
                r = Recorder(policy, tally)
                out = orig(r, *a, **k)  # type: ignore[operator]
                r.finish()
                return out

            opt.simulate_run = rec_run  # type: ignore[assignment]
            try:
                results = optimal_runs(market, plan, starts)
            finally:
                opt.simulate_run = orig
        else:
            factory = ONLINE_POLICIES.get(name) or make(name)
            rec = Recorder(factory(), tally, short)
            results = []
            for s in starts:
                results.append(simulate_run(rec, market, plan, s))
            rec.finish()
        cost = np.mean([r.cost_normalized for r in results])
        ch = np.mean([r.changeovers for r in results])
        pre = np.mean([r.preemptions for r in results])
        misses = sum(1 for r in results if not r.finished)
        print(
            f"{name} | {cost:.3f}{f' ({misses} miss)' if misses else ''} | "
            f"{np.mean(tally.od):.1f} | {np.mean(tally.od_spot):.1f} | {np.mean(tally.spot):.1f} | "
            f"{np.mean(tally.idle):.1f} | {np.mean(tally.idle_spot):.1f} | {ch:.2f} | {pre:.2f} | "
            f"{np.mean(tally.returns):.2f} | {np.mean(tally.short):.2f} | "
            f"{np.mean(tally.net_at):.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
