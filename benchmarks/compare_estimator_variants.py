"""Compare variants of the non-LLM time model in one table: reference cross-validation and the
validation set's non-LLM rows, all in-process (each variant is refitted, nothing is written).

    PYTHONPATH=src python benchmarks/compare_estimator_variants.py --data-dir DIR \
        [--method NAME ...] [--set FIELD=VALUE ...]

DIR is the reference data's throughput folder. Each `--method` is a key of
`estimator_fit.VARIANTS` (default: the bundled choice and the one before it); `--set` overrides
`Method` fields of every listed variant (for example `--set peak_exponent=0.05`). Columns:
leave-one-GPU-out and leave-one-architecture-out MAPE on the reference rows (single / multi-GPU,
each row with its own stack, as `bench_estimator_accuracy.py`), then the MAPE on the validation
set's non-LLM rows (`benchmarks/data/validation/mlperf_throughput.csv`: MLPerf ResNet-50 and
BERT system throughput, as `bench_estimator_validation.py`) with the default stack (`ngc-24`,
what `gpurent estimate` uses unless told) and with `nvidia-dle`, the estimator's closest stack to
MLPerf's tuned one, with the median signed error. The validation set chooses nothing: these
columns are reported, never used to pick a variant (see docs/benchmarks.md). LLM rows are not
affected by these variants (the LLM path reads only BERT-large's coefficients, whose CUDA-core
term is 0) and are left out.

(Until 2026-12-01 these columns read `benchmarks/data/heldout/training.csv`; its sources are now
held out by the project's external reviewers and it was removed.)
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

from bench_estimator_validation import DATA_DIR
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


NON_LLM = ("resnet50", "bert-large-pretrain")


def validation(rows: Sequence[dict[str, str]], k: Constants, stack: Stack) -> dict[str, float]:
    """MAPE % overall, on ResNet-50 and on BERT, and the median signed error %."""
    errs: dict[str, list[float]] = {"all": [], "resnet50": [], "bert-large-pretrain": []}
    signed: list[float] = []
    for r in rows:
        seq = (r.get("seq_len") or "").strip()
        wl = Workload(
            model=get_model(r["model"]).name,
            precision=parse_precision(r["precision"]),
            batch_size_per_gpu=int(r["batch_size"]),
            seq_len=int(seq) if seq else None,
            stack=stack,
        )
        n, nodes = int(r["num_gpus"]), int(r.get("nodes") or 1)
        pred = estimate(wl, get_gpu(r["gpu"]), n, nodes=nodes, constants=k).throughput
        meas = float(r["measured_throughput"])
        e = (pred - meas) / meas
        signed.append(e)
        errs["all"].append(abs(e))
        errs[r["model"]].append(abs(e))
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
    with (DATA_DIR / "mlperf_throughput.csv").open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["model"] in NON_LLM]
    suffix = "".join(f" {o}" for o in args.set)
    print(
        "| variant | LOGO single / multi | LOAO single / multi | validation MLPerf, default stack "
        "(ResNet-50 / BERT; median signed) | validation MLPerf, nvidia-dle stack "
        "(ResNet-50 / BERT; median signed) |"
    )
    print("|---|---|---|---|---|")
    for name in args.method or [PREVIOUS, CHOSEN]:
        method = replace(VARIANTS[name], **overrides)  # type: ignore[arg-type]
        logo = cross_validate(lam, mos, lambda r: r.gpu.name, method)
        loao = cross_validate(lam, mos, lambda r: r.gpu.architecture, method)
        k = fit_all(lam, mos, method=method)
        cells = []
        for stack in (Stack.NGC_24, Stack.NVIDIA_DLE):
            h = validation(rows, k, stack)
            cells.append(
                f"{h['all']:.1f} % ({h['resnet50']:.1f} / {h['bert-large-pretrain']:.1f}; "
                f"{h['signed']:+.1f})"
            )
        print(
            f"| `{name}`{suffix} | {logo[0]:.1f} / {logo[1]:.1f} % | {loao[0]:.1f} / "
            f"{loao[1]:.1f} % | {cells[0]} | {cells[1]} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
