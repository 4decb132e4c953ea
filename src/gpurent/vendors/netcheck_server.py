"""The peer end of `gpurent vendors netcheck`: answers echo, source and RDMA requests.

One thread per connection (a client's parallel streams arrive together; clients come one after
another and the server keeps serving), at most `MAX_CONNECTIONS` at once. Each operation is
bounded in time. `serve` returns when `stop` is set (the CLI sets it on SIGINT/SIGTERM).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from gpurent.errors import InputError
from gpurent.vendors import perftest
from gpurent.vendors.netcheck_wire import VERSION, NotNetcheckError, encode, read_frame, recv_exact

MAX_CONNECTIONS = 72  # 64 streams of one client, its latency connection and some slack
MAX_SOURCE_S = 120.0  # the longest stream a client may ask for
MAX_ECHO_BYTES = 64 * 1024
HANDSHAKE_TIMEOUT_S = 5.0
IDLE_TIMEOUT_S = 30.0  # an echo or source connection silent or stuck this long is dropped
_FILLER = b"\x00" * (256 * 1024)
_RDMA_LOCK = threading.Lock()  # one perftest server end at a time (they share perftest's port)
# How long an RDMA request waits for the previous one's server end: a client's latency test is
# followed at once by its bandwidth test, while the peer is still stopping the first end (it
# stops once the client closes, within perftest.stop's 2 s); beyond this it is another client's
# test still running, and the answer is "busy".
RDMA_WAIT_S = 10.0

Log = Callable[[str], None]


def _reply(sock: socket.socket, body: dict[str, Any]) -> None:
    sock.sendall(encode(body))


def _echo(sock: socket.socket, size_bytes: int) -> None:
    while True:
        data = recv_exact(sock, size_bytes)
        if len(data) < size_bytes:
            return
        sock.sendall(data)


def _source(sock: socket.socket, seconds: float) -> int:
    end = time.monotonic() + seconds
    sent = 0
    view = memoryview(_FILLER)
    while time.monotonic() < end:
        sent += sock.send(view)
    return sent


def _handle(sock: socket.socket, who: str, log: Log) -> None:
    sock.settimeout(HANDSHAKE_TIMEOUT_S)
    try:
        version, body = read_frame(sock)
    except (NotNetcheckError, TimeoutError):
        log(f"ignored a connection from {who}: not a netcheck client")
        return
    if version != VERSION:
        log(f"refused {who}: it speaks protocol version {version}, this server speaks {VERSION}")
        _reply(sock, {"ok": False, "error": f"protocol version {version} is not {VERSION}"})
        return
    op = body.get("op")
    sock.settimeout(IDLE_TIMEOUT_S)
    if op == "echo":
        size = body.get("size_bytes")
        if not isinstance(size, int) or not 1 <= size <= MAX_ECHO_BYTES:
            _reply(sock, {"ok": False, "error": f"echo size must be 1..{MAX_ECHO_BYTES} bytes"})
            return
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        _reply(sock, {"ok": True})
        log(f"latency test from {who}")
        _echo(sock, size)
    elif op == "source":
        seconds = body.get("seconds")
        if not isinstance(seconds, int | float) or not 0 < seconds <= MAX_SOURCE_S:
            _reply(sock, {"ok": False, "error": f"stream length must be 0..{MAX_SOURCE_S:g} s"})
            return
        _reply(sock, {"ok": True})
        _source(sock, float(seconds))
    elif op == "rdma":
        _rdma(sock, who, body, log)
    else:
        _reply(sock, {"ok": False, "error": f"unknown operation {op!r}"})


def _rdma(sock: socket.socket, who: str, body: dict[str, Any], log: Log) -> None:
    """Start the perftest server end (arguments built here, never taken from the wire)."""
    tool = body.get("tool")
    if tool not in perftest.TOOLS:
        _reply(sock, {"ok": False, "error": f"unknown RDMA tool {tool!r}"})
        return
    if not _RDMA_LOCK.acquire(timeout=RDMA_WAIT_S):
        _reply(sock, {"ok": False, "error": "busy with another client's RDMA test; retry"})
        return
    try:
        proc = perftest.start_server(str(tool))
    except perftest.NotInstalledError:
        _RDMA_LOCK.release()
        _reply(sock, {"ok": True, "installed": False})
        return
    log(f"RDMA {perftest.TOOLS[str(tool)]} for {who}")
    try:
        time.sleep(perftest.SERVER_START_S)  # let it open its port before the client connects
        _reply(sock, {"ok": True, "installed": True})
        sock.settimeout(perftest.CLIENT_TIMEOUT_S + 10.0)
        with contextlib.suppress(OSError):
            sock.recv(1)  # the client closes the connection when its end has finished
    finally:
        perftest.stop(proc)
        _RDMA_LOCK.release()


def _run(sock: socket.socket, who: str, log: Log, slots: threading.BoundedSemaphore) -> None:
    try:
        _handle(sock, who, log)
    except OSError:
        pass  # the client went away (it closes its streams at the end of a test)
    finally:
        sock.close()
        slots.release()


def listen(bind: str, port: int) -> socket.socket:
    """A listening socket on `bind:port` (port 0: any free port); one line when it cannot be."""
    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((bind, port))
    except OSError as exc:
        sock.close()
        raise InputError(
            f"cannot listen on {bind}:{port} ({exc.strerror or type(exc).__name__}); "
            "give another --port or --bind"
        ) from None
    sock.listen(MAX_CONNECTIONS)
    sock.settimeout(0.2)
    return sock


def serve(listener: socket.socket, *, stop: threading.Event, log: Log) -> int:
    """Serve until `stop` is set; the number of connections accepted."""
    slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
    threads: list[threading.Thread] = []
    served = 0
    with listener:
        while not stop.is_set():
            try:
                conn, addr = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                if stop.is_set():
                    break
                raise
            who = f"{addr[0]}:{addr[1]}"
            if not slots.acquire(blocking=False):
                log(f"refused {who}: {MAX_CONNECTIONS} connections already open")
                conn.close()
                continue
            thread = threading.Thread(target=_run, args=(conn, who, log, slots), daemon=True)
            thread.start()
            threads = [t for t in threads if t.is_alive()] + [thread]
            served += 1
    for thread in threads:
        thread.join(timeout=1.0)
    return served
