"""Prometheus exporter: the latest sample as text exposition format (0.0.4) at /metrics.

Written with the standard library (`http.server`), no prometheus-client needed. GPU metric names
are dcgm-exporter's where they mean the same thing (DCGM_FI_DEV_GPU_UTIL is NVML busy %, as in
DCGM), with its labels `gpu`, `UUID`, `pci_bus_id`, `device`, `modelName`, `Hostname`, so
existing Grafana dashboards work; DCGM_FI_PROF_* are ratios 0..1 like DCGM's. Metrics without a
DCGM equivalent are `gpurent_*` with their unit in the name. Default port 9400, like
dcgm-exporter's (use another one when both run).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from gpurent.monitor.cost import CostReport
from gpurent.monitor.rules import Finding
from gpurent.monitor.sample import GpuSample, Sample

# (name, type, help, sample attribute, scale)
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
        "counter",
        "Volatile uncorrected ECC errors.",
        "ecc_uncorrected",
        1,
    ),
    (
        "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
        "counter",
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


def _esc(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(pairs: Iterable[tuple[str, str]]) -> str:
    return "{" + ",".join(f'{k}="{_esc(v)}"' for k, v in pairs) + "}"


def _gpu_labels(g: GpuSample, hostname: str) -> str:
    return _labels(
        (
            ("gpu", str(g.index)),
            ("UUID", g.uuid),
            ("pci_bus_id", g.pci_bus_id),
            ("device", f"nvidia{g.index}"),
            ("modelName", g.name),
            ("Hostname", hostname),
        )
    )


def render_metrics(
    sample: Sample | None,
    *,
    hostname: str,
    cost: CostReport | None = None,
    findings: Iterable[Finding] = (),
) -> str:
    """The exposition text for one sample (and optionally the cost meter and findings)."""
    lines: list[str] = []
    if sample is not None:
        for name, kind, help_text, attr, scale in _GPU_METRICS:
            values = [(g, getattr(g, attr)) for g in sample.gpus if not g.lost]
            values = [(g, v) for g, v in values if v is not None]
            if not values:
                continue
            lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
            lines += [f"{name}{_gpu_labels(g, hostname)} {v * scale:g}" for g, v in values]
        if sample.gpus:
            free = [
                (g, g.memory_total_mib - g.memory_used_mib)
                for g in sample.gpus
                if g.memory_total_mib is not None and g.memory_used_mib is not None
            ]
            if free:
                lines += [
                    "# HELP DCGM_FI_DEV_FB_FREE Framebuffer memory free (MiB).",
                    "# TYPE DCGM_FI_DEV_FB_FREE gauge",
                ]
                lines += [f"DCGM_FI_DEV_FB_FREE{_gpu_labels(g, hostname)} {v:g}" for g, v in free]
            lines += [
                "# HELP gpurent_gpu_lost 1 when NVML reports the GPU lost.",
                "# TYPE gpurent_gpu_lost gauge",
            ]
            lines += [
                f"gpurent_gpu_lost{_gpu_labels(g, hostname)} {int(g.lost)}" for g in sample.gpus
            ]
            xids = [(g, g.xids[-1]) for g in sample.gpus if g.xids]
            if xids:
                lines += [
                    "# HELP DCGM_FI_DEV_XID_ERRORS Last Xid error seen.",
                    "# TYPE DCGM_FI_DEV_XID_ERRORS gauge",
                ]
                lines += [f"DCGM_FI_DEV_XID_ERRORS{_gpu_labels(g, hostname)} {x}" for g, x in xids]
        host_label = _labels((("Hostname", hostname),))
        for name, help_text, attr, scale in _HOST_METRICS:
            value = getattr(sample.host, attr)
            if value is not None:
                lines += [f"# HELP {name} {help_text}", f"# TYPE {name} gauge"]
                lines.append(f"{name}{host_label} {value * scale:g}")
        if sample.host.disks:
            lines += [
                "# HELP gpurent_host_disk_util_percent Disk %util (busy time / wall time).",
                "# TYPE gpurent_host_disk_util_percent gauge",
            ]
            for d in sample.host.disks:
                labels = _labels((("device", d.device), ("Hostname", hostname)))
                lines.append(f"gpurent_host_disk_util_percent{labels} {d.util_pct:g}")
    if cost is not None:
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
            lines += [f"# HELP {name} {help_text}", f"# TYPE {name} gauge", f"{name} {value:g}"]
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.kind.value] = counts.get(f.kind.value, 0) + 1
    if counts:
        lines += [
            "# HELP gpurent_findings Findings of the diagnosis rules over the window.",
            "# TYPE gpurent_findings gauge",
        ]
        lines += [f'gpurent_findings{{kind="{k}"}} {v}' for k, v in sorted(counts.items())]
    return "\n".join(lines) + "\n"


class Exporter:
    """Serves the text set by `update()` at http://HOST:PORT/metrics from a daemon thread."""

    def __init__(self, port: int = 9400, host: str = "0.0.0.0") -> None:
        self._text = "# no sample yet\n"
        self._lock = threading.Lock()
        exporter = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.split("?")[0] not in ("/metrics", "/"):
                    self.send_error(404, "try /metrics")
                    return
                body = exporter.text.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def text(self) -> str:
        with self._lock:
            return self._text

    def update(self, text: str) -> None:
        with self._lock:
            self._text = text

    def start(self) -> Exporter:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def hostname() -> str:
    return socket.gethostname()
