"""What can be rented: GPU specs (datasheet facts) and offers (instances with prices).

Public API: `get_gpu`, `find_gpu`, `all_gpus`, `bundled_offers`, `GpuSpec`, `Offer`, `Precision`.
"""

from gpurent.catalog.gpu import GpuSpec
from gpurent.catalog.offer import Offer, ReservedTerm
from gpurent.catalog.offers import BUNDLED_AS_OF, bundled_offers
from gpurent.catalog.precision import Precision, parse_precision
from gpurent.catalog.specs import all_gpus, find_gpu, get_gpu

__all__ = [
    "BUNDLED_AS_OF",
    "GpuSpec",
    "Offer",
    "Precision",
    "ReservedTerm",
    "all_gpus",
    "bundled_offers",
    "find_gpu",
    "get_gpu",
    "parse_precision",
]
