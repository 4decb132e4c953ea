"""The exception tree. Every message is one line a user can act on: what, where, what to do.

The CLI turns any `GpurentError` into `error: <message>` on stderr and its `exit_code`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class GpurentError(Exception):
    """Base of every error gpurent raises on purpose."""

    exit_code: int = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class InputError(GpurentError):
    """A value the user gave is wrong (a flag, a field in a file, a CSV cell)."""

    exit_code = 2


class NotFoundError(InputError):
    """A name (GPU, model, preset, offer, policy) is unknown; the message lists the closest ones."""

    def __init__(
        self,
        kind: str,
        name: str,
        known: Iterable[str],
        *,
        where: str | None = None,
        choices: Iterable[str] | None = None,
    ) -> None:
        """`where` (a flag, `file:line: field`) starts the message; `choices` (the canonical
        names of a small closed set) end it as "(one of ...)"."""
        self.kind = kind
        self.name = name
        self.suggestions = closest(name, known)
        hint = f"; did you mean {', '.join(self.suggestions)}?" if self.suggestions else ""
        listed = f" (one of {', '.join(choices)})" if choices is not None else ""
        head = f"{where}: " if where else ""
        super().__init__(f"{head}unknown {kind} {name!r}{hint}{listed}")


class DataError(GpurentError):
    """A data file (catalog, trace, calibration, checkpoint manifest) cannot be used."""


class InfeasibleError(GpurentError):
    """The request cannot be met (nothing fits, no offer matches); the message says why."""


class MissingExtraError(GpurentError):
    """An optional dependency is not installed; the message names the pip command."""

    def __init__(self, module: str, extra: str) -> None:
        super().__init__(
            f"this needs the optional package {module!r}: run `pip install 'gpurent[{extra}]'`"
        )
        self.module = module
        self.extra = extra


class DeviceError(GpurentError):
    """The hardware (GPU, disk, network) did not answer as expected."""


def closest(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """The up-to-`n` known names closest to `name`, case-insensitively, best first."""
    known_list = list(dict.fromkeys(known))
    by_lower = {k.lower(): k for k in known_list}
    hits = difflib.get_close_matches(name.lower(), list(by_lower), n=n, cutoff=0.5)
    if not hits:
        hits = [k for k in by_lower if name.lower() in k or k in name.lower()][:n]
    return [by_lower[h] for h in hits]


def require(module: str, extra: str) -> object:
    """Import an optional module or raise `MissingExtraError` naming the extra to install."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(module, extra) from exc
