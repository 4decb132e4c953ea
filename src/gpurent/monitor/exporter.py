"""Prometheus exporter: the latest sample as text exposition format (0.0.4) at /metrics.

The metrics are built with prometheus_client's collector API (`SampleCollector` yields metric
families; `render_metrics` is its exposition text, rendered once per sample, not per scrape) and
served by `http_serve.HttpServer`: one asyncio loop in a daemon thread (no thread per
connection), a real listen backlog, a deadline per connection (an idle or stalled client is
dropped after `idle_timeout_s`) and a cap on open connections. It binds 127.0.0.1
by default; any other address needs a bearer token (checked on every request with
`hmac.compare_digest`, 401 otherwise) or an explicit `insecure_public=True`. GPU metric names
are dcgm-exporter's where they mean the same thing (DCGM_FI_DEV_GPU_UTIL is NVML busy %, as in
DCGM), with its labels `gpu`, `UUID`, `pci_bus_id`, `device`, `modelName`, `Hostname`, so
existing Grafana dashboards work; DCGM_FI_PROF_* are ratios 0..1 like DCGM's. Metrics without a
DCGM equivalent are `gpurent_*` with their unit in the name. Default port 9400, like
dcgm-exporter's (use another one when both run).
"""

from __future__ import annotations

import hmac
import ipaddress
import socket
import threading
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from gpurent.errors import InputError, require
from gpurent.monitor.cost import CostReport
from gpurent.monitor.http_serve import HttpServer, Request, Response
from gpurent.monitor.rules import Finding
from gpurent.monitor.sample import GpuSample, Sample

if TYPE_CHECKING:  # prometheus_client (the monitor extra) is imported when metrics are built
    from prometheus_client.core import Metric

# (name, type, help, sample attribute, scale). The two ECC totals are typed gauge, not counter:
# prometheus_client appends `_total` to a counter's name, and the names stay dcgm-exporter's.
_GPU_METRICS: tuple[tuple[str, str, str, str, float], ...] = (
    (
        "DCGM_FI_DEV_GPU_UTIL",
        "gauge",
        "GPU busy % (share of time any kernel ran).",
        "gpu_busy_pct",
        1,
    ),
    ("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory copy utilisation (%).", "mem_copy_util_pct", 1),
    ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (MiB).", "memory_used_mib", 1),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (W).", "power_w", 1),
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (C).", "temperature_c", 1),
    ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock (MHz).", "sm_clock_mhz", 1),
    ("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock (MHz).", "mem_clock_mhz", 1),
    (
        "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
        "gauge",
        "Clock-event reason bit mask.",
        "throttle_reasons",
        1,
    ),
    ("DCGM_FI_DEV_PCIE_LINK_GEN", "gauge", "Current PCIe link generation.", "pcie_gen", 1),
    ("DCGM_FI_DEV_PCIE_LINK_WIDTH", "gauge", "Current PCIe link width (lanes).", "pcie_width", 1),
    (
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
        "gauge",
        "Volatile uncorrected ECC errors.",
        "ecc_uncorrected",
        1,
    ),
    (
        "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
        "gauge",
        "Volatile corrected ECC errors.",
        "ecc_corrected",
        1,
    ),
    (
        "DCGM_FI_PROF_SM_ACTIVE",
        "gauge",
        "SM activity ratio (GPM SM_UTIL / 100).",
        "sm_util_pct",
        0.01,
    ),
    ("DCGM_FI_PROF_SM_OCCUPANCY", "gauge", "SM occupancy ratio (GPM).", "sm_occupancy_pct", 0.01),
    (
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
        "gauge",
        "Tensor pipe activity ratio (GPM).",
        "tensor_util_pct",
        0.01,
    ),
    (
        "DCGM_FI_PROF_DRAM_ACTIVE",
        "gauge",
        "DRAM bandwidth activity ratio (GPM).",
        "dram_bw_util_pct",
        0.01,
    ),
    ("gpurent_gpu_pcie_link_gen_max", "gauge", "Maximum PCIe link generation.", "pcie_gen_max", 1),
    (
        "gpurent_gpu_pcie_link_width_max",
        "gauge",
        "Maximum PCIe link width (lanes).",
        "pcie_width_max",
        1,
    ),
    (
        "gpurent_gpu_pcie_tx_bytes_per_second",
        "gauge",
        "PCIe transmit throughput.",
        "pcie_tx_mb_per_s",
        1e6,
    ),
    (
        "gpurent_gpu_pcie_rx_bytes_per_second",
        "gauge",
        "PCIe receive throughput.",
        "pcie_rx_mb_per_s",
        1e6,
    ),
    ("gpurent_gpu_power_limit_watts", "gauge", "Enforced power limit.", "power_limit_w", 1),
)
_HOST_METRICS: tuple[tuple[str, str, str, float], ...] = (
    ("gpurent_host_cpu_util_percent", "Host CPU utilisation.", "cpu_util_pct", 1),
    ("gpurent_host_iowait_percent", "Host CPU time in iowait.", "iowait_pct", 1),
    ("gpurent_host_memory_used_bytes", "Host memory used.", "memory_used_gib", 2**30),
    ("gpurent_host_disk_util_percent_max", "Busiest disk %util.", "disk_util_pct", 1),
    (
        "gpurent_host_disk_read_bytes_per_second",
        "Disk reads, all devices.",
        "disk_read_mb_per_s",
        1e6,
    ),
    ("gpurent_host_disk_write_bytes_per_second", "Disk writes.", "disk_write_mb_per_s", 1e6),
    ("gpurent_host_network_receive_bytes_per_second", "Network in.", "net_rx_mb_per_s", 1e6),
    ("gpurent_host_network_transmit_bytes_per_second", "Network out.", "net_tx_mb_per_s", 1e6),
)


