"""`GpurentTrainerCallback`: a Hugging Face `Trainer` callback that saves and resumes via gpurent.

Saves go through `CheckpointManager` whenever its `should_save` trigger fires at a step end
(`interval` seconds, `every_steps`, `interval="auto"`, or an interruption notice). A saved state
holds the model's weights, the optimizer and LR scheduler (taken from the callback's keyword
arguments, i.e. the Trainer's own objects), `global_step`, `epoch` and the RNG states. At train
begin the newest checkpoint that verifies is loaded back in place and `state.global_step` is set,
so `max_steps` counts from there and the scheduler continues where it stopped.

On a notice, the next step end saves (finishing an in-flight async save first) and sets
`control.should_training_stop`; `stop_reason` says why.

Limit: the Trainer decides where in the data to start before callbacks run, so a resumed run
starts its data at the beginning of an epoch (weights, optimizer, scheduler, step and RNG are
exact). Use `Trainer(resume_from_checkpoint=...)` with HF's own checkpoints when the exact data
position matters. Only the main process (`state.is_world_process_zero`) writes.
"""

from __future__ import annotations

from typing import Any

from gpurent.errors import DataError, require
from gpurent.runtime.callbacks._common import CheckpointCallback, restore_rng
from gpurent.runtime.serialize import capture_rng

require("transformers", "integrations")

from transformers import (  # noqa: E402  (after the one-line MissingExtraError check)
    TrainerCallback,
    TrainerControl,
    TrainerState,
    TrainingArguments,
)

MODEL_KEY = "model"
OPTIMIZER_KEY = "optimizer"
SCHEDULER_KEY = "lr_scheduler"
STEP_KEY = "global_step"
EPOCH_KEY = "epoch"
RNG_KEY = "rng"


class GpurentTrainerCallback(CheckpointCallback, TrainerCallback):
    """Checkpoint a `Trainer` run with `CheckpointManager` and resume it at the next `train()`.

    Arguments as `CheckpointCallback`: `checkpoint` (a `CheckpointManager`, a directory or fsspec
    URL, or None for `$GPURENT_CHECKPOINT_DIR`), `async_save`, `resume`, `save_on_train_end`, and
    `CheckpointManager` options (e.g. `interval=900`, `every_steps=500`). Use
    `TrainingArguments(save_strategy="no")` to leave saving to it.
    """

    @staticmethod
    def state(state: TrainerState, **kwargs: Any) -> dict[str, Any]:
        """The state saved at the current step (state dicts are taken by the manager)."""
        saved: dict[str, Any] = {
            MODEL_KEY: _required(kwargs, MODEL_KEY),
            STEP_KEY: int(state.global_step),
            EPOCH_KEY: float(state.epoch or 0.0),
            RNG_KEY: capture_rng(),
        }
        for key in (OPTIMIZER_KEY, SCHEDULER_KEY):
            if kwargs.get(key) is not None:
                saved[key] = kwargs[key]
        return saved

    def on_train_begin(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        **kwargs: Any,
    ) -> None:
        """On resume, load the newest checkpoint's model, optimizer and scheduler state."""
        if not self.resume:
            return
        loaded = self.manager.load_latest()
        if loaded is None:
            return
        step, saved = loaded
        _required(kwargs, MODEL_KEY).load_state_dict(saved[MODEL_KEY])
        for key in (OPTIMIZER_KEY, SCHEDULER_KEY):
            target = kwargs.get(key)
            if target is None:
                continue
            if key not in saved:
                raise DataError(f"checkpoint step {step} has no {key} to restore")
            target.load_state_dict(saved[key])
        state.global_step = int(saved[STEP_KEY])
        state.epoch = float(saved[EPOCH_KEY])
        restore_rng(saved)
        self._resumed(step)

    def on_step_end(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        **kwargs: Any,
    ) -> None:
        """Save a checkpoint when one is due; stop training once a stop was requested."""
        if self._step_end(
            int(state.global_step),
            writer=state.is_world_process_zero,
            state=lambda: self.state(state, **kwargs),
        ):
            control.should_training_stop = True

    def on_train_end(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        **kwargs: Any,
    ) -> None:
        """Save a final checkpoint at the end of training."""
        self._train_end(
            int(state.global_step),
            writer=state.is_world_process_zero,
            state=lambda: self.state(state, **kwargs),
        )


def _required(kwargs: dict[str, Any], key: str) -> Any:
    value = kwargs.get(key)
    if value is None:
        raise DataError(f"the Trainer passed no {key} to the callback; cannot checkpoint it")
    return value


__all__ = ["GpurentTrainerCallback"]
