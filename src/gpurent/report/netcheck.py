"""The terminal table of a `gpurent vendors netcheck` result."""

from __future__ import annotations

from rich.table import Table

from gpurent.vendors.netcheck_result import LatencyUs, NetcheckResult


def _us(value: float | None) -> str:
    if value is None:
        return "-"
    if value < 10:
        return f"{value:.2f}"  # RDMA latencies are a microsecond or two
    return f"{value:,.1f}" if value < 1000 else f"{value:,.0f}"


def _latency(lat: LatencyUs) -> str:
    return f"{_us(lat.p50)} / {_us(lat.p90)} / {_us(lat.p99)}"


def _gbit(value: float) -> str:
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def netcheck_table(result: NetcheckResult) -> Table:
    """One row per figure: what was measured, its value, and how (RDMA rows only when it was
    measured; `rdma_line` says why not otherwise)."""
    table = Table(title=f"Network check against {result.peer}", title_justify="left")
    table.add_column("measure")
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("how")
    table.add_row(
        "TCP latency p50/p90/p99 (us)",
        _latency(result.latency_us),
        f"round trips of 32-byte messages, Nagle off, {result.latency_us.samples} samples",
    )
    table.add_row(
        "TCP throughput (Gbit/s)",
        _gbit(result.throughput_gbit_s),
        f"{result.streams} streams, {len(result.samples_gbit_s)} samples of "
        f"{result.interval_s:g} s",
    )
    if result.samples_gbit_s:
        low, high = min(result.samples_gbit_s), max(result.samples_gbit_s)
        table.add_row("  per interval (Gbit/s)", f"{_gbit(low)} .. {_gbit(high)}", "min .. max")
    if result.target_gbit_s is not None and result.compliance is not None:
        table.add_row(
            "compliance",
            f"{result.compliance:.0%}",
            f"share of samples >= {result.target_gbit_s:g} Gbit/s",
        )
    if result.rdma is not None:
        table.add_row(
            "RDMA latency p50/p90/p99 (us)",
            _latency(result.rdma.latency_us),
            f"ib_write_lat, one-way (half the round trip), {result.rdma.latency_us.samples} "
            "samples",
        )
        table.add_row(
            "RDMA bandwidth (Gbit/s)", _gbit(result.rdma.bandwidth_gbit_s), "ib_write_bw average"
        )
    return table


def rdma_line(result: NetcheckResult) -> str | None:
    """`RDMA: not measured (...)` when RDMA has no figures, else None."""
    return None if result.rdma is not None else f"RDMA: {result.rdma_note}"
