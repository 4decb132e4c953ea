"""Predicted vs published measured peak memory per GPU (benchmarks/data/memory_peaks.csv).

Every row is a configuration that really ran. For each the script builds the `Workload`, asks
`gpurent.estimate.memory.memory_breakdown` for the per-GPU peak and compares it with the
measured figure (converted to GiB). Rows are split before any fitting: every third row (file
order, rows 3, 6, 9, ...) is held out and never fitted on. It prints the per-row table, median
and worst absolute error on the fit and held-out rows, and how many configurations that ran the
estimator calls "does not fit".

`--fit` grid-searches the two free terms (activation scale, allocator fragmentation share) on
the fit rows only, minimising the median absolute relative error, and prints the best pair;
the defaults in `gpurent/estimate/memory.py` are that pair.

Run from the repository root:

    PYTHONPATH=src python benchmarks/bench_memory_peaks.py
    PYTHONPATH=src python benchmarks/bench_memory_peaks.py --fit
    PYTHONPATH=src python benchmarks/bench_memory_peaks.py --markdown
"""

from __future__ import annotations

import argparse
import csv
import statistics
from dataclasses import dataclass
from pathlib import Path

from gpurent.catalog import get_gpu
from gpurent.catalog.precision import Precision
from gpurent.estimate.memory import ACTIVATION_SCALE, FRAGMENTATION, memory_breakdown
from gpurent.units import BYTES_PER_GIB
from gpurent.workload.models import get_model
from gpurent.workload.spec import Sharding, Task, Workload

DATA = Path(__file__).resolve().parent / "data" / "memory_peaks.csv"
_TO_GIB = {"GiB": 1.0, "GB": 1e9 / BYTES_PER_GIB}


@dataclass(frozen=True, slots=True)
class Row:
    index: int  # 1-based, file order
    workload: Workload
    gpu: str
    num_gpus: int
    measured_gib: float
    source: str

    @property
    def held_out(self) -> bool:
        return self.index % 3 == 0


def load_rows(path: Path = DATA) -> list[Row]:
    rows: list[Row] = []
    with path.open(newline="") as f:
        for i, r in enumerate(csv.DictReader(f), start=1):
            wl = Workload(
                model=r["model"],
                task=Task(r["task"]),
                precision=Precision(r["precision"]),
                batch_size_per_gpu=int(r["batch_size"]),
                seq_len=int(r["seq_len"]),
                activation_checkpointing=r["activation_checkpointing"] == "true",
                sharding=Sharding(r["sharding"]),
                tensor_parallel=int(r["tp"]),
                pipeline_parallel=int(r["pp"]),
                gradient_accumulation=int(r["grad_accum"]),
                lora_rank=int(r["lora_rank"]),
                cpu_offload=r["cpu_offload"] == "true",
            )
            rows.append(
                Row(
                    index=i,
                    workload=wl,
                    gpu=r["gpu"],
                    num_gpus=int(r["num_gpus"]),
                    measured_gib=float(r["measured_peak"]) * _TO_GIB[r["unit"]],
                    source=f"{r['source_repo']}/{r['source_path']}",
                )
            )
    return rows


def predict(row: Row, activation_scale: float, fragmentation: float) -> tuple[float, bool]:
    """(predicted GiB per GPU, fits)."""
    gpu = get_gpu(row.gpu)
    model = get_model(row.workload.model)
    mem = memory_breakdown(
        row.workload,
        model,
        row.num_gpus,
        gpu.capacity_gib,
        activation_scale=activation_scale,
        fragmentation=fragmentation,
    )
    return mem.total_gib, mem.fits


def errors(rows: list[Row], activation_scale: float, fragmentation: float) -> list[float]:
    """Signed relative errors (predicted / measured - 1)."""
    return [predict(r, activation_scale, fragmentation)[0] / r.measured_gib - 1 for r in rows]


def summary(errs: list[float]) -> tuple[float, float]:
    """(median |error| %, worst |error| %)."""
    a = [abs(e) * 100 for e in errs]
    return statistics.median(a), max(a)


def fit(rows: list[Row]) -> tuple[float, float]:
    best: tuple[float, float, float] | None = None
    for i in range(40, 161, 5):  # activation scale 0.40 .. 1.60
        for j in range(0, 31):  # fragmentation 0 .. 30 %
            s, fr = i / 100, j / 100
            med, worst = summary(errors(rows, s, fr))
            key = (med, worst, s)
            if best is None or key < best:
                best = key
    assert best is not None
    med, _, s = best
    fr = min(
        (j / 100 for j in range(31)),
        key=lambda f: summary(errors(rows, s, f)),
    )
    return s, fr


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fit", action="store_true", help="fit the two terms on the fit rows")
    ap.add_argument("--markdown", action="store_true", help="print Markdown tables")
    args = ap.parse_args()
    rows = load_rows()
    scale, frag = ACTIVATION_SCALE, FRAGMENTATION
    if args.fit:
        scale, frag = fit([r for r in rows if not r.held_out])
        print(
            f"fitted on {sum(not r.held_out for r in rows)} fit rows: "
            f"activation_scale={scale:.2f} fragmentation={frag:.2f}"
        )
    sep = " | " if args.markdown else "  "
    head = [
        "#",
        "split",
        "model",
        "task",
        "gpus",
        "gpu",
        "b",
        "seq",
        "ckpt",
        "shard",
        "measured GiB",
        "predicted GiB",
        "error %",
        "fits",
    ]
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print(sep.join(head))
    for r in rows:
        pred, fits = predict(r, scale, frag)
        w = r.workload
        cells = [
            str(r.index),
            "held-out" if r.held_out else "fit",
            w.model,
            w.task.value,
            str(r.num_gpus),
            r.gpu,
            str(w.batch_size_per_gpu),
            str(w.seq_len),
            "yes" if w.activation_checkpointing else "no",
            w.sharding.value,
            f"{r.measured_gib:.1f}",
            f"{pred:.1f}",
            f"{(pred / r.measured_gib - 1) * 100:+.0f}",
            "yes" if fits else "NO",
        ]
        print(("| " + sep.join(cells) + " |") if args.markdown else sep.join(cells))
    print()
    for name, part in (
        ("fit", [r for r in rows if not r.held_out]),
        ("held-out", [r for r in rows if r.held_out]),
        ("all", rows),
    ):
        med, worst = summary(errors(part, scale, frag))
        no_fit = sum(not predict(r, scale, frag)[1] for r in part)
        print(
            f"{name:8s} rows={len(part):2d}  median |error| {med:5.1f} %  "
            f"worst {worst:5.1f} %  'does not fit' among configs that ran: {no_fit}"
        )


if __name__ == "__main__":
    main()
