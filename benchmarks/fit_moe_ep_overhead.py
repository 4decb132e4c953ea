"""Fit the tuned stack's per-MoE-layer expert-parallel overhead on the MoE training split.

`StackCoeffs.moe_ep_layer_s` (docs/estimator.md, "MoE expert-parallel overhead") is a fixed
cost per MoE layer per micro-batch (forward + backward) that only runs with expert parallelism:
the dispatch/combine kernels' latency and routing metadata exchange, token permutation and
unpermutation, which the byte-priced all-to-all leaves out. It is fitted only on
`benchmarks/data/mlperf_moe_fit.csv` (MLPerf Training v6.0 rows of submitters that are not in
the validation file `benchmarks/data/validation/fp8_moe.csv`), never on validation rows.

The term is additive and linear in the coefficient, so one pass of the CLI gives the fit: for
each expert-parallel row (ep > 1) with pp 1 and one micro-batch per step, the measured step
time is the predicted one x predicted / measured throughput, and the coefficient moves by the
median over those rows of (measured - predicted step) / MoE layers. Rows with ep 1 are printed
as a check (the term does not touch them).

    PYTHONPATH=src python benchmarks/fit_moe_ep_overhead.py            # print the fit
    PYTHONPATH=src python benchmarks/fit_moe_ep_overhead.py --write    # ... and bundle it
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from gpurent.workload.models import get_model

ROOT = Path(__file__).resolve().parents[1]
SPLIT = ROOT / "benchmarks" / "data" / "mlperf_moe_fit.csv"
TUNED = ROOT / "src" / "gpurent" / "estimate" / "data" / "tuned_stack.json"


def predictions(csv_path: Path) -> list[dict[str, object]]:
    """The CLI's JSON estimate of every row of `csv_path` (one subprocess)."""
    cmd = [sys.executable, "-m", "gpurent", "estimate", "--from-csv", str(csv_path), "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"error: gpurent estimate failed on {csv_path}: {out.stderr.strip()}")
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def moe_layers(model: str) -> float:
    """MoE layers of `model` (the catalog's shape)."""
    shape = get_model(model).llm
    if shape is None or not shape.is_moe:
        raise SystemExit(f"error: {model} is not a mixture-of-experts LLM; drop it from {SPLIT}")
    return float(shape.moe_layers)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--split", type=Path, default=SPLIT, help="the MoE training split CSV")
    ap.add_argument("--write", action="store_true", help=f"write moe_ep.layer_s to {TUNED.name}")
    args = ap.parse_args(argv)
    if "validation" in args.split.parts:
        raise SystemExit("error: validation rows are never fitted; pass a training split")
    doc = json.loads(TUNED.read_text(encoding="utf-8"))
    old = float(doc.get("moe_ep", {}).get("layer_s", 0.0))
    steps: list[float] = []
    print(f"{'gpu':<12}{'ep':>3}{'measured':>12}{'predicted':>12}{'error':>8}  source")
    for r in predictions(args.split):
        measured = float(str(r["measured_throughput"]))
        predicted = float(str(r["throughput"]))
        err = (predicted / measured - 1.0) * 100.0
        print(
            f"{r['gpu']!s:<12}{r['ep']!s:>3}{measured:>12.0f}{predicted:>12.0f}{err:>+7.1f}%  "
            f"{r['source_path']}"
        )
        ep, pp = int(str(r["ep"] or 1)), int(str(r["pp"] or 1))
        if ep > 1 and pp == 1 and int(str(r["grad_accum"] or 1)) == 1:
            step = float(str(r["step_time_s"]))
            excess = step * predicted / measured - step
            steps.append(old + excess / moe_layers(str(r["model"])))
    if not steps:
        raise SystemExit(
            f"error: no expert-parallel row (ep > 1, pp 1, grad_accum 1) in {args.split}"
        )
    layer_s = max(0.0, statistics.median(steps))
    print(
        f"moe_ep.layer_s: {layer_s * 1e3:.3f} ms per MoE layer per micro-batch "
        f"(was {old * 1e3:.3f}; median of {len(steps)} expert-parallel rows)"
    )
    if args.write:
        doc["moe_ep"] = {
            "layer_s": layer_s,
            "rows": len(steps),
            "fitted_on": "benchmarks/data/mlperf_moe_fit.csv (MLPerf Training v6.0 MoE rows of "
            "submitters not in validation/fp8_moe.csv; Richardyu114/training_results_v6.0 "
            "@ eabf23a07b2a0c60a289ff871dc3a46fff0d0421)",
            "command": "PYTHONPATH=src python benchmarks/fit_moe_ep_overhead.py --write",
        }
        TUNED.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {TUNED.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
