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

import os
from typing import Any

from gpurent.errors import DataError, require
from gpurent.runtime.callbacks._common import resolve_manager, restore_rng, save_for_exit
from gpurent.runtime.checkpoint import CheckpointManager
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


class GpurentTrainerCallback(TrainerCallback):
    """Checkpoint a `Trainer` run with `CheckpointManager` and resume it at the next `train()`.

    `checkpoint` is a `CheckpointManager`, a directory or fsspec URL, or None for
    `$GPURENT_CHECKPOINT_DIR`; `manager_options` are `CheckpointManager` arguments (e.g.
    `interval=900`, `every_steps=500`). `async_save=True` blocks training only for the host
    copy. `resume=False` starts fresh. `save_on_train_end` writes a last checkpoint when
    training ends normally. Use `TrainingArguments(save_strategy="no")` to leave saving to it.
    """

    def __init__(
        self,
        checkpoint: CheckpointManager | str | os.PathLike[str] | None = None,
        *,
        async_save: bool = False,
        resume: bool = True,
        save_on_train_end: bool = True,
        **manager_options: Any,
    ) -> None:
        self.manager = resolve_manager(checkpoint, manager_options, os.environ)
        self.async_save = async_save
        self.resume = resume
        self.save_on_train_end = save_on_train_end
        self.resumed_step: int | None = None
        self.stop_reason: str | None = None
        self._last_saved_step: int | None = None

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
        self.resumed_step = step
        self._last_saved_step = step

    def on_step_end(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        **kwargs: Any,
    ) -> None:
        step = int(state.global_step)
        if self.manager.stop_requested:
            if state.is_world_process_zero:
                save_for_exit(self.manager, lambda: self.state(state, **kwargs), step)
            self._last_saved_step = step
            self.stop_reason = self.manager.stop_reason
            control.should_training_stop = True
            return
        if step == self._last_saved_step or not self.manager.should_save(step):
            return
        if state.is_world_process_zero:
            if self.async_save:
                self.manager.save_async(self.state(state, **kwargs), step)
            else:
                self.manager.save(self.state(state, **kwargs), step)
        self._last_saved_step = step

    def on_train_end(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        **kwargs: Any,
    ) -> None:
        if not state.is_world_process_zero:
            return
        self.manager.wait()
        step = int(state.global_step)
        if self.save_on_train_end and self.stop_reason is None and step != self._last_saved_step:
            self.manager.save(self.state(state, **kwargs), step)
            self._last_saved_step = step


def _required(kwargs: dict[str, Any], key: str) -> Any:
    value = kwargs.get(key)
    if value is None:
        raise DataError(f"the Trainer passed no {key} to the callback; cannot checkpoint it")
    return value


__all__ = ["GpurentTrainerCallback"]
