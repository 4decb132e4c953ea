"""In-process CPU time of `make_plan` on the bundled catalog (no start-up, no rendering).

CPU time (`time.process_time`) instead of wall time, so that a shared, loaded machine still
gives comparable before/after figures: run it against two checkouts one after the other.

    PYTHONPATH=src python benchmarks/bench_plan_cpu.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import time


def main() -> None:
    from gpurent.cli.plan_cmds import load_offers
    from gpurent.estimate import bundled_estimator
    from gpurent.plan import Constraints, make_plan
    from gpurent.pricing.costs import CostAssumptions
    from gpurent.workload import preset

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    opts = parser.parse_args()
    offers = load_offers(None)
    for name in ("llama-lora", "llm-inference", "bert-large-pretrain"):
        times = []
        for _ in range(opts.runs):
            t0 = time.process_time()
            # a fresh estimator per run: its memo starts empty, as in the CLI
            make_plan(preset(name), offers, Constraints(), CostAssumptions(), bundled_estimator())
            times.append(time.process_time() - t0)
        print(
            f"`--preset {name}`, {len(offers)} offers: make_plan CPU median "
            f"{statistics.median(times):.3f} s, best {min(times):.3f} s ({opts.runs} runs)"
        )


if __name__ == "__main__":
    main()
