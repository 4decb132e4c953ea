"""Host <-> device bandwidth over PCIe (or NVLink-C2C), pinned and pageable host memory.

Pinned (page-locked) host buffers let the GPU's copy engines DMA directly: this is the figure to
hold against the PCIe link (gen x width). Pageable buffers go through a staging copy in the
driver and are typically much slower; they show what a DataLoader without `pin_memory=True` gets.
While pinned copies are in flight the PCIe link is read through NVML (`probe_link`), because an
idle GPU retrains its link down to save power and would look "downtrained" at rest.

Without a GPU there is no host-device link: the benchmark then times a host-to-host memcpy of
the same size as a clearly labelled stand-in and the verdict marks it not applicable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpurent.bench.result import Measurement
from gpurent.bench.timing import spread, time_calls
from gpurent.units import BYTES_PER_GB

LinkProbe = Callable[[], None]


def run_hostdev(
    torch: Any,
    *,
    device: str,
    size_mib: int,
    repeats: int,
    probe_link: LinkProbe | None = None,
    deadline: float | None = None,
) -> list[Measurement]:
    """H2D and D2H GB/s for pinned and pageable buffers of `size_mib` MiB (median of repeats)."""
    n_bytes = size_mib * 2**20
    if device != "cuda":
        src = torch.ones(n_bytes, dtype=torch.uint8)
        dst = torch.empty(n_bytes, dtype=torch.uint8)
        secs = spread(
            time_calls(
                torch,
                lambda: dst.copy_(src),
                device="cpu",
                warmup=1,
                repeats=repeats,
                deadline=deadline,
            )
        ).median_s
        return [
            Measurement(
                key="hostdev.host-memcpy",
                benchmark="hostdev",
                value=n_bytes / secs / BYTES_PER_GB,
                unit="GB/s",
                detail=f"STAND-IN, no GPU: host-to-host copy of {size_mib} MiB; not a PCIe figure",
            )
        ]
    dev = torch.empty(n_bytes, dtype=torch.uint8, device="cuda")
    out: list[Measurement] = []
    for kind in ("pinned", "pageable"):
        host = torch.empty(n_bytes, dtype=torch.uint8, pin_memory=kind == "pinned")
        host.fill_(1)
        blocking = kind == "pageable"
        if kind == "pinned" and probe_link is not None:
            for _ in range(8):  # keep the link busy while NVML reads its state
                dev.copy_(host, non_blocking=True)
            probe_link()
            torch.cuda.synchronize()
        for direction, fn in (
            ("h2d", lambda h=host, nb=not blocking: dev.copy_(h, non_blocking=nb)),
            ("d2h", lambda h=host, nb=not blocking: h.copy_(dev, non_blocking=nb)),
        ):
            secs = spread(
                time_calls(torch, fn, device="cuda", warmup=2, repeats=repeats, deadline=deadline)
            ).median_s
            out.append(
                Measurement(
                    key=f"hostdev.{direction}-{kind}",
                    benchmark="hostdev",
                    value=n_bytes / secs / BYTES_PER_GB,
                    unit="GB/s",
                    detail=f"{direction.upper()} copy of {size_mib} MiB, {kind} host buffer",
                )
            )
    return out
