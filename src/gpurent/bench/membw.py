"""Device memory bandwidth: STREAM-like copy and triad.

copy:  b = a          moves 2 x N x bytes (one read, one write)
triad: a = b + s * c  moves 3 x N x bytes (two reads, one write)
Arrays are far larger than any cache (the L2 of an H200 is 50 MB) so the figure is DRAM/HBM
bandwidth, in GB/s (10^9 bytes/s). On the CPU this measures host DRAM through torch's kernels.
"""

from __future__ import annotations

from typing import Any

from gpurent.bench.result import Measurement
from gpurent.bench.timing import spread, time_calls
from gpurent.units import BYTES_PER_GB, BYTES_PER_GIB


def run_membw(
    torch: Any, *, device: str, array_mib: int, repeats: int, deadline: float | None = None
) -> list[Measurement]:
    """Copy and triad bandwidth (median over `repeats`) with fp32 arrays of `array_mib` MiB."""
    n = array_mib * 2**20 // 4
    a = torch.ones(n, device=device, dtype=torch.float32)
    b = torch.ones(n, device=device, dtype=torch.float32)
    c = torch.ones(n, device=device, dtype=torch.float32)
    copy_s = spread(
        time_calls(
            torch, lambda: b.copy_(a), device=device, warmup=2, repeats=repeats, deadline=deadline
        )
    ).median_s
    triad_s = spread(
        time_calls(
            torch,
            lambda: torch.add(b, c, alpha=3.0, out=a),
            device=device,
            warmup=2,
            repeats=repeats,
            deadline=deadline,
        )
    ).median_s
    where = "device HBM/GDDR" if device == "cuda" else "host DRAM (no GPU: CPU memory)"
    size = f"3 fp32 arrays of {array_mib} MiB ({3 * n * 4 / BYTES_PER_GIB:.2f} GiB), {where}"
    return [
        Measurement(
            key="membw.copy",
            benchmark="membw",
            value=2 * n * 4 / copy_s / BYTES_PER_GB,
            unit="GB/s",
            detail=f"b = a, 2 x bytes moved; {size}",
        ),
        Measurement(
            key="membw.triad",
            benchmark="membw",
            value=3 * n * 4 / triad_s / BYTES_PER_GB,
            unit="GB/s",
            detail=f"a = b + 3 c, 3 x bytes moved; {size}",
        ),
    ]
