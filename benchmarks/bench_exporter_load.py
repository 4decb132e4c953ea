"""Load on the Prometheus exporter: N concurrent clients x M scrapes each, on loopback.

Starts the real CLI (`gpurent monitor --fake-gpus busy --exporter --port 0`) in its own process,
so the server does not share an interpreter with the load, then runs the clients as asyncio raw
sockets in this process: each scrape is a new TCP connection, `GET /metrics HTTP/1.0`, read to
the end. Prints the errors (a non-200 answer or a broken answer), the dropped connections
(refused, reset or timed out before an answer) and the latency percentiles of the answered
scrapes. Bounded: every scrape has a timeout and the whole run a deadline.

    PYTHONPATH=src python benchmarks/bench_exporter_load.py --clients 50 --requests 200

`--server-pythonpath DIR` runs the server from another source tree (e.g. an older checkout's
`src`) to compare.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field


@dataclass
class Tally:
    latencies_s: list[float] = field(default_factory=list)
    errors: int = 0
    dropped: int = 0
    first_problem: str = ""

    def problem(self, what: str) -> None:
        if not self.first_problem:
            self.first_problem = what


async def scrape(port: int, timeout_s: float, tally: Tally, token: str | None) -> None:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    request = f"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n{auth}\r\n".encode()
    t0 = time.perf_counter()
    try:
        async with asyncio.timeout(timeout_s):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            try:
                writer.write(request)
                await writer.drain()
                answer = await reader.read()
            finally:
                writer.close()
    except (OSError, TimeoutError) as exc:
        tally.dropped += 1
        tally.problem(f"dropped: {type(exc).__name__} {exc}")
        return
    elapsed = time.perf_counter() - t0
    head, _, body = answer.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.0 200") or b"DCGM_FI_DEV_GPU_UTIL" not in body:
        tally.errors += 1
        tally.problem(f"error: {head[:60]!r}")
        return
    tally.latencies_s.append(elapsed)


async def client(port: int, requests: int, timeout_s: float, tally: Tally, token: str | None):
    for _ in range(requests):
        await scrape(port, timeout_s, tally, token)


async def load(args: argparse.Namespace, port: int) -> tuple[Tally, float]:
    tally = Tally()
    t0 = time.perf_counter()
    async with asyncio.timeout(args.deadline):
        await asyncio.gather(
            *(
                client(port, args.requests, args.timeout, tally, args.token)
                for _ in range(args.clients)
            )
        )
    return tally, time.perf_counter() - t0


def start_server(args: argparse.Namespace) -> tuple[subprocess.Popen[str], int]:
    env = dict(os.environ)
    if args.server_pythonpath:
        env["PYTHONPATH"] = args.server_pythonpath
    if args.token:
        env["GPURENT_EXPORTER_TOKEN"] = args.token
    cmd = [sys.executable, "-c", "from gpurent.cli.main import main; main()"]
    cmd += ["monitor", "--fake-gpus", "busy", "--exporter", "--port", "0"]
    cmd += ["--listen", "127.0.0.1", "--interval", "1", "--json"]
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert proc.stderr is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        found = re.search(r"exporter: http://[^:]+:(\d+)/metrics", line)
        if found:
            return proc, int(found.group(1))
    proc.kill()
    raise SystemExit(f"the exporter did not start: {proc.stderr.read()[:500]}")


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=200, help="Scrapes per client.")
    parser.add_argument("--timeout", type=float, default=5.0, help="Seconds per scrape.")
    parser.add_argument("--deadline", type=float, default=300.0, help="Seconds for the run.")
    parser.add_argument("--token", default=None, help="Run the server with this bearer token.")
    parser.add_argument("--server-pythonpath", default=None)
    args = parser.parse_args()
    proc, port = start_server(args)
    try:
        time.sleep(1.5)  # the first sample is in
        tally, wall_s = asyncio.run(load(args, port))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
    total = args.clients * args.requests
    lat = tally.latencies_s
    print(f"{args.clients} clients x {args.requests} scrapes = {total} on 127.0.0.1:{port}")
    print(f"answered {len(lat)}, errors {tally.errors}, dropped {tally.dropped}")
    if lat:
        print(
            f"latency p50 {pct(lat, 0.50) * 1e3:.1f} ms, p99 {pct(lat, 0.99) * 1e3:.1f} ms, "
            f"max {max(lat) * 1e3:.1f} ms, mean {statistics.fmean(lat) * 1e3:.1f} ms; "
            f"{len(lat) / wall_s:.0f} scrapes/s over {wall_s:.1f} s"
        )
    if tally.first_problem:
        print(f"first problem: {tally.first_problem}")


if __name__ == "__main__":
    main()
