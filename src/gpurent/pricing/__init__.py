"""How to pay: on-demand vs spot (with its checkpoint/restart overhead) vs committed terms.

Public API: `UsagePattern`, `Prices`, `SpotRisk`, `compare`, `Comparison`, `parse_hybrid`,
`cost_hybrid`, `advisor_band_mtti_h`.
"""

from gpurent.pricing.hybrid import HybridPart, HybridResult, cost_hybrid, parse_hybrid
from gpurent.pricing.payment_options import (
    ADVISOR_BANDS,
    GUIDE_COMMIT_DISCOUNT,
    Comparison,
    OptionCost,
    Prices,
    SpotRisk,
    UsagePattern,
    advisor_band_mtti_h,
    compare,
)

__all__ = [
    "ADVISOR_BANDS",
    "GUIDE_COMMIT_DISCOUNT",
    "Comparison",
    "HybridPart",
    "HybridResult",
    "OptionCost",
    "Prices",
    "SpotRisk",
    "UsagePattern",
    "advisor_band_mtti_h",
    "compare",
    "cost_hybrid",
    "parse_hybrid",
]
