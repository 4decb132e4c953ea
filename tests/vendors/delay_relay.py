"""A TCP relay that holds every chunk a fixed time in each direction: a known delay for the
netcheck tests where the kernel has no `sch_netem`. Imported by tests/vendors/test_netcheck.py and
run as a script inside a network namespace (`python delay_relay.py LISTEN_HOST TARGET_HOST
TARGET_PORT DELAY_S`: it prints its port, then relays until killed)."""

from __future__ import annotations

import contextlib
import queue
import socket
import sys
import threading
import time


class DelayingRelay:
    """Forwards TCP from a local port to `target`, holding every chunk `delay_s` in each
    direction, so a round trip through it takes at least twice that."""

    def __init__(self, target: tuple[str, int], delay_s: float, listen: str = "127.0.0.1") -> None:
        self.target = target
        self.delay_s = delay_s
        self.listener = socket.create_server((listen, 0))
        self.port = self.listener.getsockname()[1]
        self.socks: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            self.socks += [client, upstream]
            for s in (client, upstream):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._pipe(client, upstream)
            self._pipe(upstream, client)

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        held: queue.Queue[tuple[float, bytes]] = queue.Queue()

        def read() -> None:
            while True:
                try:
                    data = src.recv(65536)
                except OSError:
                    data = b""
                held.put((time.monotonic() + self.delay_s, data))
                if not data:
                    return

        def write() -> None:
            while True:
                due, data = held.get()
                time.sleep(max(0.0, due - time.monotonic()))
                try:
                    if not data:
                        dst.shutdown(socket.SHUT_WR)
                        return
                    dst.sendall(data)
                except OSError:
                    return

        threading.Thread(target=read, daemon=True).start()
        threading.Thread(target=write, daemon=True).start()

    def close(self) -> None:
        self.listener.close()
        for s in self.socks:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()


def main(argv: list[str]) -> None:
    """Run a relay from the command line until the process is killed."""
    listen, host, port, delay = argv
    relay = DelayingRelay((host, int(port)), float(delay), listen=listen)
    print(relay.port, flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main(sys.argv[1:])
