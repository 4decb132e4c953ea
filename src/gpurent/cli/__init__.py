"""The command line: a Typer app, one module per verb group. Thin: parse, call, render."""

from gpurent.exports import lazy

_EXPORTS = {
    "app": "gpurent.cli.main",
    "main": "gpurent.cli.main",
}
__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - built from _EXPORTS
__getattr__ = lazy(__name__, _EXPORTS)
