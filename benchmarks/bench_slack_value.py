"""Speed of dp-up's slack-value table (`gpurent.spot.sim.slack_value.solve_slack_value`).

Usage: python benchmarks/bench_slack_value.py [--solves 200] [--rows 24] [--cols 24]

Times the default 24 x 24 table for a 38.4 h job with a 48 h deadline on 195 s ticks (the V100
traces' tick): 709 work ticks, 177 slack ticks, a 0.2 h changeover (3.7 ticks), price ratio 3,
one preemption per 100 usable ticks, outages of 5 ticks. Prints the median of five timeit
repeats, per solve.
"""

from __future__ import annotations

import argparse
import statistics
import timeit

from gpurent.spot.sim.slack_value import solve_slack_value

TICK_S = 195.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--solves", type=int, default=200, help="solves per timeit repeat")
    ap.add_argument("--rows", type=int, default=24)
    ap.add_argument("--cols", type=int, default=24)
    args = ap.parse_args()

    def solve() -> None:
        solve_slack_value(
            work_ticks=38.4 * 3600 / TICK_S,
            slack_ticks=9.6 * 3600 / TICK_S,
            changeover_ticks=0.2 * 3600 / TICK_S,
            price_ratio=3.0,
            preemptions_per_tick=0.01,
            outage_ticks=5.0,
            rows=args.rows,
            cols=args.cols,
        )

    runs = timeit.repeat(solve, number=args.solves, repeat=5)
    per_solve_ms = statistics.median(runs) / args.solves * 1e3
    print(
        f"{args.rows} x {args.cols} slack-value table: {per_solve_ms:.3f} ms per solve "
        f"(median of 5 x {args.solves} solves)"
    )


if __name__ == "__main__":
    main()
