"""Where an online policy's three-zone cost exceeds the hindsight optimum's, by kind of cost
(docs/benchmarks.md, "Spot policy round 11").

Usage: python benchmarks/diagnose_three_zones.py --trace-dir DIR [--prices FILE
--on-demand-price 3.06] [--price-ratio K] [--split tune|validate] [--starts 10]
[--deadline-hours 48] [--policy dp-up2] [--per-cell] [--setting 0.2/0.95,0.05/0.6]

Cells: the V100 zone triples of `tune_spot_policy.py`'s split (random.Random(7), 12 triples,
the first 6 for tuning) x d in {0.05, 0.2} h x C/R in {0.6, 0.8, 0.95}, R = 48 h (the
three-zone cells of `report_spot_policies.py`). Each run of the policy and of the optimum is
replayed through the simulator and every billed tick is booked, normalised by k x C as the
cost is, into: on-demand work ("od"), of it the on-demand bought while some zone had spot
("od|spot"); changeover time on any instance ("co"); spot work at the cheapest spot price
available that tick ("spot@min"); and the spot premium over that price ("premium": a dearer
zone held); and, of "od", what was bought after the safety net had committed the job to
on-demand for good ("od|net"). The books add up to the simulator's cost (checked). Also per
run: idle ticks,
changeovers, preemptions, returns from on-demand to spot and migrations (spot to spot in
another zone without a preemption). Printed: the policy minus the optimum per kind, averaged
over cells, per setting and overall.
"""

from __future__ import annotations

import argparse
import itertools
import random
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tune_spot_policy import make

from gpurent.spot.io.trace import align_zones
from gpurent.spot.io.trace_io import attach_prices, load_trace
from gpurent.spot.sim import optimal as opt
from gpurent.spot.sim.job_market import IDLE, ON_DEMAND, JobSpec, build_market, run_starts
from gpurent.spot.sim.job_market import tick_plan as make_plan
from gpurent.spot.sim.policies import ONLINE_POLICIES, Policy, RunView
from gpurent.spot.sim.simulator import simulate_run

KINDS = (
    "od",
    "od|spot",
    "co",
    "spot@min",
    "premium",
    "idle",
    "changeovers",
    "preempt",
    "returns",
    "migrations",
    "od|net",
)
_EPS = 1e-9


@dataclass
class Books:
    """Per run: the booked costs (normalised) and counts, in the order of KINDS."""

    runs: list[list[float]] = field(default_factory=list)


class Booker:
    """Wraps a policy and books every tick as the simulator bills it."""

    def __init__(self, inner: Policy, books: Books) -> None:
        self.inner = inner
        self.name = inner.name
        self.books = books
        self._row: list[float] | None = None

    def start(self, run: RunView) -> None:
        self._flush()
        self.inner.start(run)
        m, p = run.market, run.plan
        self._spot = m.spot_usd_per_hour
        self._usable = m.usable
        self._od = m.on_demand_usd_per_hour
        self._s = run.start_tick
        self._n, self._w, self._d = p.deadline_ticks, p.work_ticks, p.changeover_ticks
        self._norm = self._od * p.work_ticks  # k x C in price x ticks
        self._co = 0.0
        self._prev = IDLE
        self._row = [0.0] * len(KINDS)

    def decide(self, t: int, progress_ticks: float, current: int, row: tuple[bool, ...]) -> int:
        act = self.inner.decide(t, progress_ticks, current, row)
        b = self._row
        assert b is not None
        if self._prev > ON_DEMAND and current == IDLE:
            b[7] += 1
        if act != current and act != IDLE:
            self._co = self._d
            b[6] += 1
            if current == ON_DEMAND and act > ON_DEMAND:
                b[8] += 1
            if current > ON_DEMAND and act > ON_DEMAND:
                b[9] += 1
        self._prev = act
        if act == IDLE:
            b[5] += 1
            return act
        a = self._s + t
        avail = [self._spot[z, a] for z in range(len(row)) if row[z]]
        price = self._od if act == ON_DEMAND else float(self._spot[act - 1, a])
        span = 1.0 if self._n - t >= 1.0 else self._n - t
        over = min(self._co, span)
        self._co -= over
        run = min(span - over, max(self._w - progress_ticks, 0.0))
        b[2] += price * over / self._norm
        if act == ON_DEMAND:
            b[0] += price * run / self._norm
            if avail:
                b[1] += price * run / self._norm
            net = getattr(self.inner, "net", None)
            if net is not None and net.committed:
                b[10] += price * run / self._norm
        else:
            cheapest = min(avail)
            b[3] += cheapest * run / self._norm
            b[4] += (price - cheapest) * run / self._norm
        return act

    def _flush(self) -> None:
        if self._row is not None:
            self.books.runs.append(self._row)
        self._row = None

    def finish(self) -> None:
        self._flush()


