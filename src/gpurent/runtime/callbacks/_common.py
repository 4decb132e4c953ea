"""What the Lightning and Hugging Face callbacks share: the manager, when to save, RNG restore."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from gpurent.errors import InputError
from gpurent.runtime.checkpoint import CheckpointManager
from gpurent.runtime.serialize import set_rng
from gpurent.runtime.supervisor import ENV_CHECKPOINT_DIR  # what `gpurent run` sets for the job


def resolve_manager(
    target: CheckpointManager | str | os.PathLike[str] | None,
    options: Mapping[str, Any],
    environ: Mapping[str, str],
) -> CheckpointManager:
    """The manager a callback saves through.

    `target` is a ready `CheckpointManager` (then `options` must be empty), a directory or fsspec
    URL, or None for `$GPURENT_CHECKPOINT_DIR` (what `gpurent run` sets). `options` are
    `CheckpointManager` keyword arguments (`keep_last`, `interval`, `every_steps`, ...).
    """
    if isinstance(target, CheckpointManager):
        if options:
            raise InputError(
                f"give either a CheckpointManager or manager options, not both: {sorted(options)}"
            )
        return target
    if target is None:
        found = environ.get(ENV_CHECKPOINT_DIR)
        if not found:
            raise InputError(
                f"no checkpoint directory: pass one to the callback or set ${ENV_CHECKPOINT_DIR} "
                "(gpurent run sets it)"
            )
        target = found
    return CheckpointManager(target, **dict(options))


def restore_rng(state: Mapping[str, Any]) -> None:
    """Restore the RNG states a callback saved under `"rng"` (data order, dropout masks)."""
    saved = state.get("rng")
    if isinstance(saved, Mapping):
        set_rng(saved)


class CheckpointCallback:
    """The save logic of both callbacks; a framework callback subclasses it and its own base.

    `checkpoint` is a `CheckpointManager`, a directory or fsspec URL, or None for
    `$GPURENT_CHECKPOINT_DIR`; `manager_options` are `CheckpointManager` arguments (e.g.
    `interval=900`, `every_steps=500`, `keep_last=3`). `async_save=True` blocks training only for
    the host copy. `resume=False` starts fresh even if checkpoints exist. `save_on_train_end`
    writes a last checkpoint when training ends normally, so a restarted job does not redo work.
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
        super().__init__()
        self.manager = resolve_manager(checkpoint, manager_options, os.environ)
        self.async_save = async_save
        self.resume = resume
        self.save_on_train_end = save_on_train_end
        self.resumed_step: int | None = None
        self.stop_reason: str | None = None
        self._last_saved_step: int | None = None

    def _resumed(self, step: int) -> None:
        self.resumed_step = step
        self._last_saved_step = step

    def _step_end(self, step: int, *, writer: bool, state: Callable[[], Mapping[str, Any]]) -> bool:
        """Save at `step` if a trigger fired (only `writer`, rank 0, writes); True on a notice:
        the current step is then saved and training must stop."""
        if self.manager.stop_requested:
            if writer:
                self.manager.save_for_exit(state, step)
            self._last_saved_step = step
            self.stop_reason = self.manager.stop_reason
            return True
        if step == self._last_saved_step or not self.manager.should_save(step):
            return False
        if writer:
            if self.async_save:
                self.manager.save_async(state(), step)
            else:
                self.manager.save(state(), step)
        self._last_saved_step = step
        return False

    def _train_end(
        self, step: int, *, writer: bool, state: Callable[[], Mapping[str, Any]]
    ) -> None:
        """Finish an in-flight save; save `step` unless stopped by a notice or already saved."""
        if not writer:
            return
        if self.save_on_train_end and self.stop_reason is None and step != self._last_saved_step:
            # save() finishes the in-flight save first; if that failed it is logged, and the
            # last step is saved anyway rather than lost to the old error
            self.manager.save(state(), step)
            self._last_saved_step = step
        else:
            self.manager.wait()
