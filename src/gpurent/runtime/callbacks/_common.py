"""What the Lightning and Hugging Face callbacks share: finding the manager, restoring RNG."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from gpurent.errors import InputError
from gpurent.runtime.checkpoint import CheckpointInfo, CheckpointManager
from gpurent.runtime.serialize import set_rng

CHECKPOINT_DIR_ENV = "GPURENT_CHECKPOINT_DIR"  # set by `gpurent run` for the job it starts


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
        found = environ.get(CHECKPOINT_DIR_ENV)
        if not found:
            raise InputError(
                f"no checkpoint directory: pass one to the callback or set ${CHECKPOINT_DIR_ENV} "
                "(gpurent run sets it)"
            )
        target = found
    return CheckpointManager(target, **dict(options))


def restore_rng(state: Mapping[str, Any]) -> None:
    """Restore the RNG states a callback saved under `"rng"` (data order, dropout masks)."""
    saved = state.get("rng")
    if isinstance(saved, Mapping):
        set_rng(saved)


def save_for_exit(
    manager: CheckpointManager, state: Callable[[], Mapping[str, Any]], step: int
) -> CheckpointInfo:
    """On a notice: finish the in-flight async save, then make sure `step` itself is saved.

    `manager.save_for_exit` alone may return an older in-flight checkpoint; a callback knows the
    loop stops here, so the steps since then would be lost. `state` is called only if needed.
    """
    previous = manager.wait()  # the in-flight async save, if any (its error is raised here)
    if previous is not None and previous.step == step:
        return previous
    return manager.save(state(), step)
