"""Lazy public names for a package's `__init__` (PEP 562).

A package whose public API lives in submodules with heavy imports (numpy, rich, SQLAlchemy, a
training framework) lists them in `__all__` without importing them at start-up::

    _EXPORTS = {"Trace": "gpurent.spot.io.trace", ...}
    __all__ = sorted(_EXPORTS)
    __getattr__ = lazy(__name__, _EXPORTS)

`from gpurent.spot import Trace` then imports `gpurent.spot.io.trace` when it is first asked
for, so `import gpurent.spot` (which every `gpurent.spot.interval` import runs) stays cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping

__all__ = ["lazy"]


def lazy(package: str, exports: Mapping[str, str]) -> Callable[[str], object]:
    """A module `__getattr__` for `package` that imports `exports[name]` (a module path) when
    `name` is first asked for; any other name is an `AttributeError`, as for a plain module."""

    def attribute(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return attribute
