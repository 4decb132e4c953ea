"""The monotone functions that turn each criterion's evidence into a 0-100 score (pure).

Anchors are the seed guide's thresholds (section 7.1): 2 us cross-rack latency, 95% bandwidth
compliance, scale-out within 5 minutes, 24x7 GPU experts; docs/vendors.md explains each curve.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

LATENCY_FULL_US = 2.0  # the guide's cross-rack latency target
LATENCY_DECADES_TO_ZERO = 2.0  # 100 x (2 us / latency) decays to 0 two decades above: 200 us
COMPLIANCE_TARGET = 0.95  # the guide's bandwidth compliance target
SCALE_OUT_TARGET_S = 300.0  # the guide's "scale-out within 5 minutes"
SUPPORT_24X7_POINTS = 40.0
SUPPORT_EXPERT_POINTS = 40.0
SUPPORT_RESPONSE_POINTS = 20.0
SUPPORT_RESPONSE_FULL_H = 1.0


def _clamp(x: float) -> float:
    return min(100.0, max(0.0, x))


def latency_score(p50_us: float) -> float:
    """100 at <= 2 us; 100 x (1 - log10(latency / 2 us) / 2) above: 50 at 20 us, 0 at 200 us."""
    if p50_us <= LATENCY_FULL_US:
        return 100.0
    return _clamp(100.0 * (1.0 - math.log10(p50_us / LATENCY_FULL_US) / LATENCY_DECADES_TO_ZERO))


def compliance_score(compliance: float) -> float:
    """100 x compliance / 0.95, capped at 100 (the guide: compliance > 95%)."""
    return _clamp(100.0 * compliance / COMPLIANCE_TARGET)


def elasticity_score(timings_s: Sequence[float]) -> float:
    """100 x the mean over timings of min(1, 300 s / timing)."""
    return _clamp(100.0 * sum(min(1.0, SCALE_OUT_TARGET_S / t) for t in timings_s) / len(timings_s))


def cost_score(total_usd: float, cheapest_usd: float) -> float:
    """100 x cheapest / this (100 for the cheapest; a free job scores 100)."""
    if total_usd <= 0.0:
        return 100.0
    return _clamp(100.0 * cheapest_usd / total_usd)


def support_score(always_24x7: bool, gpu_experts: bool, response_time_h: float) -> float:
    """40 for 24x7, 40 for GPU experts, 20 x min(1, 1 h / response time)."""
    response = min(1.0, SUPPORT_RESPONSE_FULL_H / response_time_h)
    return _clamp(
        SUPPORT_24X7_POINTS * always_24x7
        + SUPPORT_EXPERT_POINTS * gpu_experts
        + SUPPORT_RESPONSE_POINTS * response
    )


def hardware_fraction_score(datasheet_fraction: float | None, best_fraction: float | None) -> float:
    """100 x the mean of min(1, measured/datasheet) and measured/best (whichever are known)."""
    parts = [min(1.0, datasheet_fraction)] if datasheet_fraction is not None else []
    if best_fraction is not None:
        parts.append(min(1.0, best_fraction))
    return _clamp(100.0 * sum(parts) / len(parts)) if parts else 0.0
