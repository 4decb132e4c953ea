"""Fit the estimator's constants on measured throughput tables and write calibration.json.

    PYTHONPATH=src python benchmarks/fit_estimator.py --data-dir DIR \
        --out src/gpurent/estimate/data/calibration.json

DIR is the reference data's throughput folder (see docs/estimator.md for its provenance).

Deterministic: the same tables give the same file (apart from the `fitted_on` date).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from estimator_fit import (
    CHOSEN,
    VARIANTS,
    constants_to_json,
    fit_all,
    load_dle,
    load_lambda,
    load_mosaic,
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data-dir", type=Path, required=True, help="folder with the throughput CSVs")
    ap.add_argument("--out", type=Path, default=Path("src/gpurent/estimate/data/calibration.json"))
    ap.add_argument("--method", choices=sorted(VARIANTS), default=CHOSEN, help="time-model variant")
    args = ap.parse_args()
    lam, dle, mos = load_lambda(args.data_dir), load_dle(args.data_dir), load_mosaic(args.data_dir)
    provenance = {
        "stack": "single-GPU terms: Lambda's NGC 22.09 rows (no DALI, no channels-last); "
        "per-stack multi-GPU and speed constants under `stacks`",
        "sources": [
            "lambda_train_throughput.csv: lambdal/deeplearning-benchmark commit aa5addb6 "
            "(unflagged rows, de-duplicated; Quadro RTX 8000 with its datasheet facts)",
            "mosaic_mpt_a100.csv: mosaicml/llm-foundry commit 8c8dd48f "
            "scripts/train/benchmarking/README.md",
            "nvidia_dle_training.csv: NVIDIA/DeepLearningExamples commit 729963dd "
            "(stack factors only)",
        ],
        "rows": {"lambda": len(lam), "mosaic": len(mos), "dle": len(dle)},
        "fit_command": "PYTHONPATH=src python benchmarks/fit_estimator.py --data-dir "
        "<throughput data dir> --out src/gpurent/estimate/data/calibration.json "
        f"--method {args.method}",
        "fitted_on": dt.date.today().isoformat(),
        "method": f"{args.method}: {VARIANTS[args.method]}",
    }
    k = fit_all(lam, mos, dle, provenance, method=VARIANTS[args.method])
    args.out.write_text(json.dumps(constants_to_json(k), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(k.families)} model families, llm {k.llm}, comm {k.comm}")


if __name__ == "__main__":
    main()
