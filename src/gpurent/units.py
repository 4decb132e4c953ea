"""Unit constants and formatting helpers. Names carry units everywhere else.

Conventions: memory sizes in GiB (2**30 bytes) as reported by nvidia-smi and cloud catalogs for
device memory; bandwidths in GB/s (10**9 bytes/s) as on datasheets; compute in TFLOP/s (10**12).
"""

from __future__ import annotations

import math

BYTES_PER_GIB = 2**30
BYTES_PER_GB = 10**9
FLOPS_PER_TFLOP = 10**12
SECONDS_PER_HOUR = 3600.0
HOURS_PER_MONTH = 730.0  # 8760 h / 12, the convention of cloud price pages


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
    """The amount in USD as text: whole dollars from 1000, cents from 10, tenths of a cent below."""
    if amount >= 1000:
        return f"${amount:,.0f}"
    if amount >= 10:
        return f"${amount:,.2f}"
    return f"${amount:.3f}"
