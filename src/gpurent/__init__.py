"""gpurent: what to rent for a deep-learning job, where, how to pay, and how to keep it alive.

The pure core (catalog, workload, estimate, plan, pricing, spot) takes values and returns frozen
result objects; I/O lives at the edges (catalog sources, bench, monitor probes, runtime, cli).
"""

from gpurent.errors import GpurentError

__version__ = "0.1.0"  # the only place the version is written (pyproject reads it)
"""The package version (PEP 440); pyproject.toml reads it from here."""

__all__ = ["GpurentError", "__version__"]
