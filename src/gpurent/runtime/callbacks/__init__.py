"""Training-framework callbacks that checkpoint through `CheckpointManager`.

- `gpurent.runtime.callbacks.lightning.GpurentCheckpoint`: a PyTorch Lightning callback.
- `gpurent.runtime.callbacks.hf.GpurentTrainerCallback`: a Hugging Face `Trainer` callback.

Each module imports its framework when it is imported, and raises a one-line
`MissingExtraError` naming `gpurent[integrations]` when the framework is not installed; this
package itself imports neither.
"""

from gpurent.exports import lazy

_EXPORTS = {
    "GpurentCheckpoint": "gpurent.runtime.callbacks.lightning",
    "GpurentTrainerCallback": "gpurent.runtime.callbacks.hf",
}
__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - built from _EXPORTS
__getattr__ = lazy(__name__, _EXPORTS)