GPU_LABELS = ("gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname")
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
TOKEN_ENV = "GPURENT_EXPORTER_TOKEN"
MIN_TOKEN_CHARS = 16
LISTEN_BACKLOG = 1024
"""Pending connections the kernel queues (capped by net.core.somaxconn)."""
IDLE_TIMEOUT_S = 10.0
"""A connection not answered within this many seconds (idle, slow, stalled) is closed."""
MAX_CONNECTIONS = 512
"""Connections open at once; more are closed on arrival."""


def _scaled(value: float, scale: float) -> float:
    """`value * scale`; a % to ratio divides by 100 (82 / 100 is 0.82, 82 * 0.01 is not)."""
    return value / round(1 / scale) if 0 < scale < 1 else value * scale


def _gpu_label_values(g: GpuSample, hostname: str) -> list[str]:
    return [str(g.index), g.uuid, g.pci_bus_id, f"nvidia{g.index}", g.name, hostname]


def _gpu_family(
    name: str, help_text: str, rows: Iterable[tuple[GpuSample, float]], hostname: str
) -> Metric:
    from prometheus_client.core import GaugeMetricFamily

    family = GaugeMetricFamily(name, help_text, labels=GPU_LABELS)
    for g, value in rows:
        family.add_metric(_gpu_label_values(g, hostname), value)
    return family


class SampleCollector:
    """A prometheus_client collector over one sample (and optionally the cost and findings)."""

    def __init__(
        self,
        sample: Sample | None,
        *,
        hostname: str,
        cost: CostReport | None = None,
        findings: Iterable[Finding] = (),
        cost_labels: Iterable[tuple[str, str]] = (),
    ) -> None:
        self.sample = sample
        self.hostname = hostname
        self.cost = cost
        self.findings = tuple(findings)
        # e.g. (("machine", M), ("gpurent_job", J)): what budget alerting rules select on
        self.cost_labels = tuple(cost_labels)

    def collect(self) -> Iterator[Metric]:
        """The Prometheus metric families of the sample, cost and findings."""
        from prometheus_client.core import GaugeMetricFamily

        if self.sample is not None:
            yield from self._gpus(self.sample)
            yield from self._host(self.sample)
        yield from self._cost()
        counts: dict[str, int] = {}
        for f in self.findings:
            counts[f.kind.value] = counts.get(f.kind.value, 0) + 1
        if counts:
            family = GaugeMetricFamily(
                "gpurent_findings",
                "Findings of the diagnosis rules over the window.",
                labels=("kind",),
            )
            for kind, n in sorted(counts.items()):
                family.add_metric([kind], n)
            yield family

    def _gpus(self, sample: Sample) -> Iterator[Metric]:
        host = self.hostname
        for name, _kind, help_text, attr, scale in _GPU_METRICS:
            values = [(g, getattr(g, attr)) for g in sample.gpus if not g.lost]
            rows = [(g, _scaled(v, scale)) for g, v in values if v is not None]
            if rows:
                yield _gpu_family(name, help_text, rows, host)
        if not sample.gpus:
            return
        free = [
            (g, float(g.memory_total_mib - g.memory_used_mib))
            for g in sample.gpus
            if g.memory_total_mib is not None and g.memory_used_mib is not None
        ]
        if free:
            yield _gpu_family("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (MiB).", free, host)
        yield _gpu_family(
            "gpurent_gpu_lost",
            "1 when NVML reports the GPU lost.",
            [(g, float(g.lost)) for g in sample.gpus],
            host,
        )
        xids = [(g, float(g.xids[-1])) for g in sample.gpus if g.xids]
        if xids:
            yield _gpu_family("DCGM_FI_DEV_XID_ERRORS", "Last Xid error seen.", xids, host)

    def _host(self, sample: Sample) -> Iterator[Metric]:
        from prometheus_client.core import GaugeMetricFamily

        for name, help_text, attr, scale in _HOST_METRICS:
            value = getattr(sample.host, attr)
            if value is not None:
                family = GaugeMetricFamily(name, help_text, labels=("Hostname",))
                family.add_metric([self.hostname], _scaled(value, scale))
                yield family
        if sample.host.disks:
            family = GaugeMetricFamily(
                "gpurent_host_disk_util_percent",
                "Disk %util (busy time / wall time).",
                labels=("device", "Hostname"),
            )
            for d in sample.host.disks:
                family.add_metric([d.device, self.hostname], d.util_pct)
            yield family

    def _cost(self) -> Iterator[Metric]:
        from prometheus_client.core import GaugeMetricFamily

        cost = self.cost
        if cost is None:
            return
        for name, help_text, value in (
            ("gpurent_cost_spent_usd", "Money spent since the monitor started.", cost.spent_usd),
            ("gpurent_cost_idle_wasted_usd", "Money spent on idle GPUs.", cost.idle_wasted_usd),
            (
                "gpurent_cost_underused_wasted_usd",
                "Money spent on unused GPU capacity.",
                cost.underused_wasted_usd,
            ),
            ("gpurent_cost_price_usd_per_hour", "Instance price.", cost.price_usd_per_hour),
        ):
            if not self.cost_labels:
                yield GaugeMetricFamily(name, help_text, value=value)
                continue
            family = GaugeMetricFamily(name, help_text, labels=[k for k, _ in self.cost_labels])
            family.add_metric([v for _, v in self.cost_labels], value)
            yield family


