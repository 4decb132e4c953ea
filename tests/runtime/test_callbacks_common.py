"""Callback plumbing: the one-line missing-extra error, and where the manager comes from."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from gpurent.errors import InputError, MissingExtraError
from gpurent.runtime import CheckpointManager
from gpurent.runtime.callbacks._common import resolve_manager


@pytest.mark.parametrize(
    ("module", "framework"),
    [
        ("gpurent.runtime.callbacks.lightning", "lightning.pytorch"),
        ("gpurent.runtime.callbacks.hf", "transformers"),
    ],
)
def test_missing_framework_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, module: str, framework: str
) -> None:
    monkeypatch.setitem(sys.modules, framework, None)  # makes `import framework` fail
    monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.raises(MissingExtraError) as err:
        importlib.import_module(module)
    message = str(err.value)
    assert "gpurent[integrations]" in message and "\n" not in message


def test_importing_the_runtime_imports_no_framework() -> None:
    import subprocess

    code = (
        "import sys, gpurent.runtime, gpurent.runtime.callbacks\n"
        "print(sorted(m for m in ('lightning', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_manager_from_directory_env_or_instance(tmp_path: Path) -> None:
    mgr = resolve_manager(tmp_path, {"every_steps": 5, "interval": None}, {})
    assert mgr.every_steps == 5 and mgr.interval is None
    env = {"GPURENT_CHECKPOINT_DIR": str(tmp_path / "from-env")}
    assert resolve_manager(None, {}, env).storage.location == str(tmp_path / "from-env")
    ready = CheckpointManager(tmp_path)
    assert resolve_manager(ready, {}, {}) is ready


def test_manager_errors_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"GPURENT_CHECKPOINT_DIR"):
        resolve_manager(None, {}, {})
    with pytest.raises(InputError, match="not both"):
        resolve_manager(CheckpointManager(tmp_path), {"keep_last": 2}, {})
    with pytest.raises(InputError, match="keep_last"):
        resolve_manager(tmp_path, {"keep_last": 0}, {})


def test_shared_save_logic_without_a_framework(tmp_path: Path) -> None:
    from gpurent.runtime.callbacks._common import CheckpointCallback

    cb = CheckpointCallback(tmp_path, interval=None, every_steps=2)
    states: list[int] = []

    def state_at(step: int) -> dict[str, int]:
        states.append(step)
        return {"step": step}

    for step in (1, 2, 3):
        assert not cb._step_end(step, writer=True, state=lambda step=step: state_at(step))
    assert states == [2]  # the state is built only when a trigger fires
    assert not cb._step_end(4, writer=False, state=lambda: state_at(4))  # trigger, but not rank 0
    cb.manager.request_stop("test notice")
    assert cb._step_end(5, writer=True, state=lambda: state_at(5))
    assert cb.stop_reason == "test notice"
    cb._train_end(5, writer=True, state=lambda: state_at(-1))  # stopped: no second save
    assert [c.step for c in cb.manager.committed()] == [5, 2]
    assert states == [2, 5]
