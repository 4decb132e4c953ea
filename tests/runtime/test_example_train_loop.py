"""examples/train_loop.py runs to the end, and a rerun after the end exits cleanly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

EXAMPLE = Path(__file__).parents[2] / "examples" / "train_loop.py"


def _run(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(sys.path),
        "GPURENT_CHECKPOINT_DIR": str(tmp_path / "ckpt"),
    }
    return subprocess.run(
        [sys.executable, str(EXAMPLE)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_example_finishes_and_a_rerun_after_the_end_is_clean(tmp_path: Path) -> None:
    first = _run(tmp_path)
    assert first.returncode == 0, first.stderr
    assert "done: step 300" in first.stdout
    again = _run(tmp_path)  # e.g. `gpurent run` restarting a job killed after its last save
    assert again.returncode == 0, again.stderr
    assert "resumed at step 300" in again.stdout and "done: step 300" in again.stdout
