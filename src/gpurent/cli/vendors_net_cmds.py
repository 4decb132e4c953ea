"""`gpurent vendors netcheck`: network quality between two rented nodes.

One end runs `--serve`, the other `--peer HOST[:PORT]` and measures: TCP round-trip latency,
TCP throughput over parallel streams (with compliance against a target) and, where perftest is
installed on both ends, RDMA write latency and bandwidth.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from gpurent.cli.common import checked, cli_errors, console, err_console, print_json
from gpurent.errors import InputError
from gpurent.inputs import values as v
from gpurent.vendors.netcheck_wire import DEFAULT_PORT

_HELP = (
    "Measure the network to another node: TCP latency (p50/p90/p99 round trip, microseconds), "
    "TCP throughput over parallel streams, compliance against a target rate, and RDMA "
    "(perftest's ib_write_lat / ib_write_bw) where installed.\n\n"
    "Examples:\n\n"
    "  gpurent vendors netcheck --serve                  # on node A (port 5201)\n\n"
    "  gpurent vendors netcheck --peer 10.0.0.2 --target-gbit-s 25 --out net.json  # on node B"
)


def _log(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


@contextmanager
def _stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """SIGINT and SIGTERM set `stop` (the server finishes cleanly) instead of raising."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        stop.set()

    old = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)


def _serve(bind: str, port: int) -> None:
    from gpurent.vendors.netcheck_server import listen, serve

    listener = listen(bind, port)
    host, actual = listener.getsockname()[:2]
    stop = threading.Event()
    with _stop_on_signals(stop):
        _log(f"netcheck server listening on {host}:{actual} (Ctrl-C to stop)")
        served = serve(listener, stop=stop, log=_log)
    _log(f"netcheck server stopped after {served} connections")


def _measure(peer_text: str, cfg: Any, *, quiet: bool) -> Any:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from gpurent.vendors.netcheck import run_netcheck
    from gpurent.vendors.netcheck_wire import parse_peer

    peer = parse_peer(peer_text)
    cfg.validate()
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=quiet,
    ) as bar:
        task = bar.add_task(f"netcheck {peer}", total=1.0)

        def progress(phase: str, fraction: float) -> None:
            bar.update(task, description=f"netcheck {peer}: {phase}", completed=fraction)

        return run_netcheck(peer, cfg, progress)


def register(vendors_app: typer.Typer) -> None:
    """Attach `netcheck` to `gpurent vendors`."""
    vendors_app.command("netcheck", help=_HELP)(netcheck_cmd)


@cli_errors
@checked(
    port=v.bounded(v.non_negative_int, most=65535),
    count=v.bounded(v.positive_int, most=1_000_000),
    streams=v.bounded(v.positive_int, most=64),
    duration=v.bounded(v.positive, most=100.0),
    interval=v.bounded(v.positive, most=600.0),
    target_gbit_s=v.bounded(v.positive, most=1e6),
    timeout=v.bounded(v.positive, most=600.0),
)
def netcheck_cmd(
    *,
    serve: Annotated[
        bool, typer.Option("--serve", help="Be the peer end: answer other nodes' checks.")
    ] = False,
    bind: Annotated[
        str, typer.Option("--bind", help="With --serve: the address to listen on.")
    ] = "0.0.0.0",
    port: Annotated[
        int, typer.Option("--port", help="With --serve: the TCP port (0: any free port).")
    ] = DEFAULT_PORT,
    peer: Annotated[
        str | None,
        typer.Option(
            "--peer", help="The node running --serve, as HOST or HOST:PORT.", show_default=False
        ),
    ] = None,
    count: Annotated[int, typer.Option("--count", help="Timed latency round trips.")] = 1000,
    streams: Annotated[int, typer.Option("--streams", help="Parallel TCP streams.")] = 4,
    duration: Annotated[
        float, typer.Option("--duration", help="Seconds of measured throughput (after warm-up).")
    ] = 5.0,
    interval: Annotated[
        float | None,
        typer.Option(
            "--interval",
            help="Seconds per throughput sample (default: a tenth of --duration, 0.1 to 1).",
            show_default=False,
        ),
    ] = None,
    target_gbit_s: Annotated[
        float | None,
        typer.Option(
            "--target-gbit-s",
            help="Contracted rate: compliance is the share of samples at or above it.",
            show_default=False,
        ),
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait for the peer to connect or answer.")
    ] = 5.0,
    rdma: Annotated[
        bool, typer.Option("--rdma/--no-rdma", help="Measure RDMA with perftest when installed.")
    ] = True,
    out: Annotated[
        Path | None, typer.Option("--out", help="Save the result JSON here.", show_default=False)
    ] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Run `gpurent vendors netcheck` (its help text is _HELP, given to Typer in register)."""
    if serve and peer is not None:
        raise InputError("--serve and --peer: give one (--serve on one node, --peer on the other)")
    if serve:
        _serve(bind, port)
        return
    if peer is None:
        raise InputError("give --peer HOST[:PORT] to measure, or --serve to be the peer end")
    if port != DEFAULT_PORT or bind != "0.0.0.0":
        raise InputError(
            "--port and --bind are for --serve; give the peer's port in --peer HOST:PORT"
        )
    from gpurent.inputs.files import write_text
    from gpurent.report.netcheck import netcheck_table, rdma_line
    from gpurent.vendors.netcheck import NetcheckConfig

    cfg = NetcheckConfig(
        count=count,
        streams=streams,
        duration_s=duration,
        interval_s=interval,
        target_gbit_s=target_gbit_s,
        timeout_s=timeout,
        rdma=rdma,
    )
    result = _measure(peer, cfg, quiet=json_)
    document = result.to_dict()
    if out is not None:
        write_text(out, json.dumps(document, indent=2) + "\n")
    if json_:
        print_json(document)
    else:
        console.print(netcheck_table(result))
        note = rdma_line(result)
        if note is not None:
            console.print(note, highlight=False, soft_wrap=True)
    if out is not None:
        err_console.print(f"saved {out}", highlight=False)