def book_policy(name: str, market, plan, starts) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    """Per run: the books (KINDS) and the simulator's normalised cost."""
    books = Books()
    if name == "optimal":
        orig = opt.simulate_run

        def rec_run(policy, *a, **k):  # type: ignore[no-untyped-def]
            r = Booker(policy, books)
            out = orig(r, *a, **k)
            r.finish()
            return out

        opt.simulate_run = rec_run  # type: ignore[assignment]
        try:
            results = opt.optimal_runs(market, plan, starts)
        finally:
            opt.simulate_run = orig
    else:
        factory = ONLINE_POLICIES.get(name) or make(name)
        rec = Booker(factory(), books)
        results = [simulate_run(rec, market, plan, s) for s in starts]
        rec.finish()
    costs = np.array([r.cost_normalized for r in results])
    return np.array(books.runs), costs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trace-dir", type=Path, required=True)
    ap.add_argument("--prices", type=Path)
    ap.add_argument("--on-demand-price", type=float, default=3.06)
    ap.add_argument("--price-ratio", type=float)
    ap.add_argument("--split", choices=("tune", "validate"), default="tune")
    ap.add_argument("--starts", type=int, default=10)
    ap.add_argument("--deadline-hours", type=float, default=48.0)
    ap.add_argument("--policy", default="dp-up2")
    ap.add_argument("--per-cell", action="store_true")
    ap.add_argument("--setting", help="keep only these d/C-R, e.g. 0.2/0.95,0.05/0.6")
    args = ap.parse_args()
    files = sorted(p for p in args.trace_dir.glob("*.csv") if "summary" not in p.name)
    traces = [load_trace(f)[0] for f in files]
    if args.prices and args.price_ratio is None:
        traces = attach_prices(traces, args.prices)
    combos = list(itertools.combinations(range(len(traces)), 3))
    tri = random.Random(7).sample(combos, 12)
    tri = tri[:6] if args.split == "tune" else tri[6:]
    od = None if args.price_ratio is not None else args.on_demand_price
    per_setting: dict[str, list[np.ndarray]] = {}
    head = "cell | cost ours - opt | " + " | ".join(KINDS)
    print(f"{args.policy} minus optimal, per run means; costs normalised by k x C")
    if args.per_cell:
        print(head)
    for d, f in itertools.product((0.05, 0.2), (0.6, 0.8, 0.95)):
        if args.setting and f"{d}/{f}" not in args.setting.split(","):
            continue
        r_h = args.deadline_hours
        job = JobSpec(job_hours=f * r_h, deadline_hours=r_h, changeover_hours=d)
        for zs in tri:
            m = build_market(
                align_zones([traces[i] for i in zs]),
                price_ratio=args.price_ratio,
                on_demand_usd_per_hour=od,
            )
            plan = make_plan(job, m.gap_hours)
            st = run_starts(m, job, args.starts)
            bp, cp = book_policy(args.policy, m, plan, st)
            bo, co = book_policy("optimal", m, plan, st)
            for b, c in ((bp, cp), (bo, co)):  # the books add up to the simulator's cost
                tot = b[:, 0] + b[:, 2] + b[:, 3] + b[:, 4]
                assert np.allclose(tot, c, atol=1e-6), tot - c
            diff = np.concatenate([[cp.mean() - co.mean()], (bp - bo).mean(axis=0)])
            key = f"d={d} C/R={f}"
            per_setting.setdefault(key, []).append(np.concatenate([[cp.mean(), co.mean()], diff]))
            if args.per_cell:
                print(f"{key} {zs} | " + " | ".join(f"{x:+.4f}" for x in diff), flush=True)
    print("setting | ours | opt | excess | " + " | ".join(KINDS))
    rows = []
    for key, v in per_setting.items():
        mean = np.mean(v, axis=0)
        rows.append(mean)
        print(f"{key} | " + " | ".join(f"{x:+.4f}" for x in mean), flush=True)
    print("all | " + " | ".join(f"{x:+.4f}" for x in np.mean(rows, axis=0)))


if __name__ == "__main__":
    main()
