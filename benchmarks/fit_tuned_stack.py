"""Fit the `tuned` software stack (MLPerf-grade code) on MLPerf Training results, by round.

Reads `benchmarks/data/validation/mlperf_throughput.csv` (MLPerf Training v3.0, v3.1, v4.1 and
v5.0 system throughput from the public mlcommons/training_results_* logs; v4.0 is held out and
was never read; provenance in that folder's README.md). Only the rows of the `--fit` rounds are
fitted; the `--test` round is never fitted and its error is the figure reported. Time to train
is samples to converge / throughput; the samples to converge are the same for the prediction
and the measurement of a row (they come from the same result logs), so the time-to-train error
of a row is measured throughput / predicted throughput - 1 (+ = the estimate is too slow).

Parameters (docs/estimator.md, "Which software stack it assumes"):
- per model (`resnet50`, `bert-large-pretrain`, `llm-lora` for every decoder-LLM LoRA; with
  `--pretrain` also `llm` for decoder-LLM pretraining, fitted on
  `benchmarks/data/mlperf_llm_pretrain_fit.csv`: GPT-3 175B of v3.0/v3.1 and Llama 3.1 405B of
  v5.0, FP8, rebuilt by `benchmarks/data/validation/extract_fp8_mlperf.py V30 V31 V50`; bundled
  since the speed divides only the non-attention part of the step, see docs/benchmarks.md): the
  speed of the one-GPU step relative to the default stack's fitted model, the geometric mean of
  measured / predicted over the fit rows (iterated, since communication does not scale with it);
- decoder-LLM training, chosen jointly by a grid on the LLM rows' mean squared log ratio: the
  size term, the share of the tensor-parallel collectives hidden on NVIDIA GPUs
  (`TP_OVERLAPS`) and the stretch of attention under context parallelism (`CP_ATTENTION`:
  1 + a (cp - 1) / cp); the leave-one-round-out interval refits keep the chosen stretch;
- the data-parallel fabric: `overlap` (share of backward that hides the gradient all-reduce)
  and `sync_per_doubling` (per doubling of GPUs), by grid search on the median |log ratio|;
- assumed, not fitted: 3,200 Gbit/s per node between nodes (8 x 400 Gbit/s InfiniBand NDR
  rails, the fabric of the DGX H100/H200/B200 reference systems the multi-node submissions
  describe), used where a row gives no `inter_node_gbps`.

Run from the repository root:

    PYTHONPATH=src python benchmarks/fit_tuned_stack.py                 # fit v3.0, v3.1, v5.0
    PYTHONPATH=src python benchmarks/fit_tuned_stack.py --pretrain --write   # ... and bundle it
    PYTHONPATH=src python benchmarks/fit_tuned_stack.py --loro          # leave-one-round-out
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import sys
from collections import defaultdict
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from gpurent.catalog import get_gpu, parse_precision
from gpurent.catalog.specs import all_gpus
from gpurent.errors import GpurentError
from gpurent.estimate.constants import (
    TUNED_FILE,
    CommCoeffs,
    Constants,
    StackCoeffs,
    parse_constants,
)
from gpurent.estimate.estimator import Estimator
from gpurent.estimate.uncertainty import MIN_ROWS, WIDEN
from gpurent.plan.layouts import lay_out
from gpurent.workload.models import get_model
from gpurent.workload.spec import (
    Sharding,
    Stack,
    Task,
    Workload,
    parse_recompute,
    parse_sharding,
)

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data" / "validation" / "mlperf_throughput.csv"
# LLM pretraining rows of the fit rounds only (v4.1, v5.1 and v6.0 pretraining rows are the
# held-out check in validation/fp8_moe.csv)
PRETRAIN_FIT = ROOT / "benchmarks" / "data" / "mlperf_llm_pretrain_fit.csv"
MLPERF_8GPU = ROOT / "benchmarks" / "data" / "mlperf_training_8gpu.csv"
CALIBRATION = ROOT / "src" / "gpurent" / "estimate" / "data" / "calibration.json"
OUT = ROOT / "src" / "gpurent" / "estimate" / "data" / TUNED_FILE
ROUNDS = ("v3.0", "v3.1", "v4.1", "v5.0", "v5.1")
ASSUMED_INTER_NODE_GBPS = 3200.0
OVERLAPS = (0.0, 0.3, 0.6, 0.9, 1.2, 1.5, 2.0)
MIN_ARCH_ROWS = 10  # fit rows an architecture needs for its own speed factor
SYNCS = (0.9, 0.92, 0.94, 0.96, 0.98, 1.0)
# the share of the tensor-parallel collectives an LLM step hides on NVIDIA GPUs
# (StackCoeffs.tp_comm_overlap: NVIDIA's MLPerf LLM configs set TP_COMM_OVERLAP=1), chosen with
# the size term on the LLM rows
TP_OVERLAPS = (0.0, 0.25, 0.5, 0.75, 1.0)
# how much longer attention runs under context parallelism, 1 + a (cp - 1) / cp
# (StackCoeffs.cp_attention_overhead), chosen with the size term and the TP overlap
CP_ATTENTION = (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0)
DESCRIPTION = Stack.TUNED.description


def speed_key(model: str, task: str = "finetune-lora") -> str:
    """The `speed` key of a row: `llm-lora` / `llm` (LoRA / pretraining) for decoder LLMs."""
    info = get_model(model)
    if not info.is_llm:
        return info.key
    return "llm-lora" if task.startswith("finetune") else "llm"


def row_key(r: dict[str, str]) -> str:
    return speed_key(r["model"], (r.get("task") or "training").strip())


def arch_of(r: dict[str, str]) -> str:
    return get_gpu(r["gpu"]).architecture


def effective_keys(rows: list[dict[str, str]], pooled: frozenset[str] = frozenset()) -> list[str]:
    """Each row's speed key: "KEY@ARCH" where the architecture has `MIN_ARCH_ROWS` rows of that
    key among `rows` (and KEY is not in `pooled`), else the pooled "KEY"."""
    counts: dict[str, int] = defaultdict(int)
    for r in rows:
        counts[f"{row_key(r)}@{arch_of(r)}"] += 1
    out = []
    for r in rows:
        own = f"{row_key(r)}@{arch_of(r)}"
        mine = counts[own] >= MIN_ARCH_ROWS and row_key(r) not in pooled
        out.append(own if mine else row_key(r))
    return out


def load(path: Path = DATA, pretrain: Path | None = None) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r.get("stack") == "tuned"]
    if pretrain is not None:
        with pretrain.open(newline="") as fh:
            rows += [r for r in csv.DictReader(fh) if r.get("stack") == "tuned"]
    for r in rows:
        r["_round"] = r["suite"].removeprefix("mlperf-")
    return rows


def workload(r: dict[str, str]) -> Workload:
    shard = (r.get("sharding") or "").strip()
    return Workload(
        model=get_model(r["model"]).name,
        task=Task((r.get("task") or "training").strip()),
        precision=parse_precision(r["precision"]),
        batch_size_per_gpu=int(r["batch_size"]),
        seq_len=int(r["seq_len"]) if (r.get("seq_len") or "").strip() else None,
        sharding=parse_sharding(shard) if shard else Sharding.NONE,
        tensor_parallel=int(r.get("tp") or 1),
        pipeline_parallel=int(r.get("pp") or 1),
        context_parallel=int(r.get("cp") or 1),
        expert_parallel=int(r.get("ep") or 1),
        virtual_pipeline_stages=int(r.get("vp") or 1),
        gradient_accumulation=int(r.get("grad_accum") or 1),
        recompute=parse_recompute(r.get("recompute") or "none"),
        lora_rank=int(r.get("lora_rank") or 16),
        stack=Stack.TUNED,
    )


def laid_workload(r: dict[str, str], engine: Estimator, stack: Stack = Stack.TUNED) -> Workload:
    """`workload(r)` on `stack`; a row whose `layout` is `auto` (its source does not publish
    the layout) laid out as `gpurent plan` would, as `estimate --from-csv` does."""
    wl = replace(workload(r), stack=stack)
    if (r.get("layout") or "").strip() != "auto":
        return wl
    gbps = (r.get("inter_node_gbps") or "").strip()
    return lay_out(
        engine,
        wl,
        gpu=get_gpu(r["gpu"]),
        num_gpus=int(r["num_gpus"]),
        nodes=int(r.get("nodes") or 1),
        inter_node_gbps=float(gbps) if gbps else None,
    ).workload


NO_SIZE = (0.0, 0.0)
# the size term's grid (`fit`): the layer size per GPU (active parameters) at and above which
# the `llm` speed holds, and the exponent of its fall below it
SIZE_REFS = tuple(x * 1e9 for x in (0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.8))
SIZE_EXPONENTS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0)


def tuned_coeffs(
    speed: dict[str, float],
    overlap: float,
    sync: float,
    size: tuple[float, float] = NO_SIZE,
    tp_overlap: float = 0.0,
    cp_attention: float = 0.0,
) -> StackCoeffs:
    return StackCoeffs(
        description=DESCRIPTION,
        comm=CommCoeffs(
            nvlink_efficiency=0.8,
            pcie_efficiency=0.7,
            no_p2p_factor=1.0,
            overlap=overlap,
            sync_per_doubling=sync,
            default_inter_node_gbps=ASSUMED_INTER_NODE_GBPS,
            inter_node_efficiency=0.8,
            ddp_bus_gbps_cap=0.0,
        ),
        speed=dict(speed),
        size_ref_params=size[0],
        size_exponent=size[1],
        tp_comm_overlap=tp_overlap,
        cp_attention_overhead=cp_attention,
    )


def ratios(rows: list[dict[str, str]], base: Constants, sk: StackCoeffs) -> list[float | None]:
    """measured / predicted throughput per row (None where the estimator rejects the row)."""
    k = replace(base, stacks={**base.stacks, Stack.TUNED.value: sk})
    engine = Estimator(constants=k, gpus=all_gpus(), max_cached=0)
    out: list[float | None] = []
    for r in rows:
        try:
            gbps = (r.get("inter_node_gbps") or "").strip()
            est = engine.estimate(
                laid_workload(r, engine),
                get_gpu(r["gpu"]),
                int(r["num_gpus"]),
                nodes=int(r.get("nodes") or 1),
                inter_node_gbps=float(gbps) if gbps else None,
            )
            out.append(float(r["measured_throughput"]) / est.throughput)
        except (GpurentError, ValueError) as exc:
            print(f"skipped {r['model']} {r['num_gpus']}x {r['gpu']}: {exc}", file=sys.stderr)
            out.append(None)
    return out


def fit_speeds(
    rows: list[dict[str, str]],
    base: Constants,
    overlap: float,
    sync: float,
    *,
    per_arch: bool = True,
    fixed: dict[str, float] | None = None,
    size: tuple[float, float] = NO_SIZE,
    pooled: frozenset[str] = frozenset(),
    tp_overlap: float = 0.0,
    cp_attention: float = 0.0,
) -> dict[str, float]:
    """The speed factors of `rows`' keys for a fixed fabric (`overlap`, `sync`); the factors
    in `fixed` are kept as they are and used for rows of other keys."""
    eff = effective_keys(rows, pooled) if per_arch else [row_key(r) for r in rows]
    speed = {**(fixed or {}), **dict.fromkeys(sorted(set(eff)), 1.0)}
    for _ in range(10):  # comm and attention do not scale with the speed: iterate
        rs = ratios(rows, base, tuned_coeffs(speed, overlap, sync, size, tp_overlap, cp_attention))
        by_key: dict[str, list[float]] = defaultdict(list)
        for key, x in zip(eff, rs, strict=True):
            if x is not None:
                by_key[key].append(math.log(x))
        for key, logs in by_key.items():
            speed[key] *= math.exp(statistics.fmean(logs))
        # the pooled factor of a model key, for architectures without their own:
        # the geometric mean of the factors of all its rows
        pooled: dict[str, list[float]] = defaultdict(list)
        for r, key in zip(rows, eff, strict=True):
            if key != row_key(r):
                pooled[row_key(r)].append(math.log(speed[key]))
        for r, key in zip(rows, eff, strict=True):
            if key == row_key(r) and key in pooled:
                pooled[key].append(math.log(speed[key]))
        for key, logs in pooled.items():
            speed[key] = math.exp(statistics.fmean(logs))
    return {k: round(v, 4) for k, v in speed.items()}


def fit(
    rows: list[dict[str, str]],
    base: Constants,
    per_arch: bool = True,
    size: bool = False,
    pooled: frozenset[str] = frozenset(),
    cp_grid: tuple[float, ...] = CP_ATTENTION,
) -> tuple[StackCoeffs, float]:
    """Speed factors and (overlap, sync) minimising the median |log ratio| on `rows`.

    Two stages: the fabric (overlap, sync) and the speeds of the non-LLM models (ResNet-50,
    BERT) are fitted on those rows by grid search; the fabric is all they use (the LLM path
    prices its own collectives, `llm_comm_times`, and never reads overlap or sync). The decoder-
    LLM speeds (`llm-lora`, `llm` for pretraining) are then fitted on the LLM rows alone, so
    that they cannot move the fabric's choice through the median."""
    first = [r for r in rows if not get_model(r["model"]).is_llm]
    pre = [r for r in rows if get_model(r["model"]).is_llm]
    best: tuple[float, StackCoeffs] | None = None
    for overlap in OVERLAPS:
        for sync in SYNCS:
            speed = fit_speeds(first, base, overlap, sync, per_arch=per_arch)
            sk = tuned_coeffs(speed, overlap, sync)
            rs = [x for x in ratios(first, base, sk) if x is not None]
            loss = statistics.median(abs(math.log(x)) for x in rs)
            if best is None or loss < best[0]:
                best = (loss, sk)
    assert best is not None
    loss, sk = best
    if pre:
        c = sk.comm
        grid = [NO_SIZE]
        if size and any(not workload(r).task.trains_adapters for r in pre):
            grid = [(ref, ex) for ref in SIZE_REFS for ex in SIZE_EXPONENTS if ex > 0.0]
            grid.append(NO_SIZE)
        best_pre: tuple[float, StackCoeffs] | None = None
        if not any(int(r.get("cp") or 1) > 1 for r in pre):
            cp_grid = (0.0,)  # no row to tell
        for tp_overlap, sz, cpa in ((t, z, a) for t in TP_OVERLAPS for z in grid for a in cp_grid):
            speed = fit_speeds(
                pre,
                base,
                c.overlap,
                c.sync_per_doubling,
                per_arch=per_arch,
                pooled=pooled,
                fixed=sk.speed,
                size=sz,
                tp_overlap=tp_overlap,
                cp_attention=cpa,
            )
            cand = tuned_coeffs(speed, c.overlap, c.sync_per_doubling, sz, tp_overlap, cpa)
            # the LLM rows' mean squared log ratio chooses the size term, the TP overlap and
            # the context-parallel attention stretch
            logs = [math.log(x) for x in ratios(pre, base, cand) if x is not None]
            sq = statistics.fmean(v * v for v in logs)
            if best_pre is None or sq < best_pre[0] - 1e-12:
                best_pre = (sq, cand)
        assert best_pre is not None
        sk = best_pre[1]
        rs = [x for x in ratios(rows, base, sk) if x is not None]
        loss = statistics.median(abs(math.log(x)) for x in rs)
    return sk, loss