def render_metrics(
    sample: Sample | None,
    *,
    hostname: str,
    cost: CostReport | None = None,
    findings: Iterable[Finding] = (),
    cost_labels: Iterable[tuple[str, str]] = (),
) -> str:
    """The exposition text for one sample (and optionally the cost meter and findings); the
    cost metrics carry `cost_labels` (machine, gpurent_job, gpurent_project) when given."""
    require("prometheus_client", "monitor")
    from prometheus_client.exposition import generate_latest

    collector = SampleCollector(
        sample, hostname=hostname, cost=cost, findings=findings, cost_labels=cost_labels
    )
    return generate_latest(collector).decode()


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and `localhost`: only this machine can connect."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def check_token(token: str) -> str:
    """`token` when it can be sent as a bearer token and is not trivially guessed."""
    if len(token) < MIN_TOKEN_CHARS or not all(33 <= ord(c) < 127 for c in token):
        raise InputError(
            f"--token / ${TOKEN_ENV}: need at least {MIN_TOKEN_CHARS} printable ASCII characters "
            "without spaces, e.g. from `openssl rand -hex 16`"
        )
    return token


def check_listen(host: str, *, token: str | None, insecure_public: bool) -> None:
    """InputError unless serving on `host` is safe: loopback, a valid token, or said public."""
    if token is not None:
        check_token(token)
    elif not insecure_public and not is_loopback(host):
        raise InputError(
            f"--listen {host}: not a loopback address, and the metrics include the hostname "
            f"and the cost; give --token (or ${TOKEN_ENV}) so scrapers must authenticate, "
            "or --insecure-public to serve them to anyone who can connect"
        )


class Exporter:
    """Serves the text set by `update()` at http://HOST:PORT/metrics from a daemon thread.

    A non-loopback `host` needs `token` (clients send `Authorization: Bearer TOKEN`) or
    `insecure_public=True`; with a token, every request is checked (401 otherwise). The server
    (`http_serve.HttpServer`) holds no thread per connection and cuts off a connection that has
    not been answered within `idle_timeout_s`."""

    def __init__(
        self,
        port: int = 9400,
        host: str = "127.0.0.1",
        *,
        token: str | None = None,
        insecure_public: bool = False,
        idle_timeout_s: float = IDLE_TIMEOUT_S,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        check_listen(host, token=token, insecure_public=insecure_public)
        self._body = b"# no sample yet\n"
        self._lock = threading.Lock()
        self._expected = f"Bearer {token}".encode() if token is not None else None
        self._server = HttpServer(
            host,
            port,
            self._answer,
            timeout_s=idle_timeout_s,
            backlog=LISTEN_BACKLOG,
            max_connections=max_connections,
        )

    def _answer(self, request: Request) -> Response:
        if self._expected is not None:
            given = request.headers.get("authorization", "").encode("latin-1", "replace")
            if not hmac.compare_digest(given, self._expected):
                return Response(
                    401,
                    b"authorization required: send Authorization: Bearer TOKEN\n",
                    headers=(("WWW-Authenticate", 'Bearer realm="gpurent"'),),
                )
        if request.path.split("?")[0] not in ("/metrics", "/"):
            return Response(404, b"not found; try /metrics\n")
        return Response(200, self.body, content_type=CONTENT_TYPE)

    @property
    def port(self) -> int:
        """The TCP port the exporter listens on."""
        return self._server.port

    @property
    def open_connections(self) -> int:
        """Number of client connections open now."""
        return self._server.open_connections

    @property
    def body(self) -> bytes:
        """The metrics text served now, as bytes."""
        with self._lock:
            return self._body

    @property
    def text(self) -> str:
        """The metrics text served now."""
        return self.body.decode()

    def update(self, text: str) -> None:
        """Replace the metrics text served from now on."""
        body = text.encode()
        with self._lock:
            self._body = body

    def start(self) -> Exporter:
        """Start serving on the daemon thread; return self."""
        self._server.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.stop()


def hostname() -> str:
    """This machine's host name."""
    return socket.gethostname()
