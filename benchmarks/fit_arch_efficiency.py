"""Fit the per-architecture realized efficiency (`gpurent.estimate.efficiency.FITTED`) and check
every architecture of the MLPerf rows against the estimator.

    PYTHONPATH=src python benchmarks/fit_arch_efficiency.py [ROWS.csv]

For each row of an architecture: measured ratio = its tokens/s / the median tokens/s of its
NVIDIA peer's rows (`PEER`) of the same round and benchmark; predicted ratio = the estimator's
tokens/s for the same configuration on its GPU / on the peer, with the architecture's factor
set to 1. The factor is the geometric mean of measured / predicted over the architecture's rows
(one parameter; the least-squares fit of log ratios). Then prints every GPU's ratios against
the H200 and the B200 with the bundled factors (the NVIDIA rows are a check, not fitted).
"""

from __future__ import annotations

import csv
import dataclasses
import math
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from gpurent.catalog import get_gpu
from gpurent.catalog.gpu import GpuSpec
from gpurent.catalog.precision import Precision
from gpurent.estimate import estimate
from gpurent.estimate.efficiency import MIN_GPU_ROWS, realized_efficiency
from gpurent.workload.spec import Task, Workload

DEFAULT_CSV = Path(__file__).parent / "data/mlperf_training_8gpu.csv"
# each fitted architecture is measured against the NVIDIA GPU of its generation, whose datasheet
# rates are closest (CDNA3 1.3 PF / 5.3-6 TB/s vs H200 0.99 PF / 4.8 TB/s; CDNA4 2.5 PF / 8 TB/s
# vs B200 2.25 PF / 8 TB/s): the ratio then isolates the architecture from the LLM model's error
# across NVIDIA generations (B200 / H200 is under-predicted on these benchmarks, see main())
PEER = {"CDNA3": "H200-SXM-141GB", "CDNA4": "B200-180GB"}
CHECK_ANCHORS = ("H200-SXM-141GB", "B200-180GB")
# Fitted on llama2_70b_lora only: both vendors' submissions train it in FP8 (Hopper has no FP4;
# the v5.1 B200 rows cluster at 6.1-6.2 samples/s with B300's FP8 rows, the two outliers at
# 7.2-7.7 are NVFP4 configurations and the median ignores them). In v5.1 llama31_8b most B200
# rows (35-36 samples/s, above B300's FP8 rows at 29) run NVIDIA's NVFP4 recipe
# (`config_common_fp4.sh` in their implementations), which the estimator does not model: a
# check, not a fit.
FIT_BENCHMARKS = ("llama2_70b_lora",)
# the configuration each MLPerf benchmark runs, per GPU (the reference implementations: fp8,
# one 8192-token sequence per GPU and step; LoRA rank 16 on Llama 2 70B)
WORKLOADS = {
    "llama2_70b_lora": Workload(
        model="llama2-70b",
        task=Task.FINETUNE_LORA,
        precision=Precision.FP8,
        batch_size_per_gpu=1,
        seq_len=8192,
        lora_rank=16,
    ),
    "llama31_8b": Workload(
        model="llama3-8b",
        task=Task.TRAINING,
        precision=Precision.FP8,
        batch_size_per_gpu=1,
        seq_len=8192,
    ),
}


def load_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def predicted_tokens_s(bench: str, gpu: GpuSpec, *, raw: bool) -> float:
    """tokens/s of the benchmark's workload on 8 `gpu`s (one NVLink/xGMI domain); `raw`: with
    the realized efficiency set to 1 (a GPU and architecture name nothing knows)."""
    if raw:
        gpu = dataclasses.replace(
            gpu, name=gpu.name + "-unfitted", architecture=gpu.architecture + "-unfitted"
        )
    return estimate(WORKLOADS[bench], gpu, 8).throughput


def ratios(
    rows: Iterable[dict[str, str]], anchor: str, *, raw: bool
) -> list[tuple[dict[str, str], float, float]]:
    """(row, measured ratio, predicted ratio) vs `anchor` for every row of another GPU whose
    round and benchmark have `anchor` rows."""
    rows = list(rows)
    anchors: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in rows:
        if r["gpu"] == anchor:
            anchors[(r["round"], r["benchmark"])].append(float(r["tokens_per_s"]))
    out = []
    for r in rows:
        base = anchors.get((r["round"], r["benchmark"]))
        if r["gpu"] == anchor or not base:
            continue
        measured = float(r["tokens_per_s"]) / statistics.median(base)
        pred = predicted_tokens_s(r["benchmark"], get_gpu(r["gpu"]), raw=raw)
        pred /= predicted_tokens_s(r["benchmark"], get_gpu(anchor), raw=False)
        out.append((r, measured, pred))
    return out


def fit(rows: list[dict[str, str]]) -> dict[str, tuple[float, int]]:
    """architecture -> (factor, rows fitted on), each against its `PEER`."""
    out = {}
    for arch, peer in PEER.items():
        logs = [
            math.log(measured / pred)
            for r, measured, pred in ratios(rows, peer, raw=True)
            if get_gpu(r["gpu"]).architecture == arch and r["benchmark"] in FIT_BENCHMARKS
        ]
        if logs:
            out[arch] = (round(math.exp(statistics.fmean(logs)), 3), len(logs))
    return out


def fit_gpus(rows: list[dict[str, str]]) -> dict[str, tuple[float, int]]:
    """GPU -> (factor, rows fitted on) for each fitted architecture's GPU with at least
    `MIN_GPU_ROWS` rows of its own, fitted as `fit` does on those rows alone."""
    logs: dict[str, list[float]] = defaultdict(list)
    for arch, peer in PEER.items():
        for r, measured, pred in ratios(rows, peer, raw=True):
            if get_gpu(r["gpu"]).architecture == arch and r["benchmark"] in FIT_BENCHMARKS:
                logs[r["gpu"]].append(math.log(measured / pred))
    return {
        gpu: (round(math.exp(statistics.fmean(v)), 3), len(v))
        for gpu, v in sorted(logs.items())
        if len(v) >= MIN_GPU_ROWS
    }


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CSV
    rows = load_rows(path)
    print("fit (architecture: factor, rows):", fit(rows))
    print(f"fit (GPU with >= {MIN_GPU_ROWS} rows: factor, rows):", fit_gpus(rows))
    for anchor in CHECK_ANCHORS:
        print()
        print(f"with the bundled factors: measured / predicted ratio vs {anchor}, per GPU")
        print("round  benchmark        gpu             rows  measured  predicted  error  basis")
        groups: dict[tuple[str, str, str], list[tuple[float, float]]] = defaultdict(list)
        for r, measured, pred in ratios(rows, anchor, raw=False):
            groups[(r["round"], r["benchmark"], r["gpu"])].append((measured, pred))
        for (rnd, bench, gpu), vals in sorted(groups.items()):
            m = statistics.median(v[0] for v in vals)
            p = vals[0][1]
            basis = realized_efficiency(get_gpu(gpu)).basis
            print(
                f"{rnd:6} {bench:16} {gpu:15} {len(vals):4}  {m:8.3f}  {p:9.3f}"
                f"  {100 * (p / m - 1):+5.1f} %  {basis}"
            )


if __name__ == "__main__":
    main()