def ttt_errors(rows: list[dict[str, str]], base: Constants, sk: StackCoeffs) -> list[float]:
    """Time-to-train error per row, %: predicted / measured time - 1 = measured / predicted
    throughput - 1 (the samples to converge cancel)."""
    return [100.0 * (x - 1.0) for x in ratios(rows, base, sk) if x is not None]


def summary(errors: list[float]) -> str:
    if not errors:
        return "no rows"
    med = statistics.median(errors)
    mape = statistics.fmean(abs(e) for e in errors)
    return (
        f"{len(errors)} rows, median time-to-train error {med:+.1f} %, "
        f"median |error| {statistics.median(abs(e) for e in errors):.1f} %, MAPE {mape:.1f} %"
    )


def default_stack_errors(rows: list[dict[str, str]], base: Constants) -> list[float]:
    """The same rows with the default stack (what `gpurent estimate` assumes unless told)."""
    engine = Estimator(constants=base, gpus=all_gpus(), max_cached=0)
    out = []
    for r in rows:
        try:
            est = engine.estimate(
                laid_workload(r, engine, stack=Stack.NGC_24),
                get_gpu(r["gpu"]),
                int(r["num_gpus"]),
                nodes=int(r.get("nodes") or 1),
            )
            out.append(100.0 * (float(r["measured_throughput"]) / est.throughput - 1.0))
        except (GpurentError, ValueError):
            continue
    return out


