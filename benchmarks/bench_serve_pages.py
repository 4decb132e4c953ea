"""The dashboard's pages under a bounded load over loopback (issue 21: p95 < 300 ms).

Starts the real command (`python -m gpurent serve --port P --demo`, a fresh GPURENT_HOME: the
bundled catalog, the shipped spot example, examples/vendors.toml, the demo machine pushing to
/monitor), warms each page once, then for each page sends --requests GETs from --clients
concurrent clients (httpx, asyncio, or ApacheBench with --client ab) and prints p50, p95, p99,
the worst, requests/s and the server's CPU per request; then POST /plan (the planner
form, with its CSRF cookie and field) from --plan-clients clients, --plan-requests in all.

    python benchmarks/bench_serve_pages.py --clients 50 --requests 500

Exit status 1 when a page's p95 is over the limit or a request failed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_serve_api import _free_port, _pct, _server_cpu_s, _start

P95_LIMIT_S = 0.3
PAGES = (
    "/plan",
    "/offers",
    "/offers?gpu=H100&pricing=spot",
    "/spot",
    "/bench",
    "/vendors",
    "/monitor",
    "/static/gpurent.js",
)
FORM = {"preset": "llama-lora", "pricing": ["on-demand", "spot"]}


async def _load(
    url: str, path: str, clients: int, total: int, post: bool
) -> tuple[list[float], float, int]:
    times: list[float] = []
    errors = 0
    remaining = total
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
        page = await client.get("/plan")  # the CSRF cookie, and the form's field
        match = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert match is not None
        form = {**FORM, "csrf": match.group(1)}

        async def one() -> int:
            if post:
                return (await client.post(path, data=form)).status_code
            return (await client.get(path)).status_code

        await one()  # warm: the first answer builds the caches

        async def client_loop() -> None:
            nonlocal errors, remaining
            while remaining > 0:
                remaining -= 1
                started = time.perf_counter()
                status = await one()
                times.append(time.perf_counter() - started)
                errors += status != 200

        started = time.perf_counter()
        await asyncio.gather(*(client_loop() for _ in range(clients)))
        wall = time.perf_counter() - started
    return times, wall, errors


def _ab(url: str, path: str, clients: int, total: int) -> tuple[dict[str, float], float, int]:
    """ApacheBench's percentiles (seconds), wall time and failed or non-200 requests."""
    subprocess.run(["ab", "-q", "-n", "1", f"{url}{path}"], capture_output=True, check=True)
    done = subprocess.run(
        ["ab", "-q", "-k", "-c", str(clients), "-n", str(total), f"{url}{path}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    cuts = {
        f"{m.group(1)}%": float(m.group(2)) / 1e3
        for m in re.finditer(r"^\s+(\d+)%\s+(\d+)", done, re.M)
    }
    wall = float(re.search(r"Time taken for tests:\s+([\d.]+)", done).group(1))  # type: ignore[union-attr]
    failed = int(re.search(r"Failed requests:\s+(\d+)", done).group(1))  # type: ignore[union-attr]
    # ab counts a body whose length differs from the first one's as failed: a live page (the
    # monitor's figures move with every push) is not a failure
    length = re.search(r"Receive: \d+, Length: (\d+)", done)
    failed -= int(length.group(1)) if length else 0
    non_2xx = re.search(r"Non-2xx responses:\s+(\d+)", done)
    return cuts, wall, failed + (int(non_2xx.group(1)) if non_2xx else 0)


def bench(
    url: str, path: str, clients: int, total: int, pid: int, *, post: bool, ab: bool = False
) -> bool:
    """One page's load test; True when its p95 is under the limit without errors."""
    server0 = _server_cpu_s(pid)
    if ab and not post:
        cuts, wall, errors = _ab(url, path, clients, total)
        p50, p95, p99, worst = cuts["50%"], cuts["95%"], cuts["99%"], cuts["100%"]
    else:
        times, wall, errors = asyncio.run(_load(url, path, clients, total, post))
        p50, p95, p99, worst = (_pct(times, q) for q in (0.5, 0.95, 0.99, 1.0))
    server_cpu = _server_cpu_s(pid) - server0
    ok = errors == 0 and p95 < P95_LIMIT_S
    label = f"{'POST' if post else 'GET'} {path}"
    print(
        f"{label:36s} {clients:3d} clients {total:5d} req: p50 {p50 * 1e3:7.1f} ms"
        f"  p95 {p95 * 1e3:7.1f} ms  p99 {p99 * 1e3:7.1f} ms  worst "
        f"{worst * 1e3:7.1f} ms  {total / wall:6.1f} req/s  server CPU "
        f"{server_cpu / total * 1e3:6.2f} ms/req  errors {errors}  "
        f"{'ok' if ok else 'OVER'}",
        flush=True,
    )
    return ok


def main() -> None:
    """Start `gpurent serve`, load each page, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--plan-clients", type=int, default=5)
    parser.add_argument("--plan-requests", type=int, default=20)
    parser.add_argument("--only", default="", help="Comma list of paths (default: all pages).")
    parser.add_argument("--client", choices=("httpx", "ab"), default="httpx")
    args = parser.parse_args()
    pages = [p for p in args.only.split(",") if p] or list(PAGES)
    port = _free_port()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs at the start")
    ok = True
    with tempfile.TemporaryDirectory() as home:
        # --demo: the monitor page shows a machine pushing live, as on a fresh clone's dashboard
        proc = _start(port, Path(home), "--demo")
        try:
            url = f"http://127.0.0.1:{port}"
            for path in pages:
                ok &= bench(
                    url,
                    path,
                    args.clients,
                    args.requests,
                    proc.pid,
                    post=False,
                    ab=args.client == "ab",
                )
            if args.plan_requests:
                bench(url, "/plan", args.plan_clients, args.plan_requests, proc.pid, post=True)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
