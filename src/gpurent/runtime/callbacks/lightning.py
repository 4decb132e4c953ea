"""`GpurentCheckpoint`: a PyTorch Lightning callback that saves and resumes through gpurent.

Saves go through `CheckpointManager` (atomic, verified, rotated; local or fsspec URL) whenever its
`should_save` trigger fires (every `interval` seconds, `every_steps` steps, Daly's optimum with
`interval="auto"`, or an interruption notice). A saved state holds the LightningModule's weights,
every optimizer and LR scheduler, the fit loop's progress (so `global_step`, the epoch and the
position inside the epoch continue) and the Python/NumPy/torch RNG states. At fit start the
newest checkpoint that verifies is loaded back in place.

On a notice (`watch_notices(manager, ...)` or `manager.request_stop`), the next batch end saves
(or finishes the in-flight async save) and sets `trainer.should_stop`; `stop_reason` says why.

Data position: Lightning replays a partly done epoch from its first batch unless the dataloader
is resumable (`state_dict`/`load_state_dict`); it warns when that happens. Only global rank 0
writes; every rank loads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpurent.errors import DataError, require
from gpurent.runtime.callbacks._common import CheckpointCallback, restore_rng
from gpurent.runtime.serialize import capture_rng

require("lightning.pytorch", "integrations")

import lightning.pytorch as pl  # noqa: E402  (after the one-line MissingExtraError check)
from lightning.pytorch.callbacks import Callback  # noqa: E402

MODEL_KEY = "model"
OPTIMIZERS_KEY = "optimizers"
SCHEDULERS_KEY = "lr_schedulers"
LOOPS_KEY = "fit_loop"
RNG_KEY = "rng"


class GpurentCheckpoint(CheckpointCallback, Callback):
    """Checkpoint a Lightning fit with `CheckpointManager` and resume it at the next fit.

    Arguments as `CheckpointCallback`: `checkpoint` (a `CheckpointManager`, a directory or fsspec
    URL, or None for `$GPURENT_CHECKPOINT_DIR`), `async_save`, `resume`, `save_on_train_end`, and
    `CheckpointManager` options (e.g. `interval=900`, `every_steps=500`, `keep_last=3`).
    """

    def state(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> dict[str, Any]:
        """The state saved at the current step (state dicts are taken by the manager)."""
        return {
            MODEL_KEY: pl_module,
            OPTIMIZERS_KEY: [opt.state_dict() for opt in trainer.optimizers],
            SCHEDULERS_KEY: [cfg.scheduler.state_dict() for cfg in trainer.lr_scheduler_configs],
            LOOPS_KEY: trainer.fit_loop.state_dict(),
            RNG_KEY: capture_rng(),
        }

    def on_fit_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """On resume, load the newest checkpoint's model and optimizer state."""
        if not self.resume:
            return
        loaded = self.manager.load_latest()
        if loaded is None:
            return
        step, state = loaded
        pl_module.load_state_dict(state[MODEL_KEY])
        _load_list(trainer.optimizers, state[OPTIMIZERS_KEY], "optimizers")
        _load_list(
            [cfg.scheduler for cfg in trainer.lr_scheduler_configs],
            state[SCHEDULERS_KEY],
            "LR schedulers",
        )
        trainer.fit_loop.load_state_dict(state[LOOPS_KEY])
        restore_rng(state)
        self._resumed(step)

    def on_train_batch_end(
        self,
        trainer: pl.Trainer,
        pl_module: pl.LightningModule,
        outputs: Any,
        batch: Any,
        batch_idx: int,
    ) -> None:
        """Save a checkpoint when one is due; stop the fit once a stop was requested."""
        if self._step_end(
            trainer.global_step,
            writer=trainer.is_global_zero,
            state=lambda: self.state(trainer, pl_module),
        ):
            trainer.should_stop = True

    def on_train_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """Save a final checkpoint at the end of the fit."""
        self._train_end(
            trainer.global_step,
            writer=trainer.is_global_zero,
            state=lambda: self.state(trainer, pl_module),
        )


def _load_list(targets: list[Any], saved: Any, what: str) -> None:
    if not isinstance(saved, list) or len(saved) != len(targets):
        count = len(saved) if isinstance(saved, list) else "no"
        raise DataError(
            f"checkpoint has {count} {what}, the trainer has {len(targets)}; "
            "resume with the same configure_optimizers"
        )
    for target, item in zip(targets, saved, strict=True):
        if not isinstance(item, Mapping):
            raise DataError(f"checkpoint's {what} entry is not a state dict; it is damaged")
        target.load_state_dict(item)


__all__ = ["GpurentCheckpoint"]