def v51_rows() -> list[dict[str, str]]:
    """The v5.1 llama2_70b_lora rows of `mlperf_training_8gpu.csv` (8 GPUs, FP8 recipe or,
    on some NVIDIA Blackwell systems, NVFP4: the logs do not say which) in this file's form."""
    with MLPERF_8GPU.open(newline="") as fh:
        src = [r for r in csv.DictReader(fh) if r["round"] == "v5.1"]
    return [
        {
            "model": "llama2-70b",
            "gpu": r["gpu"],
            "num_gpus": r["num_gpus"],
            "nodes": r["nodes"],
            "precision": "fp8",
            "batch_size": str(max(1, int(r["global_batch_size"]) // int(r["num_gpus"]))),
            "seq_len": r["seq_len"],
            "task": "finetune-lora",
            "measured_throughput": r["tokens_per_s"],
            "_round": "v5.1",
        }
        for r in src
        if r["benchmark"] == "llama2_70b_lora"
    ]


def loro_intervals(
    rows: list[dict[str, str]],
    base: Constants,
    size: bool = False,
    pooled: frozenset[str] = frozenset(),
    cp_grid: tuple[float, ...] = CP_ATTENTION,
) -> dict[str, dict[str, float]]:
    """Per speed key, the 10th/90th percentiles of leave-one-round-out log residuals (each
    round's fit re-chooses every parameter but the context-parallel stretch, from `cp_grid`)."""
    logs: dict[str, list[float]] = defaultdict(list)
    for rnd in ROUNDS:
        test_rows = [r for r in rows if r["_round"] == rnd]
        others = [r for r in rows if r["_round"] != rnd]
        sk, _ = fit(others, base, size=size, pooled=pooled, cp_grid=cp_grid)
        for r, x in zip(test_rows, ratios(test_rows, base, sk), strict=True):
            if x is not None:
                logs[sk.speed_key(row_key(r), arch_of(r))].append(math.log(x))
    for key in [k for k, v in logs.items() if "@" in k and len(v) < MIN_ARCH_ROWS]:
        logs[key.split("@")[0]] += logs.pop(key)  # too few for its own: pooled
    out: dict[str, dict[str, float]] = {}
    for key, vals in sorted(logs.items()):
        q = statistics.quantiles(vals, n=10, method="inclusive")
        lo, hi = q[0], q[8]
        if len(vals) < MIN_ROWS:
            mid = (lo + hi) / 2.0
            lo, hi = mid + (lo - mid) * WIDEN, mid + (hi - mid) * WIDEN
        out[key] = {"log_low": round(lo, 4), "log_high": round(hi, 4), "rows": len(vals)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fit", default="v3.0,v3.1,v5.0", help="rounds fitted on")
    ap.add_argument("--test", default="v4.1", help="the round held out (never fitted)")
    ap.add_argument("--write", action="store_true", help=f"write src/.../{TUNED_FILE}")
    ap.add_argument("--loro", action="store_true", help="leave-one-round-out (see --among)")
    ap.add_argument(
        "--among",
        default=",".join(ROUNDS),
        help="--loro: the rounds it leaves out one at a time (others are not read)",
    )
    ap.add_argument(
        "--pooled", action="store_true", help="one factor per model (no per-architecture ones)"
    )
    ap.add_argument(
        "--v51", action="store_true", help="also judge the v5.1 8-GPU Llama 2 70B LoRA rows"
    )
    ap.add_argument(
        "--pretrain",
        action="store_true",
        help="also fit an `llm` (pretraining) speed on mlperf_llm_pretrain_fit.csv, with the "
        "fabric of the other rows fixed (bundled since session 8: see docs/benchmarks.md)",
    )
    ap.add_argument(
        "--size",
        action="store_true",
        help="with --pretrain: also fit the `llm` speed's dependence on the layer size per GPU "
        "(StackCoeffs.size_factor) by grid search",
    )
    ap.add_argument(
        "--pooled-llm",
        action="store_true",
        help="one `llm` (pretraining) speed for every architecture (with --size: the size term "
        "then carries what the architectures' model mixes confound)",
    )
    args = ap.parse_args(argv)
    pooled = frozenset({"llm"}) if args.pooled_llm else frozenset()
    raw = json.loads(CALIBRATION.read_text(encoding="utf-8"))
    raw.get("stacks", {}).pop(Stack.TUNED.value, None)
    base = parse_constants(raw)
    rows = load(pretrain=PRETRAIN_FIT if args.pretrain else None)
    if args.loro:
        print("| round held out | rows | default stack | tuned (fitted on the other rounds) |")
        print("|---|---|---|---|")
        among = [x.strip() for x in args.among.split(",") if x.strip()]
        for rnd in among:
            fit_rows = [r for r in rows if r["_round"] != rnd and r["_round"] in among]
            test_rows = [r for r in rows if r["_round"] == rnd]
            sk, _ = fit(fit_rows, base, per_arch=not args.pooled, size=args.size, pooled=pooled)
            d = default_stack_errors(test_rows, base)
            t = ttt_errors(test_rows, base, sk)
            print(
                f"| {rnd} | {len(test_rows)} | {statistics.median(d):+.1f} % "
                f"| {statistics.median(t):+.1f} % "
                f"(median abs {statistics.median(map(abs, t)):.1f} %); speed {sk.speed}, "
                f"overlap {sk.comm.overlap}, sync {sk.comm.sync_per_doubling} |"
            )
        return 0
    fit_rounds = [x.strip() for x in args.fit.split(",") if x.strip()]
    if args.test in fit_rounds:
        sys.exit(f"error: the test round {args.test} is also a fit round")
    fit_rows = [r for r in rows if r["_round"] in fit_rounds]
    test_rows = [r for r in rows if r["_round"] == args.test]
    sk, loss = fit(fit_rows, base, size=args.size, pooled=pooled)
    print(f"fit on {', '.join(fit_rounds)} ({len(fit_rows)} rows): median |log ratio| {loss:.3f}")
    c = sk.comm
    print(f"  speed {sk.speed}; overlap {c.overlap}; sync/doubling {c.sync_per_doubling}")
    print(
        f"  size term: ref {sk.size_ref_params:.3g} params per layer per GPU, "
        f"exponent {sk.size_exponent}; TP overlap (NVIDIA) {sk.tp_comm_overlap}; "
        f"CP attention stretch {sk.cp_attention_overhead}"
    )
    print(f"  in-sample: {summary(ttt_errors(fit_rows, base, sk))}")
    stock = summary(default_stack_errors(test_rows, base))
    print(f"held-out round {args.test}, default stack: {stock}")
    print(f"held-out round {args.test}, --stack tuned: {summary(ttt_errors(test_rows, base, sk))}")
    by_model: dict[str, list[dict[str, str]]] = defaultdict(list)
    for r in test_rows:
        by_model[r["model"]].append(r)
    for model, mrows in sorted(by_model.items()):
        print(f"  {model}: {summary(ttt_errors(mrows, base, sk))}")
    if args.v51:
        v51 = v51_rows()
        print(f"v5.1 (never fitted; some NVIDIA rows NVFP4): {summary(ttt_errors(v51, base, sk))}")
        by_gpu: dict[str, list[dict[str, str]]] = defaultdict(list)
        for r in v51:
            by_gpu[r["gpu"]].append(r)
        for gpu, grows in sorted(by_gpu.items()):
            print(f"  {gpu}: {summary(ttt_errors(grows, base, sk))}")
    if args.write:
        intervals = loro_intervals(
            rows, base, size=args.size, pooled=pooled, cp_grid=(sk.cp_attention_overhead,)
        )
        eff = effective_keys(fit_rows, pooled)
        counts = {k: sum(e == k for e in eff) for k in sk.speed}
        doc = {
            "description": DESCRIPTION,
            "comm": {f: getattr(sk.comm, f) for f in CommCoeffs.__dataclass_fields__},
            "speed": sk.speed,
            "llm_size": {
                "ref_layer_params_per_gpu": sk.size_ref_params,
                "exponent": sk.size_exponent,
            },
            "tp_comm_overlap": sk.tp_comm_overlap,
            "cp_attention_overhead": sk.cp_attention_overhead,
            "intervals": intervals,
            "provenance": {
                "fitted_on": f"MLPerf Training {', '.join(fit_rounds)} rows of "
                "benchmarks/data/validation/mlperf_throughput.csv (mlcommons/training_results_*, "
                "commits in that folder's README.md)"
                + (
                    " and, for the `llm` (pretraining) key, "
                    "benchmarks/data/mlperf_llm_pretrain_fit.csv (GPT-3 175B v3.0/v3.1, Llama "
                    "3.1 405B v5.0, Llama 3.1 8B v5.1 on Blackwell and MI355X; its rows of the "
                    "--fit rounds)"
                    if args.pretrain
                    else ""
                )
                + "; v4.0 held out and never read",
                "rows_per_speed_key": counts,
                "held_out_round": args.test,
                "intervals": "10th-90th percentiles of log(measured / predicted) of each "
                "round's rows predicted by a fit on the other rounds (leave-one-round-out, "
                f"{', '.join(ROUNDS)}); widened x{WIDEN:g} about the centre below "
                f"{MIN_ROWS} rows",
                "assumed": f"default_inter_node_gbps {ASSUMED_INTER_NODE_GBPS:g} (8 x 400G NDR)",
                "command": "PYTHONPATH=src python benchmarks/fit_tuned_stack.py "
                + ("--pretrain " if args.pretrain else "")
                + ("--size " if args.size else "")
                + ("--pooled-llm " if args.pooled_llm else "")
                + (f"--fit {args.fit} " if args.fit != "v3.0,v3.1,v5.0" else "")
                + "--write",
                "date": datetime.now(UTC).strftime("%Y-%m-%d"),
            },
        }
        if OUT.is_file():  # the MoE term is fitted apart (fit_moe_ep_overhead.py): keep it
            kept = json.loads(OUT.read_text(encoding="utf-8")).get("moe_ep")
            if kept is not None:
                doc["moe_ep"] = kept
        OUT.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
