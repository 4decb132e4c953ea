"""What runs on each node of the fleet, inside a Ray worker: plain functions with JSON-able
arguments and results, so Ray ships them by reference (gpurent must be installed on every node).

`bench_here` runs the `gpurent bench --quick` command itself in a subprocess (the same code,
sizes and verdicts as on one machine; a crash of the benchmark cannot take the Ray worker down);
`health_here` runs the runtime's health checks; `allreduce_here` is one rank of an all-reduce
across nodes.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from gpurent.bench.allreduce import allreduce_rank
from gpurent.runtime import health

STDERR_TAIL_CHARS = 400


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][-STDERR_TAIL_CHARS:] if lines else ""


def identity() -> dict[str, Any]:
    """The host name and process id of the worker that answers."""
    return {"hostname": socket.gethostname(), "pid": os.getpid()}


def health_here(*, path: str, min_free_gib: float, endpoints: list[str]) -> dict[str, Any]:
    """The identity of this node and its health rows (`checks`, see `checks_here`)."""
    return {**identity(), "checks": checks_here(path, min_free_gib, endpoints)}


def checks_here(path: str, min_free_gib: float, endpoints: list[str]) -> list[dict[str, str]]:
    """The runtime's checks on this node: GPUs through NVML (count, uncorrected ECC,
    temperature, throttling) with every Xid in the kernel log, free disk at `path`, and TCP
    reachability of `endpoints`. Rows: check, status (ok / warn / fail), reason. An empty
    `path` is this node's temporary directory."""
    path = path or tempfile.gettempdir()
    nvml = health.load_nvml()
    log = health.read_kernel_log() if nvml is not None else None
    results = [health.check_gpus(nvml, new_xids=health.parse_xids(log) if log else ())]
    if nvml is not None and log is None:
        results.append(
            health.HealthResult(
                check="xid",
                status=health.Status.WARN,
                reason="kernel log unreadable (dmesg needs privileges): Xids not checked",
            )
        )
    try:
        results.append(health.check_disk(path, fail_below_bytes=int(min_free_gib * 2**30)))
    except OSError as exc:
        results.append(
            health.HealthResult(check="disk", status=health.Status.FAIL, reason=f"{path}: {exc}")
        )
    results.append(health.check_endpoints(endpoints))
    return [{"check": r.check, "status": r.status.value, "reason": r.reason} for r in results]


def bench_here(*, bench_args: list[str], timeout_s: float, min_free_gib: float) -> dict[str, Any]:
    """`gpurent bench --quick BENCH_ARGS` on this node, in a fresh temporary directory (where the
    disk benchmark writes), and the health checks. Returns the identity, the result JSON (or
    the error line) and the health rows."""
    out: dict[str, Any] = identity()
    with tempfile.TemporaryDirectory(prefix="gpurent-fleet-") as tmp:
        target = Path(tmp) / "bench.json"
        cmd = [sys.executable, "-m", "gpurent", "bench", "--quick", "--out", str(target)]
        try:
            proc = subprocess.run(
                [*cmd, *bench_args],
                cwd=tmp,
                capture_output=True,
                text=True,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            out["error"] = f"`gpurent bench --quick` ran past {timeout_s:.0f} s"
        else:
            if proc.returncode != 0 or not target.is_file():
                line = _last_line(proc.stderr) or f"exit code {proc.returncode}"
                out["error"] = f"`gpurent bench --quick` failed: {line}"
            else:
                out["result"] = json.loads(target.read_text(encoding="utf-8"))
        out["health"] = checks_here(tmp, min_free_gib, [])
    return out


def free_port_here() -> int:
    """A TCP port free on every interface of this node (for the all-reduce rendezvous)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("", 0))
        port: int = sock.getsockname()[1]
        return port


allreduce_here = allreduce_rank
"""One rank of the cross-node all-reduce: median seconds per message size (the bench's
`allreduce_rank`, named here beside the other functions Ray runs on a node)."""
