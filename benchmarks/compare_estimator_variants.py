"""Compare variants of the non-LLM time model in one table: reference cross-validation and the
held-out public training set, all in-process (each variant is refitted, nothing is written).

    PYTHONPATH=src python benchmarks/compare_estimator_variants.py --data-dir DIR \
        [--method NAME ...] [--set FIELD=VALUE ...]

DIR is the reference data's throughput folder. Each `--method` is a key of
`estimator_fit.VARIANTS` (default: the bundled choice and the one before it); `--set` overrides
`Method` fields of every listed variant (for example `--set peak_exponent=0.05`). Columns:
leave-one-GPU-out and leave-one-architecture-out MAPE on the reference rows (single / multi-GPU,
each row with its own stack, as `bench_estimator_accuracy.py`), then the held-out training MAPE
(`benchmarks/data/heldout/training.csv`, flagged rows left out, as `bench_estimator_heldout.py`)
with the default stack (`ngc-24`, what `gpurent estimate` uses unless told) and with each row's
own stack, with the median signed error. LLM rows are not affected by these variants (the LLM
path reads only BERT-large's coefficients, whose CUDA-core term is 0) and are left out.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import fields, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_estimator_heldout import DATA_DIR, SUITE_STACK
from estimator_fit import CHOSEN, VARIANTS, Method, Row, ape, fit_all, load_lambda, load_mosaic
from estimator_fit import predict as predict_row

from gpurent.catalog import get_gpu, parse_precision
from gpurent.estimate import estimate
from gpurent.estimate.constants import Constants
from gpurent.workload.models import get_model
from gpurent.workload.spec import Stack, Workload

PREVIOUS = "pooled+host+sm+amp"


def cross_validate(
    lam: Sequence[Row], mos: Sequence[Row], group: Callable[[Row], str], method: Method
) -> tuple[float, float]:
    """(single-GPU, multi-GPU) MAPE %, refitting without each group in turn."""
    single: list[float] = []
    multi: list[float] = []
    for g in sorted({group(r) for r in lam}):
        k = fit_all([r for r in lam if group(r) != g], mos, method=method)
        for r in lam:
            if group(r) == g:
                (single if r.num_gpus == 1 else multi).append(ape(predict_row(r, k), r.throughput))
    return 100 * statistics.fmean(single), 100 * statistics.fmean(multi)


def heldout(rows: Sequence[dict[str, str]], k: Constants, own_stack: bool) -> dict[str, float]:
    """MAPE % overall, on 1 GPU and on several, and the median signed error %."""
    errs: dict[str, list[float]] = {"all": [], "1 GPU": [], "multi": []}
    signed: list[float] = []
    for r in rows:
        stack = Stack(SUITE_STACK[r["suite"]]) if own_stack else Stack.NGC_24
        wl = Workload(
            model=get_model(r["model"]).name,
            precision=parse_precision(r["precision"]),
            batch_size_per_gpu=int(r["batch_size"]),
            stack=stack,
        )
        pred = estimate(wl, get_gpu(r["gpu"]), int(r["num_gpus"]), constants=k).throughput
        meas = float(r["measured_throughput"])
        e = (pred - meas) / meas
        signed.append(e)
        errs["all"].append(abs(e))
        errs["1 GPU" if r["num_gpus"] == "1" else "multi"].append(abs(e))
    out = {key: 100 * statistics.fmean(v) for key, v in errs.items() if v}
    out["signed"] = 100 * statistics.median(signed)
    return out


def parse_overrides(items: Sequence[str]) -> dict[str, float | bool]:
    known = {f.name: f.type for f in fields(Method)}
    out: dict[str, float | bool] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or name not in known:
            sys.exit(f"error: --set {item!r}: use FIELD=VALUE with FIELD one of {sorted(known)}")
        if value.lower() in ("true", "false"):
            out[name] = value.lower() == "true"
            continue
        try:
            out[name] = float(value)
        except ValueError:
            sys.exit(f"error: --set {item!r}: {value!r} is not a number or true/false")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data-dir", type=Path, required=True, help="the reference throughput folder")
    ap.add_argument("--method", action="append", choices=sorted(VARIANTS), help="repeatable")
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE")
    args = ap.parse_args(argv)
    if not args.data_dir.is_dir():
        sys.exit(f"error: --data-dir {args.data_dir}: not a folder")
    overrides = parse_overrides(args.set)
    lam, mos = load_lambda(args.data_dir), load_mosaic(args.data_dir)
    with (DATA_DIR / "training.csv").open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if not (r.get("flags") or "").strip()]
    suffix = "".join(f" {o}" for o in args.set)
    print(
        "| variant | LOGO single / multi | LOAO single / multi | held-out, default stack "
        "(1 GPU / multi; median signed) | held-out, own stack (1 GPU / multi; median signed) |"
    )
    print("|---|---|---|---|---|")
    for name in args.method or [PREVIOUS, CHOSEN]:
        method = replace(VARIANTS[name], **overrides)  # type: ignore[arg-type]
        logo = cross_validate(lam, mos, lambda r: r.gpu.name, method)
        loao = cross_validate(lam, mos, lambda r: r.gpu.architecture, method)
        k = fit_all(lam, mos, method=method)
        cells = []
        for own in (False, True):
            h = heldout(rows, k, own)
            cells.append(
                f"{h['all']:.1f} % ({h['1 GPU']:.1f} / {h['multi']:.1f}; {h['signed']:+.1f})"
            )
        print(
            f"| `{name}`{suffix} | {logo[0]:.1f} / {logo[1]:.1f} % | {loao[0]:.1f} / "
            f"{loao[1]:.1f} % | {cells[0]} | {cells[1]} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
