"""How many requests/s `gpurent bench serve` drives, and whether the client is the bottleneck.

Starts the shipped stand-in (`python -m gpurent.bench.serve_standin`, zero latency: each
answer is written in one piece) in its own process, then runs the real load runner
(`gpurent.bench.serve_load.run_serve`) in this one, one level at a time, and prints per level:
requests/s, output tokens/s, p50 end-to-end latency, and the CPU each side used over the
level's wall time (this process: `time.process_time`; the server: its /proc utime + stime),
as a share of one core. A client below ~80% of a core while the server sits near 100% is not
the bottleneck: the stand-in is. The load average is printed because the machine is shared.

    PYTHONPATH=src python benchmarks/bench_bench_serve.py --levels 1,8,32,64 --requests 3000
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from gpurent.bench.serve_config import ServeConfig, TokenRange, endpoint_url
from gpurent.bench.serve_load import run_serve

TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_listening(port: int, deadline_s: float) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise SystemExit(f"the stand-in did not listen on {port} within {deadline_s} s")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--levels", default="1,8,32,64", help="concurrency levels")
    p.add_argument("--requests", type=int, default=3000, help="requests per level")
    p.add_argument("--prompt-tokens", type=int, default=32)
    p.add_argument("--output-tokens", type=int, default=16)
    p.add_argument("--chat", action="store_true", help="use /v1/chat/completions")
    args = p.parse_args()
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    server = subprocess.Popen(
        [sys.executable, "-m", "gpurent.bench.serve_standin", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, 20)
        endpoint = "chat" if args.chat else "completions"
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; {endpoint}, prompt "
              f"{args.prompt_tokens} / output {args.output_tokens} tokens, "
              f"{args.requests} requests per level")  # fmt: skip
        print("| concurrency | req/s | output tok/s | p50 e2e ms | errors | client CPU | "
              "server CPU | load avg |")  # fmt: skip
        print("|---|---|---|---|---|---|---|---|")
        for level in (float(x) for x in args.levels.split(",")):
            cfg = ServeConfig(
                url=endpoint_url(f"http://127.0.0.1:{port}", endpoint),
                endpoint=endpoint,
                model="standin-model",
                mode="concurrency",
                levels=(level,),
                prompt_tokens=TokenRange(lo=args.prompt_tokens, hi=args.prompt_tokens),
                output_tokens=TokenRange(lo=args.output_tokens, hi=args.output_tokens),
                max_requests=args.requests,
                duration_s=120.0,
                timeout_s=30.0,
                stall_timeout_s=10.0,
            )
            s0 = cpu_s(server.pid)
            result = run_serve(cfg, created_at="bench")
            server_cpu = cpu_s(server.pid) - s0
            lv = result.levels[0]
            wall = result.wall_s
            print(
                f"| {level:g} | {lv.requests_per_s:,.0f} | {lv.output_tok_s:,.0f} | "
                f"{lv.e2e_ms.p50 or 0:.2f} | {sum(lv.errors.values())} | "
                f"{100 * result.client_cpu_s / wall:.0f}% | {100 * server_cpu / wall:.0f}% | "
                f"{os.getloadavg()[0]:.1f} |"
            )
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
