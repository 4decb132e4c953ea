"""Keeping a training job alive: checkpoints, interruption notices, health checks, supervisor.

`from gpurent.runtime import CheckpointManager` is the library entry point; `gpurent run` is the
supervisor command. torch is imported only when a state holds tensors or modules.
"""

from gpurent.runtime.checkpoint import CheckpointInfo, CheckpointManager, Interval, Skipped
from gpurent.runtime.serialize import capture_rng, restore, set_rng

__all__ = [
    "CheckpointInfo",
    "CheckpointManager",
    "Interval",
    "Skipped",
    "capture_rng",
    "restore",
    "set_rng",
]
