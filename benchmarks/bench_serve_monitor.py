"""Latency of the monitor page and its endpoints over a machine with an hour of history.

Starts `gpurent serve`'s app (uvicorn, in a thread, on a free loopback port, a temporary SQLite
store), registers one 8-GPU machine with a price, a plan and a budget, pushes one hour of 1 Hz
samples (28,800 rows) through POST /api/monitor/push, then times N sequential GETs of /monitor,
/api/spend and /api/monitor/series with one client (after one warm-up each).

    PYTHONPATH=src python benchmarks/bench_serve_monitor.py [--requests 20]

/api/spend meters each machine's history incrementally (`Fleet.metered_history`), so its time
should not grow with the history; before that it re-read every stored row on every request.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn

from gpurent.monitor.push import TOKEN_HEADER
from gpurent.server import ServerSettings, create_app

GPUS = 8
HOUR_S = 3600
BATCH_SAMPLES = 250


def _start(db: Path) -> tuple[uvicorn.Server, threading.Thread, str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(ServerSettings(db=str(db))), log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline:
            raise SystemExit("the server did not start within 30 s")
        time.sleep(0.01)
    return server, thread, f"http://127.0.0.1:{port}"


def main() -> None:
    """Push an hour of samples, then time the monitor page and its endpoints."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20, help="GETs per path")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server, thread, url = _start(Path(tmp) / "serve.db")
        try:
            with httpx.Client(base_url=url, timeout=120) as client:
                token = client.post(
                    "/api/machines",
                    json={
                        "name": "m1",
                        "job": "j",
                        "price_usd_per_hour": 24.0,
                        "gpu_count": GPUS,
                        "plan": {"hours": 2, "cost_usd": 48},
                    },
                ).json()["token"]
                client.post("/api/budgets", json={"scope": "job", "name": "j", "limit_usd": 100})
                start_s = time.time() - HOUR_S
                for first in range(0, HOUR_S, BATCH_SAMPLES):
                    rows = [
                        {
                            "timestamp": start_s + i,
                            "gpu": g,
                            "gpu_busy_pct": 80.0,
                            "sm_util_pct": 70.0,
                            "power_w": 500.0,
                            "memory_used_mib": 1000.0,
                            "memory_total_mib": 80000.0,
                        }
                        for i in range(first, min(first + BATCH_SAMPLES, HOUR_S))
                        for g in range(GPUS)
                    ]
                    reply = client.post(
                        "/api/monitor/push", json={"rows": rows}, headers={TOKEN_HEADER: token}
                    )
                    reply.raise_for_status()
                for path in ("/monitor", "/api/spend", "/api/monitor/series?machine=m1"):
                    client.get(path).raise_for_status()
                    times = []
                    for _ in range(args.requests):
                        t0 = time.perf_counter()
                        reply = client.get(path)
                        times.append(time.perf_counter() - t0)
                        reply.raise_for_status()
                    print(
                        f"{path}: {HOUR_S * GPUS:,} rows ({GPUS} GPUs, 1 h at 1 Hz), 1 client, "
                        f"{args.requests} requests: median {statistics.median(times) * 1e3:.0f} "
                        f"ms, worst {max(times) * 1e3:.0f} ms, {len(reply.content) / 1e3:.0f} kB"
                    )
        finally:
            server.should_exit = True
            thread.join(timeout=10)


if __name__ == "__main__":
    main()
