"""Checkpoints on an fsspec URL without fsspec: a one-line error naming the extra."""

from __future__ import annotations

import sys

import pytest

from gpurent.errors import MissingExtraError
from gpurent.runtime import CheckpointManager
from tests.conftest import run_cli


@pytest.fixture()
def no_fsspec(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "fsspec", None)  # makes `import fsspec` fail


@pytest.mark.usefixtures("no_fsspec")
def test_manager_on_a_url_names_the_runtime_extra() -> None:
    with pytest.raises(MissingExtraError, match=r"pip install 'gpurent\[runtime\]'"):
        CheckpointManager("s3://bucket/run1")


@pytest.mark.usefixtures("no_fsspec")
def test_run_with_a_url_checkpoint_dir_fails_in_one_line_before_starting() -> None:
    code, stdout, stderr = run_cli(
        "run", "--notice", "none", "--checkpoint-dir", "s3://bucket/run1", "--",
        sys.executable, "-c", "raise SystemExit(0)",
    )  # fmt: skip
    assert code == 1
    assert "gpurent[runtime]" in stderr and len(stderr.strip().splitlines()) == 1
    assert '"start"' not in stdout and "start:" not in stdout
