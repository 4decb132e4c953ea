"""Fit the estimate intervals (src/gpurent/estimate/data/intervals.json) and check their coverage.

    PYTHONPATH=src python benchmarks/fit_intervals.py --data-dir DIR [--out PATH]

DIR is the reference data's throughput folder (the Lambda, NVIDIA and MosaicML CSVs). The
constants are refitted without each GPU (leave-one-GPU-out, "within-architecture") and without
each architecture (leave-one-architecture-out, "unseen-architecture") of Lambda's rows, and
without each MPT model size for MosaicML's LLM rows (A100 only: "within-architecture/.../llm").
"anchored" residuals are the error of the model's ratio between two rows of the same GPU, model,
precision and batch at different GPU counts (what a user's measurement transfers through),
from the leave-one-GPU-out predictions. Each class's 10th/90th percentile of
log(measured / predicted) is written with its row count (see `gpurent.estimate.uncertainty`).

Calibration check (cross-fitted): for each group, the rows are split by the unit that group
leaves out (architecture, GPU or model size); the quantiles are derived on the other units'
rows only and the left-out unit's rows are tested against that 80% interval. Printed: coverage
overall and per class; target 75-85 %.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from estimator_fit import CHOSEN, VARIANTS, Row, fit_all, load_lambda, load_mosaic, predict

from gpurent.estimate.uncertainty import MIN_ROWS, family_class
from gpurent.workload.models import get_model

OUT = Path(__file__).parents[1] / "src/gpurent/estimate/data/intervals.json"


@dataclass(frozen=True)
class Residual:
    group: str
    scale: str
    family: str
    unit: str  # what the group's cross-validation leaves out (architecture, GPU, model size)
    log_ratio: float  # log(measured / predicted)


def _scale(n: int) -> str:
    return "1gpu" if n == 1 else "multi"


def _family(r: Row) -> str:
    return family_class(get_model(r.model).family)


def out_of_fold(
    rows: Sequence[Row], unit: Callable[[Row], str], fit: Callable[[Sequence[Row]], object]
) -> list[tuple[Row, float]]:
    """(row, prediction) with each unit's rows predicted by constants fitted without them."""
    out: list[tuple[Row, float]] = []
    for u in sorted({unit(r) for r in rows}):
        k = fit([r for r in rows if unit(r) != u])
        out.extend((r, predict(r, k)) for r in rows if unit(r) == u)  # type: ignore[arg-type]
        print(f"  left out {u}", file=sys.stderr, flush=True)
    return out


def residuals(lam: list[Row], mos: list[Row]) -> list[Residual]:
    method = VARIANTS[CHOSEN]
    res: list[Residual] = []
    print("leave-one-architecture-out (Lambda)", file=sys.stderr)
    for r, p in out_of_fold(
        lam, lambda r: r.gpu.architecture, lambda t: fit_all(t, mos, method=method)
    ):
        res.append(
            Residual(
                "unseen-architecture",
                _scale(r.num_gpus),
                _family(r),
                r.gpu.architecture,
                math.log(r.throughput / p),
            )
        )
    print("leave-one-GPU-out (Lambda)", file=sys.stderr)
    logo = out_of_fold(lam, lambda r: r.gpu.name, lambda t: fit_all(t, mos, method=method))
    for r, p in logo:
        res.append(
            Residual(
                "within-architecture",
                _scale(r.num_gpus),
                _family(r),
                r.gpu.name,
                math.log(r.throughput / p),
            )
        )
    print("leave-one-model-size-out (MosaicML)", file=sys.stderr)
    lomo = out_of_fold(mos, lambda r: r.model, lambda t: fit_all(lam, t, method=method))
    for r, p in lomo:
        res.append(
            Residual(
                "within-architecture",
                _scale(r.num_gpus),
                "llm",
                r.model,
                math.log(r.throughput / p),
            )
        )
    # anchored: a measurement of the same GPU/model/precision/batch at another GPU count
    by: dict[tuple[str, str, str, int, int | None], list[tuple[Row, float]]] = defaultdict(list)
    for r, p in (*logo, *lomo):
        by[(r.gpu.name, r.model, r.precision.value, r.batch, r.seq_len)].append((r, p))
    for (gpu, *_), pairs in by.items():
        for a, pa in pairs:
            for b, pb in pairs:
                if a.num_gpus == b.num_gpus:
                    continue
                err = math.log(b.throughput / a.throughput) - math.log(pb / pa)
                res.append(Residual("anchored", _scale(b.num_gpus), _family(b), gpu, err))
    return res


def quantiles(values: Sequence[float]) -> tuple[float, float]:
    q10, q90 = np.percentile(np.asarray(values), [10.0, 90.0])
    return float(q10), float(q90)


def classes(res: Sequence[Residual], widen: float = 1.0) -> dict[str, dict[str, float | int]]:
    """Every class with >= MIN_ROWS rows, and each group's pooled class; the 10th-90th
    percentile range widened by `widen` about its centre (log scale)."""
    buckets: dict[str, list[float]] = defaultdict(list)
    for r in res:
        for key in (f"{r.group}/{r.scale}/{r.family}", f"{r.group}/{r.scale}/*", f"{r.group}/*/*"):
            buckets[key].append(r.log_ratio)
    out: dict[str, dict[str, float | int]] = {}
    for key in sorted(buckets):
        vals = buckets[key]
        if len(vals) >= MIN_ROWS or key.endswith("/*/*"):
            q10, q90 = quantiles(vals)
            centre, half = (q10 + q90) / 2.0, (q90 - q10) / 2.0
            out[key] = {
                "log_low": round(centre - widen * half, 4),
                "log_high": round(centre + widen * half, 4),
                "log_q10": round(q10, 4),
                "log_q90": round(q90, 4),
                "rows": len(vals),
            }
    return out


