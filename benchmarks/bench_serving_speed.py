"""Speed of the serving model: what `plan --serve` pays per candidate.

    PYTHONPATH=src python benchmarks/bench_serving_speed.py

Times `max_load_meeting_slo` and `serving_curve` for the `llama3-8b-chat` preset on every GPU
of the bundled catalog that runs it (best of 3 passes).
"""

from __future__ import annotations

import time

from gpurent.catalog.specs import all_gpus
from gpurent.errors import InputError
from gpurent.estimate.serving import load_serving_constants, max_load_meeting_slo, serving_curve
from gpurent.workload.presets import serving_preset


def main() -> int:
    w = serving_preset("llama3-8b-chat")
    k = load_serving_constants()
    gpus = []
    for g in all_gpus():
        try:
            max_load_meeting_slo(w, g, constants=k)
            gpus.append(g)
        except InputError:
            pass
    for name, fn in (
        ("max_load_meeting_slo", max_load_meeting_slo),
        ("serving_curve", serving_curve),
    ):
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            for g in gpus:
                fn(w, g, constants=k)
            best = min(best, time.perf_counter() - t0)
        print(
            f"{name}: {len(gpus)} GPUs in {best * 1e3:.0f} ms "
            f"({best / len(gpus) * 1e3:.1f} ms each)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
