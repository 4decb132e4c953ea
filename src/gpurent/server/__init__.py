"""The web room: `gpurent serve`'s FastAPI app (JSON API, dashboard; spend, budgets to come).

Only the CLI imports this room; it imports report and the core rooms, never the CLI. FastAPI is
imported here alone (the `server` extra); docs/serve.md says what exists and what is coming.
"""

from gpurent.exports import lazy

_EXPORTS = {
    "ServerSettings": "gpurent.server.settings",
    "create_app": "gpurent.server.app",
}
__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - built from _EXPORTS
__getattr__ = lazy(__name__, _EXPORTS)
