"""Push ingest: sample rows per second through POST /api/monitor/push into the server's store.

A real `gpurent serve --db ...` in a subprocess on 127.0.0.1 (SQLite file in a temp dir; and
PostgreSQL when $GPURENT_TEST_PG_URL is set, e.g. from .ci/pg-up.sh). `--machines` machines
(default 250) are registered over the API, a tenth of their jobs get a budget (so each push also
checks budgets), then each machine pushes `--rounds` batches of `--seconds` seconds of 8-GPU
samples at 1 Hz (what `gpurent monitor --push` sends), from `--clients` client threads.
One row is one GPU sample; 250 machines x 8 GPUs at 1 Hz is 2,000 rows/s (the target).

Run: PYTHONPATH=src python benchmarks/bench_push_ingest.py [--machines 250] [--rounds 10]
(PostgreSQL: the run's machines stay in that database, named after the run; use a test one.)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from gpurent.monitor.push import TOKEN_HEADER

sys.path.insert(0, str(Path(__file__).resolve().parent))

from probe_rows import template_rows

T0 = 1_800_000_000.0


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _start(db: str) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    env.pop("GPURENT_SERVE_TOKEN", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpurent", "serve", "--port", str(port), "--db", db],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/api/health", timeout=2).status_code == 200:
                return proc, url
        except httpx.TransportError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"gpurent serve --db {db} did not start")
        time.sleep(0.1)


def run(db: str, label: str, args: argparse.Namespace) -> None:
    proc, url = _start(db)
    try:
        template = template_rows()
        with httpx.Client(base_url=url, timeout=60) as client:
            tokens = []
            run_id = f"{int(time.time() * 1000) % 10**9:09d}"  # PostgreSQL keeps earlier runs
            for i in range(args.machines):
                job = f"r{run_id}-job-{i % max(1, args.machines // 8)}"
                reply = client.post(
                    "/api/machines",
                    json={"name": f"r{run_id}-m{i:04d}", "job": job, "price_usd_per_hour": 98.32},
                )
                reply.raise_for_status()
                tokens.append(reply.json()["token"])
            for j in range(0, max(1, args.machines // 8), 10):
                client.post(
                    "/api/budgets",
                    json={"scope": "job", "name": f"r{run_id}-job-{j}", "limit_usd": 1e6},
                ).raise_for_status()

        def batch(round_no: int) -> list[dict[str, Any]]:
            start = T0 + round_no * args.seconds
            return [dict(row, timestamp=start + s) for s in range(args.seconds) for row in template]

        bodies = [json.dumps({"rows": batch(r)}).encode() for r in range(args.rounds)]
        per_push = len(batch(0))

        def push_all(machine: int) -> int:
            sent = 0
            with httpx.Client(base_url=url, timeout=60) as c:
                for body in bodies:
                    r = c.post(
                        "/api/monitor/push",
                        content=body,
                        headers={TOKEN_HEADER: tokens[machine], "content-type": "application/json"},
                    )
                    r.raise_for_status()
                    sent += r.json()["rows"]
            return sent

        started = time.perf_counter()
        with ThreadPoolExecutor(args.clients) as pool:
            rows = sum(pool.map(push_all, range(args.machines)))
        elapsed = time.perf_counter() - started
        print(
            f"{label}: machines={args.machines} rows={rows} pushes={args.machines * args.rounds} "
            f"rows_per_push={per_push} clients={args.clients} s={elapsed:.2f} "
            f"rows_per_s={rows / elapsed:,.0f}"
        )
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--machines", type=int, default=250)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--seconds", type=int, default=5, help="Samples per push (1 Hz).")
    parser.add_argument("--clients", type=int, default=16)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run(str(Path(tmp) / "serve.db"), "sqlite", args)
    pg = os.environ.get("GPURENT_TEST_PG_URL")
    if pg:
        run(pg, "postgresql", args)
    else:
        print("postgresql: skipped ($GPURENT_TEST_PG_URL is not set; .ci/pg-up.sh sets one)")


if __name__ == "__main__":
    main()
