"""Unit constants and helpers. Names carry units everywhere else; these are the only conversions.

Conventions: memory sizes in GiB (2**30 bytes) as reported by nvidia-smi and cloud catalogs for
device memory; bandwidths in GB/s (10**9 bytes/s) as on datasheets; compute in TFLOP/s (10**12).
"""

from __future__ import annotations

import math

BYTES_PER_GIB = 2**30
BYTES_PER_GB = 10**9
FLOPS_PER_TFLOP = 10**12
SECONDS_PER_HOUR = 3600.0
SECONDS_PER_MINUTE = 60.0
HOURS_PER_MONTH = 730.0  # 8760 h / 12, the convention of cloud price pages


def bytes_to_gib(n_bytes: float) -> float:
    return n_bytes / BYTES_PER_GIB


def gib_to_bytes(gib: float) -> float:
    return gib * BYTES_PER_GIB


def gb_to_gib(gb: float) -> float:
    return gb * BYTES_PER_GB / BYTES_PER_GIB


def gbit_to_gbyte(gbit_per_s: float) -> float:
    """Network Gbit/s to GB/s."""
    return gbit_per_s / 8.0


def hours(seconds: float) -> float:
    return seconds / SECONDS_PER_HOUR


def format_duration(seconds: float) -> str:
    """Human-readable duration: '45 s', '12.5 min', '3.2 h', '4.1 days'."""
    if math.isnan(seconds) or math.isinf(seconds):
        return "never"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.1f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def format_usd(amount: float) -> str:
    if amount >= 1000:
        return f"${amount:,.0f}"
    if amount >= 10:
        return f"${amount:,.2f}"
    return f"${amount:.3f}"
