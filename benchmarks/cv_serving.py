"""Leave-one-source-out cross-validation of the serving model's fit.

    PYTHONPATH=src python benchmarks/cv_serving.py [--jobs 2] [--sources a,b] [--json]

For each source that has low-load TTFT rows (`prefill` kind; `--sources` names others),
refit every constant (`fit_serving.fit`) on all the other sources' rows and score that
source's rows: the error on a publisher, GPU mix and engine version the fit never saw, which
one seeded split cannot show.
Prints per source and kind the MAPE and row count, then the pooled MAPE per kind over every
left-out row, and the spread of the fitted first-token cost and half-occupancy tokens across
the folds (the interval those constants carry). Slow (one full fit per source, about a minute
each on one core): run by hand, not in CI.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from fit_serving import fit
from serving_rows import load_rows, log_residuals, mape

from gpurent.workload.serving import Engine


def _fold(source: str) -> dict[str, object]:
    rows = load_rows()
    k, _ = fit(rows, held=lambda r: r.source == source)
    left = [r for r in rows if r.source == source]
    pairs = log_residuals(left, k)
    by_kind: dict[str, list[tuple[object, float]]] = defaultdict(list)
    for row, res in pairs:
        by_kind[row.kind].append((row, res))
    return {
        "source": source,
        "kinds": {
            kind: {"mape": round(mape(p), 1), "rows": len(p), "abs_pct": _abs_pct(p)}
            for kind, p in by_kind.items()
        },
        "first_token_ms": {e.value: round(k.engines[e].first_token_s * 1e3, 3) for e in Engine},
        "prefill_half_tokens": round(k.prefill_half_tokens, 1),
    }


def _abs_pct(pairs: list[tuple[object, float]]) -> list[float]:
    return [round(100.0 * abs(1.0 - 2.718281828459045 ** (-r)), 2) for _, r in pairs]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument(
        "--sources",
        default="",
        help="comma-separated source ids (default: every source with TTFT rows)",
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rows = load_rows()
    sources = sorted({r.source for r in rows if r.kind == "prefill"})
    if args.sources:
        sources = [s for s in args.sources.split(",") if s]
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        folds = list(pool.map(_fold, sources))
    pooled: dict[str, list[float]] = defaultdict(list)
    for f in folds:
        for kind, s in f["kinds"].items():  # type: ignore[attr-defined]
            pooled[kind].extend(s["abs_pct"])
    summary = {
        kind: {"mape": round(sum(v) / len(v), 1), "rows": len(v)} for kind, v in pooled.items()
    }
    if args.json:
        print(json.dumps({"folds": folds, "pooled": summary}, indent=1))
        return 0
    for f in folds:
        kinds = ", ".join(
            f"{kind} {s['mape']:.1f} % ({s['rows']})"
            for kind, s in f["kinds"].items()  # type: ignore[attr-defined]
        )
        print(
            f"{f['source']:22s} {kinds}  | first token {f['first_token_ms']} ms, "
            f"half at {f['prefill_half_tokens']} tokens"
        )
    print("pooled over the left-out sources:")
    for kind, s in summary.items():
        print(f"  {kind:16s} MAPE {s['mape']:5.1f} %  over {s['rows']:3d} rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
