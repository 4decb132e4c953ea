"""Training-framework callbacks that checkpoint through `CheckpointManager`.

- `gpurent.runtime.callbacks.lightning.GpurentCheckpoint`: a PyTorch Lightning callback.
- `gpurent.runtime.callbacks.hf.GpurentTrainerCallback`: a Hugging Face `Trainer` callback.

Each module imports its framework when it is imported, and raises a one-line
`MissingExtraError` naming `gpurent[integrations]` when the framework is not installed; this
package itself imports neither.
"""
