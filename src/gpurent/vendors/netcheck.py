"""The measuring end of `gpurent vendors netcheck`: latency, throughput and RDMA against a peer.

- Latency: one TCP connection with Nagle off both ways; a small message (32 bytes) sent and
  echoed back, `count` times after `warmup` untimed round trips; each round trip timed with the
  monotonic nanosecond clock. Figures are round trips in microseconds.
- Throughput: `streams` parallel TCP connections on which the peer sends filler; this end counts
  the bytes it receives per interval (all streams together) after a warm-up (TCP slow start), so
  the figure is what arrived, not what a send buffer accepted. Data flows from the peer to here.
- RDMA: perftest's `ib_write_lat` and `ib_write_bw` when both ends have them (see `perftest`).

Every phase is bounded in time; a peer that stops answering is a one-line DeviceError.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass

from gpurent.errors import DeviceError, InputError
from gpurent.vendors import perftest
from gpurent.vendors.netcheck_result import LatencyUs, NetcheckResult, RdmaResult
from gpurent.vendors.netcheck_wire import Peer, connect, handshake, recv_exact

MESSAGE_BYTES = 32
MAX_STREAMS = 64
MIN_INTERVAL_S = 0.01  # finer samples are clock noise (and a huge list at --duration 100)
Progress = Callable[[str, float], None]


def _no_progress(phase: str, fraction: float) -> None:
    return None


@dataclass(frozen=True, slots=True)
class NetcheckConfig:
    """What to measure and how long each phase may take."""

    count: int = 1000
    warmup: int | None = None  # untimed round trips first (default: a tenth of count, >= 10)
    streams: int = 4
    duration_s: float = 5.0  # measured throughput time, after warmup_s
    warmup_s: float | None = None  # default: a fifth of duration_s, at most 1 s
    interval_s: float | None = None  # default: a tenth of duration_s, 0.1 s to 1 s
    target_gbit_s: float | None = None
    timeout_s: float = 5.0  # to connect, and the longest silence of a peer mid-test
    latency_limit_s: float = 10.0  # the latency phase stops here with what it has
    rdma: bool = True

    def validate(self) -> None:
        """Check the options' ranges; InputError naming the bad option."""
        if not 1 <= self.streams <= MAX_STREAMS:
            raise InputError(f"--streams must be 1..{MAX_STREAMS}, got {self.streams}")
        if self.interval < MIN_INTERVAL_S:
            raise InputError(
                f"--interval must be at least {MIN_INTERVAL_S:g} s, got {self.interval:g}"
            )
        if self.interval > self.duration_s:
            raise InputError(
                f"--interval {self.interval:g} s is longer than --duration {self.duration_s:g} s"
            )

    @property
    def warmup_count(self) -> int:
        """Latency probes discarded before timing: as given, else a tenth of count (at least 10)."""
        return self.warmup if self.warmup is not None else max(10, self.count // 10)

    @property
    def warmup_seconds(self) -> float:
        """Seconds of throughput to discard first: as given, else a fifth of the run (at most 1)."""
        return self.warmup_s if self.warmup_s is not None else min(1.0, self.duration_s / 5)

    @property
    def interval(self) -> float:
        """Seconds between throughput samples: as given, else a tenth of the run (0.1 to 1)."""
        if self.interval_s is not None:
            return self.interval_s
        return max(0.1, min(1.0, self.duration_s / 10))


def measure_latency(
    peer: Peer, cfg: NetcheckConfig, progress: Progress = _no_progress
) -> LatencyUs:
    """Round-trip times of small messages, warm-up discarded."""
    sock = connect(peer, cfg.timeout_s)
    with sock:
        sock.settimeout(cfg.timeout_s)
        handshake(sock, peer, {"op": "echo", "size_bytes": MESSAGE_BYTES})
        message = bytes(range(MESSAGE_BYTES))
        samples: list[float] = []
        total = cfg.warmup_count + cfg.count
        deadline = time.monotonic() + cfg.latency_limit_s
        clock = time.perf_counter_ns
        try:
            for i in range(total):
                start = clock()
                sock.sendall(message)
                echoed = recv_exact(sock, MESSAGE_BYTES)
                took = clock() - start
                if len(echoed) < MESSAGE_BYTES:
                    raise DeviceError(f"{peer} closed the connection during the latency test")
                if i >= cfg.warmup_count:
                    samples.append(took / 1000.0)
                if i % 64 == 0:
                    progress("latency", i / total)
                    if samples and time.monotonic() > deadline:
                        break
        except TimeoutError:
            raise DeviceError(
                f"{peer} stopped answering during the latency test (no echo in {cfg.timeout_s:g} s)"
            ) from None
        except OSError as exc:
            raise DeviceError(
                f"the connection to {peer} failed during the latency test ({exc.strerror or exc})"
            ) from None
    if not samples:
        raise DeviceError(f"no latency sample from {peer} within {cfg.latency_limit_s:g} s")
    progress("latency", 1.0)
    return LatencyUs.of(samples)


@dataclass(frozen=True, slots=True)
class Throughput:
    """A throughput run: the mean Gbit/s and each interval's sample."""

    gbit_s: float
    samples_gbit_s: tuple[float, ...]
    interval_s: float


def measure_throughput(
    peer: Peer, cfg: NetcheckConfig, progress: Progress = _no_progress
) -> Throughput:
    """Bytes received per interval over `cfg.streams` parallel streams from the peer."""
    interval = cfg.interval
    n_intervals = max(1, round(cfg.duration_s / interval))
    duration = n_intervals * interval
    ask_s = cfg.warmup_seconds + duration + 2.0  # the peer stops on its own if this end dies
    socks: list[socket.socket] = []
    selector = selectors.DefaultSelector()
    try:
        for _ in range(cfg.streams):
            sock = connect(peer, cfg.timeout_s)
            socks.append(sock)
            sock.settimeout(cfg.timeout_s)
            handshake(sock, peer, {"op": "source", "seconds": ask_s})
        for sock in socks:
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)
        buckets = _receive(
            selector,
            peer=peer,
            cfg=cfg,
            interval=interval,
            n_intervals=n_intervals,
            progress=progress,
        )
    finally:
        selector.close()
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.close()
    samples = tuple(b * 8 / interval / 1e9 for b in buckets)
    progress("throughput", 1.0)
    return Throughput(sum(buckets) * 8 / duration / 1e9, samples, interval)


