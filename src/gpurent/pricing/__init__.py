"""How to pay: on-demand vs spot (with its checkpoint/restart overhead) vs committed terms.

Public API: `UsagePattern`, `Prices`, `SpotRisk`, `compare`, `Comparison`, `parse_hybrid`,
`cost_hybrid`, `advisor_band_mtti_h`.

The names are imported on first use: `gpurent.pricing.costs` (what every plan prices with) does
not load the payment-option comparison and its spot-lifetime analysis.
"""

from typing import TYPE_CHECKING

from gpurent.exports import lazy

if TYPE_CHECKING:
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

_HYBRID = "gpurent.pricing.hybrid"
_OPTIONS = "gpurent.pricing.payment_options"
_EXPORTS = {
    "ADVISOR_BANDS": _OPTIONS,
    "GUIDE_COMMIT_DISCOUNT": _OPTIONS,
    "Comparison": _OPTIONS,
    "HybridPart": _HYBRID,
    "HybridResult": _HYBRID,
    "OptionCost": _OPTIONS,
    "Prices": _OPTIONS,
    "SpotRisk": _OPTIONS,
    "UsagePattern": _OPTIONS,
    "advisor_band_mtti_h": _OPTIONS,
    "compare": _OPTIONS,
    "cost_hybrid": _HYBRID,
    "parse_hybrid": _HYBRID,
}
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
__getattr__ = lazy(__name__, _EXPORTS)
