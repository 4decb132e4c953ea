"""How long `gpurent bench --quick` takes end to end, and the CPU matmul vs numpy figures.

Runs the real CLI in a fresh interpreter (so torch's import is counted) `--runs` times and
prints the wall time of each run and, from its result JSON, torch's fp32 matmul TFLOP/s against
numpy's at the same size.

    PYTHONPATH=src python benchmarks/bench_bench_quick.py --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "GPURENT_HOME": tmp}
        for i in range(args.runs):
            out = Path(tmp) / f"q{i}.json"
            t0 = time.monotonic()
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "gpurent",
                    "bench",
                    "--quick",
                    "--json",
                    "--path",
                    tmp,
                    "--out",
                    str(out),
                ],
                check=True,
                env=env,
                stdout=subprocess.DEVNULL,
            )
            wall_s = time.monotonic() - t0
            data = json.loads(out.read_text())
            by_key = {m["key"]: m for m in data["measurements"]}
            torch_mm = by_key["matmul.fp32"]
            numpy_mm = by_key["matmul.numpy-fp32"]
            ratio = torch_mm["value"] / numpy_mm["value"]
            print(
                f"run {i + 1}: wall {wall_s:.1f} s (in-process {data['duration_s']:.1f} s); "
                f"matmul fp32 torch {torch_mm['value'] * 1e3:.0f} GFLOP/s vs numpy "
                f"{numpy_mm['value'] * 1e3:.0f} GFLOP/s = {ratio:.2f} "
                f"({torch_mm['detail'].split(';')[0]}); "
                f"bf16 {by_key['matmul.bf16']['value'] * 1e3:.0f} GFLOP/s"
            )


if __name__ == "__main__":
    main()
