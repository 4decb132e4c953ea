"""Latency of `gpurent serve`'s JSON API over loopback (issue 21).

Starts the real command (`python -m gpurent serve --port P`, a fresh GPURENT_HOME: the bundled
catalog), then measures:

- POST /api/plan, one client, --plan-runs requests for each of three bodies (llama-lora; the
  inference scenario; bert-large-pretrain with a 12 h deadline): median and worst against the
  1 s limit of the issue;
- GET /api/gpus under a bounded load: --clients concurrent clients (httpx, asyncio), --requests
  in total: p50, p95, p99, worst and requests/s, against 300 ms at p95.

    python benchmarks/bench_serve_api.py --plan-runs 10 --clients 50 --requests 2000
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

PLAN_LIMIT_S = 1.0
PAGE_P95_LIMIT_S = 0.3
PLANS = {
    "llama-lora": {"preset": "llama-lora"},
    "inference scenario": {"scenario": "inference"},
    "bert 12 h deadline": {"preset": "bert-large-pretrain", "deadline_hours": 12},
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _start(port: int, home: Path, *flags: str) -> subprocess.Popen[bytes]:
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": src, "GPURENT_HOME": str(home)}
    cmd = [sys.executable, "-m", "gpurent", "serve", "--port", str(port), *flags]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2)
            return proc
        except httpx.TransportError:
            time.sleep(0.1)
    proc.terminate()
    raise SystemExit("gpurent serve did not answer within 60 s")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench_plan(url: str, runs: int) -> bool:
    ok = True
    with httpx.Client(base_url=url, timeout=60) as client:
        for label, body in PLANS.items():
            client.post("/api/plan", json=body).raise_for_status()  # warm: catalog parse
            times = []
            for _ in range(runs):
                started = time.perf_counter()
                client.post("/api/plan", json=body).raise_for_status()
                times.append(time.perf_counter() - started)
            worst = max(times)
            ok &= worst < PLAN_LIMIT_S
            print(
                f"POST /api/plan {label:20s} median {statistics.median(times) * 1000:7.1f} ms  "
                f"worst {worst * 1000:7.1f} ms  ({runs} runs; limit {PLAN_LIMIT_S:g} s: "
                f"{'ok' if worst < PLAN_LIMIT_S else 'OVER'})"
            )
    return ok


async def _load(url: str, clients: int, total: int) -> tuple[list[float], float, int]:
    times: list[float] = []
    errors = 0
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(total):
        queue.put_nowait(i)

    async def client_loop(client: httpx.AsyncClient) -> None:
        nonlocal errors
        while True:
            try:
                queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            started = time.perf_counter()
            reply = await client.get("/api/gpus")
            times.append(time.perf_counter() - started)
            errors += reply.status_code != 200

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        await client.get("/api/gpus")
        started = time.perf_counter()
        await asyncio.gather(*(client_loop(client) for _ in range(clients)))
        wall = time.perf_counter() - started
    return times, wall, errors


def _server_cpu_s(pid: int) -> float:
    import psutil

    cpu = psutil.Process(pid).cpu_times()
    return float(cpu.user + cpu.system)


def bench_gpus(url: str, clients: int, total: int, server_pid: int) -> bool:
    client0, server0 = time.process_time(), _server_cpu_s(server_pid)
    times, wall, errors = asyncio.run(_load(url, clients, total))
    client_cpu = time.process_time() - client0
    server_cpu = _server_cpu_s(server_pid) - server0
    p95 = _pct(times, 0.95)
    print(
        f"GET /api/gpus {clients} clients, {total} requests: p50 {_pct(times, 0.5) * 1000:.1f} ms"
        f"  p95 {p95 * 1000:.1f} ms  p99 {_pct(times, 0.99) * 1000:.1f} ms  worst "
        f"{max(times) * 1000:.1f} ms  {total / wall:.0f} requests/s  errors {errors}  (p95 "
        f"limit {PAGE_P95_LIMIT_S * 1000:.0f} ms: {'ok' if p95 < PAGE_P95_LIMIT_S else 'OVER'})"
    )
    print(
        f"  CPU per request: client {client_cpu / total * 1000:.2f} ms ({client_cpu / wall:.0%} "
        f"of a core), server {server_cpu / total * 1000:.2f} ms ({server_cpu / wall:.0%}); "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    return errors == 0 and p95 < PAGE_P95_LIMIT_S


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plan-runs", type=int, default=10)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=2000)
    args = parser.parse_args()
    port = _free_port()
    with tempfile.TemporaryDirectory() as home:
        proc = _start(port, Path(home))
        try:
            url = f"http://127.0.0.1:{port}"
            ok = bench_plan(url, args.plan_runs)
            ok &= bench_gpus(url, args.clients, args.requests, proc.pid)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
