"""Accuracy of the serving model on the held-out share of the public serving measurements.

    PYTHONPATH=src python benchmarks/bench_serving_accuracy.py [--json] [--rows]

Scores the bundled constants (src/gpurent/estimate/data/serving_constants.json, written by
fit_serving.py from the other rows) on the rows `serving_rows.Row.held_out` selects, per kind:
prefill (TTFT at low load: at most 4 clients, a Poisson rate, or an engine-level static
batch), decode (TPOT / inter-token latency: a decode step at that load's batch), throughput
(output tokens/s at a concurrency, or offline at saturation) and TTFT under load (more than 4
clients). Targets (issue 19): prefill and decode step times MAPE <= 15 %,
throughput <= 20 %. The fit rows are scored too (in-sample), for comparison.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from serving_rows import KINDS, load_rows, log_residuals, mape

from gpurent.estimate.serving import load_serving_constants

TARGETS = {"prefill": 15.0, "decode": 15.0, "throughput": 20.0}


def scores() -> dict[str, dict[str, dict[str, float]]]:
    """{"held_out" | "fit": {kind: {"mape": %, "rows": n}}}."""
    k = load_serving_constants()
    pairs = log_residuals(load_rows(), k)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for share, held in (("held_out", True), ("fit", False)):
        groups = defaultdict(list)
        for row, r in pairs:
            if row.held_out is held:
                groups[row.kind].append((row, r))
        out[share] = {
            kind: {"mape": round(mape(groups[kind]), 1), "rows": len(groups[kind])}
            for kind in KINDS
            if groups[kind]
        }
        steps = groups["prefill"] + groups["decode"]
        out[share]["step (prefill + decode)"] = {"mape": round(mape(steps), 1), "rows": len(steps)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--rows", action="store_true", help="list every held-out row's error")
    args = ap.parse_args(argv)
    result = scores()
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    for share, kinds in result.items():
        print(f"{share}:")
        for kind, s in kinds.items():
            target = TARGETS.get(kind)
            mark = "" if target is None else f"  (target <= {target:g} %)"
            print(f"  {kind:23s} MAPE {s['mape']:5.1f} %  over {s['rows']:3.0f} rows{mark}")
    if args.rows:
        k = load_serving_constants()
        for row, r in log_residuals([x for x in load_rows() if x.held_out], k):
            pred = row.value / (2.718281828459045**r)
            print(
                f"  {row.kind:16s} {row.source:20s} {row.engine:12s} {row.model[:14]:14s} "
                f"{row.gpu:15s} tp{row.tp} {row.prompt}/{row.output} {row.mode} {row.load:g} "
                f"{row.metric}: measured {row.value:g}, predicted {pred:.4g}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
