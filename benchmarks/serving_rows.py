"""The public serving measurements (benchmarks/data/serving/measurements.csv) as rows the serving
model can predict: shared by `fit_serving.py`, `bench_serving_accuracy.py` and the tests.

Each row is one published figure (TTFT, TPOT / inter-token latency, or output throughput) of one
engine serving one model on one GPU layout at one load: `closed` (that many concurrent clients),
`poisson` (that request rate) or `offline` (every request queued: the engine's maximum
throughput). `sources.csv` says where each `source_id` comes from.

The held-out share: a row is held out when the SHA-256 of `SPLIT_SEED|row key` is 0 mod
`HOLD_EVERY` (a fixed, seeded hash, so the split never changes with the file's order); the fit
never sees those rows.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gpurent.catalog import get_gpu
from gpurent.estimate.serving import (
    ServingConstants,
    ServingPoint,
    operating_point,
    saturation_point,
    serving_curve,
)
from gpurent.workload.serving import (
    ServingWorkload,
    parse_engine,
    parse_kv_precision,
    parse_lengths,
    parse_weight_quant,
)

DATA = Path(__file__).resolve().parent / "data" / "serving"
MEASUREMENTS = DATA / "measurements.csv"
SOURCES = DATA / "sources.csv"
SPLIT_SEED = "gpurent-serving-2026-12-01"
HOLD_EVERY = 4  # one row in four (in expectation) is held out
KINDS = ("prefill", "decode", "ttft-under-load", "throughput")


@dataclass(frozen=True, slots=True)
class Row:
    line: int
    source: str
    engine: str
    model: str
    gpu: str
    tp: int
    weights: str
    kv_cache: str
    prompt: str  # a token count or "uniform LO-HI" (`workload.serving.parse_lengths`)
    output: str
    mode: str  # closed | poisson | offline | engine (an engine-level benchmark, no server)
    load: float  # clients or req/s (nan offline)
    metric: str
    value: float
    max_num_seqs: int
    gpu_memory_utilization: float

    @property
    def key(self) -> str:
        return "|".join(
            str(x)
            for x in (
                self.source,
                self.engine,
                self.model,
                self.gpu,
                self.tp,
                self.weights,
                self.prompt,
                self.output,
                self.mode,
                self.load,
                self.metric,
            )
        )

    @property
    def held_out(self) -> bool:
        digest = hashlib.sha256(f"{SPLIT_SEED}|{self.key}".encode()).digest()
        return int.from_bytes(digest[:8], "big") % HOLD_EVERY == 0

    @property
    def kind(self) -> str:
        """prefill: TTFT at low load (at most 4 clients, or a Poisson rate, or an engine-level
        static batch); decode: TPOT / ITL
        (a decode step at that load's batch); ttft-under-load: TTFT at more clients;
        throughput: output tokens/s (at a concurrency, or offline at saturation)."""
        if self.metric == "output_tok_s":
            return "throughput"
        if self.metric.startswith("tpot"):
            return "decode"
        if self.mode == "engine":
            return "prefill"  # a static batch prefilled in one step: no queue at any batch
        if self.mode == "poisson" or (self.mode == "closed" and self.load <= 4):
            return "prefill"
        return "ttft-under-load"


def scored(row: Row) -> bool:
    """Whether a row enters the fit and the score: every row but the TTFTs measured on a GPU
    whose catalog tensor rate is marked low-confidence (A10G: not published by NVIDIA or AWS;
    its measured prefill needs more FLOP/s than the catalog's figure allows), where the error
    would be the catalog's, not the model's. Bandwidth-bound TPOT rows stay."""
    return not (row.metric.startswith("ttft") and get_gpu(row.gpu).confidence == "low")


def load_rows(path: Path = MEASUREMENTS, *, all_rows: bool = False) -> list[Row]:
    """The rows (`scored` ones unless `all_rows`)."""
    rows = _read(path)
    return rows if all_rows else [r for r in rows if scored(r)]


def _read(path: Path) -> list[Row]:
    with path.open(newline="", encoding="utf-8") as fh:
        out = []
        for i, rec in enumerate(csv.DictReader(fh), start=2):
            out.append(
                Row(
                    line=i,
                    source=rec["source_id"],
                    engine=rec["engine"],
                    model=rec["model"],
                    gpu=rec["gpu"],
                    tp=int(rec["tp"]),
                    weights=rec["weights"],
                    kv_cache=rec["kv_cache"],
                    prompt=rec["prompt_tokens"],
                    output=rec["output_tokens"],
                    mode=rec["mode"],
                    load=float(rec["load"]) if rec["load"] else math.nan,
                    metric=rec["metric"],
                    value=float(rec["value"]),
                    max_num_seqs=int(rec["max_num_seqs"]),
                    gpu_memory_utilization=float(rec["gpu_memory_utilization"]),
                )
            )
    return out


def source_ids(path: Path = SOURCES) -> set[str]:
    with path.open(newline="", encoding="utf-8") as fh:
        return {rec["source_id"] for rec in csv.DictReader(fh)}


def workload_of(row: Row) -> ServingWorkload:
    return ServingWorkload(
        model=row.model,
        weights=parse_weight_quant(row.weights),
        kv_cache=parse_kv_precision(row.kv_cache),
        engine=parse_engine(row.engine),
        prompt=parse_lengths(row.prompt, f"line {row.line}: prompt_tokens"),
        output=parse_lengths(row.output, f"line {row.line}: output_tokens"),
        max_num_seqs=row.max_num_seqs,
        gpu_memory_utilization=row.gpu_memory_utilization,
        name=f"{row.source}:{row.line}",
    )


def _point(row: Row, k: ServingConstants) -> ServingPoint:
    w = workload_of(row)
    gpu = get_gpu(row.gpu)
    if row.mode == "engine":
        # an engine-level benchmark (no HTTP server, static batches): no per-request
        # overhead, the whole batch prefilled in one step, then closed loop at the batch
        engine = w.engine
        coeffs = dataclasses.replace(k.engines[engine], request_overhead_s=0.0)
        k = dataclasses.replace(k, engines={**k.engines, engine: coeffs})
        w = dataclasses.replace(w, chunk_tokens=max(1, int(row.load * w.prompt.max)))
        curve = serving_curve(w, gpu, row.tp, levels=(int(row.load),), constants=k)
        if not curve.rows:
            raise ValueError(f"line {row.line}: does not fit ({curve.notes})")
        return curve.rows[0]
    if row.mode == "closed":
        curve = serving_curve(w, gpu, row.tp, levels=(int(row.load),), constants=k)
        if not curve.rows:
            raise ValueError(f"line {row.line}: does not fit ({curve.notes})")
        return curve.rows[0]
    if row.mode == "poisson":
        return operating_point(w, gpu, row.tp, request_rate_per_s=row.load, constants=k)
    return saturation_point(w, gpu, row.tp, constants=k)


_METRIC = {
    "ttft_p50_ms": "ttft_p50_ms",
    "ttft_mean_ms": "ttft_mean_ms",
    "ttft_p99_ms": "ttft_p99_ms",
    "tpot_p50_ms": "tpot_p50_ms",
    "output_tok_s": "output_tokens_per_s",
}


def predict(row: Row, k: ServingConstants) -> float:
    point = _point(row, k)
    value: float = getattr(point, _METRIC[row.metric]).value
    return value


def log_residuals(rows: Iterable[Row], k: ServingConstants) -> list[tuple[Row, float]]:
    """(row, log(measured / predicted)); an unpredictable row (infinite latency) counts as a
    large miss (log 3) rather than vanishing from the score."""
    out = []
    for row in rows:
        p = predict(row, k)
        r = math.log(row.value / p) if math.isfinite(p) and p > 0 else math.log(3.0)
        out.append((row, r))
    return out


def mape(pairs: Sequence[tuple[Row, float]]) -> float:
    """Mean absolute percentage error of the predictions, % (from log residuals)."""
    if not pairs:
        return math.nan
    return 100.0 * sum(abs(1.0 - math.exp(-r)) for _, r in pairs) / len(pairs)
