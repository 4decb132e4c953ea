"""Dense matmul throughput per precision: the "maximum achievable matmul FLOPS".

Method (after stas00/ml-engineering's MAMF finder): time square C = A @ B over a small sweep of
sizes and report the best, since achieved TFLOP/s depends on the shape (tile quantisation, wave
quantisation). One matmul of n x n by n x n is 2 n^3 FLOPs. Each size reports its fastest call
(MAMF's "maximum achievable"): a throttled GPU stays slow on every call, while a neighbour's
burst on a shared CPU only hits some calls.

On the CPU each size is also run through numpy's BLAS (`numpy.matmul`, fp32), alternating
blocks of torch and numpy calls over several rounds so both meet the same machine load, and the
report states both: the torch figure must reach at least half of numpy's at the same size.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpurent.bench.result import Measurement
from gpurent.bench.timing import spread, time_calls
from gpurent.units import FLOPS_PER_TFLOP

GPU_PRECISIONS = ("bf16", "fp16", "tf32", "strict-fp32")
CPU_PRECISIONS = ("fp32", "bf16")


def _dtype(torch: Any, precision: str) -> Any:
    if precision == "bf16":
        return torch.bfloat16
    if precision == "fp16":
        return torch.float16
    return torch.float32


def matmul_tflops(
    torch: Any,
    *,
    device: str,
    precision: str,
    size: int,
    repeats: int,
    deadline: float | None = None,
) -> float:
    """Best TFLOP/s of an n x n x n matmul in `precision` on `device` (n = `size`)."""
    dtype = _dtype(torch, precision)
    gen = torch.Generator(device=device).manual_seed(0)
    a = torch.randn(size, size, device=device, dtype=dtype, generator=gen)
    b = torch.randn(size, size, device=device, dtype=dtype, generator=gen)
    out = torch.empty(size, size, device=device, dtype=dtype)
    previous_tf32 = torch.backends.cuda.matmul.allow_tf32
    if device == "cuda":
        # "tf32" means fp32 storage on TF32 tensor cores; "strict-fp32" disables them.
        torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    try:
        durations = time_calls(
            torch,
            lambda: torch.matmul(a, b, out=out),
            device=device,
            warmup=2,
            repeats=repeats,
            deadline=deadline,
        )
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous_tf32
    return 2.0 * size**3 / spread(durations).min_s / FLOPS_PER_TFLOP


def numpy_matmul_tflops(size: int, repeats: int) -> float:
    """Best TFLOP/s of numpy's fp32 BLAS on an n x n x n matmul (the CPU reference)."""
    import numpy as np

    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    out = np.empty((size, size), dtype=np.float32)
    # time_calls, as for torch: the throttle test hook must slow this figure too (timing.py)
    durations = time_calls(
        None, lambda: np.matmul(a, b, out=out), device="cpu", warmup=1, repeats=repeats
    )
    return 2.0 * size**3 / spread(durations).min_s / FLOPS_PER_TFLOP


def run_matmul(
    torch: Any,
    *,
    device: str,
    sizes: Sequence[int],
    precisions: Sequence[str],
    repeats: int,
    rounds: int = 4,
    deadline: float | None = None,
) -> list[Measurement]:
    """Best TFLOP/s over `sizes` for each precision; on the CPU also numpy (fp32) at the size
    where torch fp32 was best, measured in `rounds` alternating rounds."""
    out: list[Measurement] = []
    numpy_by_size: dict[int, float] = {}
    best_fp32_size: int | None = None
    for precision in precisions:
        by_size: dict[int, float] = {}
        for n in sizes:
            with_numpy = device == "cpu" and precision == "fp32"
            for _ in range(rounds if with_numpy else 1):
                got = matmul_tflops(
                    torch,
                    device=device,
                    precision=precision,
                    size=n,
                    repeats=repeats,
                    deadline=deadline,
                )
                by_size[n] = max(by_size.get(n, 0.0), got)
                if with_numpy:
                    ref = numpy_matmul_tflops(n, repeats)
                    numpy_by_size[n] = max(numpy_by_size.get(n, 0.0), ref)
        best = max(by_size, key=lambda n: by_size[n])
        if precision == "fp32":
            best_fp32_size = best
        swept = ", ".join(f"{n}: {v:.3g}" for n, v in by_size.items())
        threads = f", {torch.get_num_threads()} threads" if device == "cpu" else ""
        out.append(
            Measurement(
                key=f"matmul.{precision}",
                benchmark="matmul",
                value=by_size[best],
                unit="TFLOP/s",
                detail=f"best at n={best} (n x n x n, torch on {device}{threads}); "
                f"sweep TFLOP/s {{{swept}}}",
            )
        )
    if best_fp32_size is not None and best_fp32_size in numpy_by_size:
        out.append(
            Measurement(
                key="matmul.numpy-fp32",
                benchmark="matmul",
                value=numpy_by_size[best_fp32_size],
                unit="TFLOP/s",
                detail=f"numpy.matmul fp32 at n={best_fp32_size}, same machine, same run, "
                f"alternated with torch over {rounds} rounds (the CPU reference)",
            )
        )
    return out