def lookup(table: dict[str, dict[str, float | int]], r: Residual) -> tuple[str, float, float]:
    for key in (f"{r.group}/{r.scale}/{r.family}", f"{r.group}/{r.scale}/*", f"{r.group}/*/*"):
        if key in table:
            return key, float(table[key]["log_low"]), float(table[key]["log_high"])
    raise KeyError(r.group)


WIDEN_GRID = tuple(1.0 + 0.05 * i for i in range(41))  # 1.0 ... 3.0
TARGET = 0.8


def _inside(train: Sequence[Residual], test: Sequence[Residual], widen: float) -> list[int]:
    table = classes(train, widen)
    out = []
    for r in test:
        _, lo, hi = lookup(table, r)
        out.append(int(lo <= r.log_ratio <= hi))
    return out


def fit_widen(res: Sequence[Residual]) -> float:
    """The smallest widening of the 10th-90th percentile range whose cross-fitted coverage
    (leave one unit out, quantiles from the others) reaches 80 % on `res` (one group): the
    units differ systematically (an architecture's bias is shared by all its rows), which the
    pooled percentiles of the others underestimate."""
    units = sorted({r.unit for r in res})
    folds = [([r for r in res if r.unit != u], [r for r in res if r.unit == u]) for u in units]
    for widen in WIDEN_GRID:
        hits = [h for train, test in folds for h in _inside(train, test, widen)]
        if sum(hits) >= TARGET * len(hits):
            return widen
    return WIDEN_GRID[-1]


def coverage(res: Sequence[Residual]) -> dict[str, dict[str, tuple[int, int]]]:
    """Per group: slice -> (inside, rows) of the nested cross-fitted check: for each left-out
    unit, the widening is fitted (`fit_widen`) and the quantiles derived on the other units
    only, and the left-out unit's rows are tested against that interval."""
    out: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for group in sorted({r.group for r in res}):
        mine = [r for r in res if r.group == group]
        for unit in sorted({r.unit for r in mine}):
            train = [r for r in mine if r.unit != unit]
            test = [r for r in mine if r.unit == unit]
            widen = fit_widen(train)
            for r, inside in zip(test, _inside(train, test, widen), strict=True):
                for k in ("all", f"{r.scale}/{r.family}"):
                    out[group][k][0] += inside
                    out[group][k][1] += 1
    return {g: {k: (v[0], v[1]) for k, v in d.items()} for g, d in out.items()}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data-dir", type=Path, required=True, help="the reference throughput folder")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument(
        "--residuals", type=Path, help="cache file: read the residuals if it exists, else write"
    )
    args = ap.parse_args(argv)
    if not args.data_dir.is_dir():
        sys.exit(f"error: --data-dir {args.data_dir}: not a folder")
    lam, mos = load_lambda(args.data_dir), load_mosaic(args.data_dir)
    if args.residuals is not None and args.residuals.exists():
        raw = json.loads(args.residuals.read_text(encoding="utf-8"))
        res = [Residual(**r) for r in raw]
    else:
        res = residuals(lam, mos)
        if args.residuals is not None:
            args.residuals.write_text(json.dumps([asdict(r) for r in res]), encoding="utf-8")
    widen = {g: fit_widen([r for r in res if r.group == g]) for g in sorted({r.group for r in res})}
    table: dict[str, dict[str, float | int]] = {}
    for g, w in widen.items():
        table.update(classes([r for r in res if r.group == g], w))
    cov = coverage(res)
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    files = ("lambda_train_throughput.csv", "mosaic_mpt_a100.csv")
    doc = {
        "provenance": {
            "command": "PYTHONPATH=src python benchmarks/fit_intervals.py --data-dir <throughput "
            "data dir>",
            "fitted_on": datetime.now(UTC).date().isoformat(),
            "code_commit": head,
            "method": CHOSEN,
            "data": {f: f"sha256 {_sha(args.data_dir / f)}" for f in files},
            "sources": [
                "lambda_train_throughput.csv: lambdal/deeplearning-benchmark commit aa5addb6",
                "mosaic_mpt_a100.csv: mosaicml/llm-foundry commit 8c8dd48f "
                "scripts/train/benchmarking/README.md",
            ],
            "quantity": (
                "log_q10/log_q90: 10th/90th percentile of log(measured / predicted), "
                "cross-validated; log_low/log_high: that range widened about its centre by the "
                "group's factor, fitted so that leave-one-unit-out coverage reaches 80 %"
            ),
            "widen": widen,
            "coverage": {
                g: {k: round(i / n, 3) for k, (i, n) in sorted(d.items())} for g, d in cov.items()
            },
        },
        "classes": table,
    }
    args.out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(table)} classes from {len(res)} residuals\n")
    print(f"widening per group: {widen}\n")
    print(
        "| class | rows | 10th-90th percentile (x predicted) | 80% interval, widened |\n"
        "|---|---|---|---|"
    )
    for key, v in table.items():
        lo, hi = math.exp(float(v["log_low"])), math.exp(float(v["log_high"]))
        q10, q90 = math.exp(float(v["log_q10"])), math.exp(float(v["log_q90"]))
        print(f"| {key} | {v['rows']} | {q10:.2f}-{q90:.2f} | {lo:.2f}-{hi:.2f} |")
    print("\n| group | slice | coverage of the nested cross-fitted 80% interval |\n|---|---|---|")
    for g, d in sorted(cov.items()):
        for k in sorted(d, key=lambda s: (s != "all", s)):
            i, n = d[k]
            print(f"| {g} | {k} | {100 * i / n:.1f} % ({i}/{n}) |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