def _receive(
    selector: selectors.BaseSelector,
    *,
    peer: Peer,
    cfg: NetcheckConfig,
    interval: float,
    n_intervals: int,
    progress: Progress,
) -> list[int]:
    buffer = bytearray(1 << 20)
    buckets = [0] * n_intervals
    now = started = time.monotonic()
    measure_from = now + cfg.warmup_seconds
    end = measure_from + n_intervals * interval
    last_data = now
    open_streams = len(selector.get_map())
    while now < end:
        events = selector.select(timeout=min(0.05, end - now))
        now = time.monotonic()
        for key, _ in events:
            sock: socket.socket = key.fileobj  # type: ignore[assignment]
            try:
                n = sock.recv_into(buffer)
            except BlockingIOError:
                continue
            except OSError as exc:
                raise DeviceError(
                    f"a stream from {peer} failed during the throughput test "
                    f"({exc.strerror or exc})"
                ) from None
            if n == 0:
                raise DeviceError(f"{peer} closed a stream before the throughput test ended")
            last_data = now
            if now >= measure_from:
                index = int((now - measure_from) / interval)
                if index < n_intervals:
                    buckets[index] += n
        if now - last_data > cfg.timeout_s:
            raise DeviceError(
                f"{peer} sent nothing for {cfg.timeout_s:g} s on {open_streams} streams"
            )
        progress("throughput", min(1.0, (now - started) / (end - started)))
    return buckets


def measure_rdma(peer: Peer, cfg: NetcheckConfig) -> tuple[RdmaResult | None, str]:
    """perftest's write latency and bandwidth, or None and why they were not measured."""
    if not (perftest.installed("lat") and perftest.installed("bw")):
        return None, "not measured (perftest not installed)"
    outputs: dict[str, str] = {}
    for kind in ("lat", "bw"):
        sock = connect(peer, cfg.timeout_s)
        with sock:
            sock.settimeout(cfg.timeout_s)
            answer = handshake(sock, peer, {"op": "rdma", "tool": kind})
            if answer.get("installed") is not True:
                return None, "not measured (perftest not installed on the peer)"
            try:
                outputs[kind] = perftest.run_client(kind, peer.host)
            except (perftest.PerftestError, perftest.NotInstalledError) as exc:
                return None, f"not measured ({exc})"
    try:
        latency = perftest.parse_lat(outputs["lat"])
        bandwidth = perftest.parse_bw(outputs["bw"])
    except perftest.PerftestError as exc:
        return None, f"not measured (cannot read perftest's output: {exc})"
    return RdmaResult(latency_us=latency, bandwidth_gbit_s=bandwidth), "measured with perftest"


def run_netcheck(
    peer: Peer, cfg: NetcheckConfig, progress: Progress = _no_progress
) -> NetcheckResult:
    """Latency, then throughput, then RDMA (when asked and available) against `peer`."""
    cfg.validate()
    latency = measure_latency(peer, cfg, progress)
    throughput = measure_throughput(peer, cfg, progress)
    if cfg.rdma:
        progress("rdma", 0.0)
        rdma, note = measure_rdma(peer, cfg)
    else:
        rdma, note = None, "not measured (--no-rdma)"
    return NetcheckResult(
        peer=str(peer),
        latency_us=latency,
        throughput_gbit_s=throughput.gbit_s,
        samples_gbit_s=throughput.samples_gbit_s,
        interval_s=throughput.interval_s,
        streams=cfg.streams,
        target_gbit_s=cfg.target_gbit_s,
        rdma=rdma,
        rdma_note=note,
    )
