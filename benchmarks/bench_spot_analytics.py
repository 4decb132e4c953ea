"""Spot analytics on real traces: zones, checkpoint interval, price history; answers and timings.

Usage (paths are arguments; nothing is read from a fixed location):
    PYTHONPATH=src python benchmarks/bench_spot_analytics.py \
        --trace-dir DIR_WITH_ZONE_CSVS [--prices PRICES_JSON] --history FILE.tsv.zst

DIR holds one `date,availability` CSV per zone (files named `*_v100_1.csv` are picked when present,
else every `*.csv`). Prints the figures recorded in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import time
from datetime import timedelta
from pathlib import Path

from gpurent.spot.analytics.history import build_series
from gpurent.spot.analytics.survival import lifetimes_from_trace
from gpurent.spot.analytics.zones import analyse_zones
from gpurent.spot.history_report import analyse_history
from gpurent.spot.interval import interval_from_lifetimes_s
from gpurent.spot.io.price_io import load_price_history, records_from_traces
from gpurent.spot.io.trace_io import attach_prices, load_trace


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--trace-dir", type=Path, required=True)
    ap.add_argument("--prices", type=Path, help="zone -> per-tick prices JSON for the traces")
    ap.add_argument("--history", type=Path, required=True)
    ap.add_argument("--checkpoint-cost-s", type=float, default=60.0)
    ap.add_argument("--restart-s", type=float, default=300.0)
    ap.add_argument("--utc-offset", type=int, default=-5)
    args = ap.parse_args()

    files = sorted(args.trace_dir.glob("*_v100_1.csv")) or sorted(args.trace_dir.glob("*.csv"))
    t0 = time.perf_counter()
    traces = [t for f in files for t in load_trace(f)]
    t_load = time.perf_counter() - t0
    print(f"loaded {len(traces)} traces, {traces[0].ticks} ticks each, in {t_load:.2f} s")

    t0 = time.perf_counter()
    rep = analyse_zones(traces, set_size=3)
    t_zones = time.perf_counter() - t0
    print(f"\n## zones ({rep.subsets_searched} triples searched in {t_zones:.3f} s)")
    for z in rep.zones:
        lt = z.lifetimes
        assert lt is not None
        print(
            f"{z.name}: availability {z.availability * 100:.1f}%, {lt.runs} runs, "
            f"median {lt.median_h:.2f} h, mean {lt.restricted_mean_h:.2f} h, "
            f"p90 {lt.p90_h if lt.p90_h is None else round(lt.p90_h, 2)} h"
        )
    phis = sorted(p.phi for p in rep.pairs if p.phi is not None)
    print(
        f"phi of unavailability: min {phis[0]:.3f}, median {phis[len(phis) // 2]:.3f}, "
        f"max {phis[-1]:.3f}"
    )
    for s in rep.ranked[:3]:
        print(
            f"  {', '.join(s.zones)}: P(all dry) {s.p_all_unavailable * 100:.2f}% measured, "
            f"{s.p_all_unavailable_if_independent * 100:.2f}% if independent"
        )

    t0 = time.perf_counter()
    lives = [lt for tr in traces for lt in lifetimes_from_trace(tr)]
    choice = interval_from_lifetimes_s(
        args.checkpoint_cost_s,
        [x.duration_h for x in lives],
        censored=[x.censored for x in lives],
        restart_s=args.restart_s,
    )
    t_interval = time.perf_counter() - t0
    print(
        f"\n## interval (delta {args.checkpoint_cost_s:g} s, restart {args.restart_s:g} s; "
        f"{choice.lifetimes} lifetimes, {choice.censored} censored, MTTI "
        f"{choice.mtti_s / 3600:.2f} h; {t_interval:.3f} s)"
    )
    for name, o in (
        ("empirical", choice.best),
        ("daly", choice.daly),
        ("young", choice.young),
        ("fixed 15 min", choice.fixed_15min),
    ):
        print(
            f"  {name}: interval {o.interval_s / 60:.1f} min, overhead {o.total * 100:.2f}% "
            f"(checkpoint {o.checkpoint * 100:.2f}%, lost {o.lost_work * 100:.2f}%, "
            f"restart {o.restart * 100:.2f}%)"
        )

    t0 = time.perf_counter()
    recs = load_price_history(args.history)
    series = build_series(recs, products=("Linux/UNIX",))
    hist = analyse_history(series, utc_offset_hours=0)
    t_hist = time.perf_counter() - t0
    print(
        f"\n## history file ({len(recs)} records, {hist.series} Linux series, "
        f"{hist.days_of_data:.2f} days; {t_hist:.2f} s)"
    )
    print(hist.answer)
    for s in hist.backtest.scores:
        print(f"  {s.method}: MAE {s.mae_usd_per_hour}, n={s.forecasts}")

    if args.prices is not None:
        priced = attach_prices(traces, args.prices)
        start = priced[0].start_time
        assert start is not None
        end = start + timedelta(hours=priced[0].duration_hours)
        t0 = time.perf_counter()
        series = build_series(records_from_traces(priced), end=end)
        hist = analyse_history(series, traces=priced, utc_offset_hours=args.utc_offset)
        t_hist = time.perf_counter() - t0
        print(
            f"\n## trace prices ({hist.series} zones, {hist.days_of_data:.1f} days, "
            f"UTC{args.utc_offset:+d}; {t_hist:.2f} s)"
        )
        for t in (hist.price_evening, hist.availability_evening, hist.availability_business_hours):
            assert t is not None
            print(
                f"  {t.quantity} / {t.group}: {t.group_mean:.4f} vs {t.other_mean:.4f} "
                f"({(t.relative_difference or 0) * 100:+.2f}%), p={t.p_value:.4f}: {t.verdict}"
            )
        for s in hist.backtest.scores:
            print(
                f"  {s.method}: MAE {s.mae_usd_per_hour:.5f} $/h, "
                f"rel {(s.mean_relative_error or 0) * 100:.3f}%, n={s.forecasts}"
            )


if __name__ == "__main__":
    main()
