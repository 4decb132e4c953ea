"""The checkpoint crash suite, small: the scenarios of benchmarks/bench_reliability_checkpoint.py
(which runs 200 kills, every bit of every file, 150 full-disk points) with counts that fit CI.

In every case: no exception out of load_latest, no corrupt state loaded, no committed step lost.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def crash() -> ModuleType:
    path = ROOT / "benchmarks/bench_reliability_checkpoint.py"
    spec = importlib.util.spec_from_file_location("bench_reliability_checkpoint", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_reliability_checkpoint", module)  # dataclasses need it
    spec.loader.exec_module(module)
    module.torch.set_num_threads(1)  # an OpenMP pool started before fork() deadlocks a child
    return module


def _held(tally: object, at_least: int) -> None:
    assert tally.failures == [], tally.line()  # type: ignore[attr-defined]
    assert tally.tried == tally.held >= at_least, tally.line()  # type: ignore[attr-defined]


def test_sigkill_at_random_points_of_save_and_rotation(crash: ModuleType, tmp_path: Path) -> None:
    tally = crash.kill_trials(tmp_path, kills=24, seed=1)
    _held(tally, 24)
    assert tally.counts.get("damaged_first") == 8  # rollbacks were exercised under kills too


def test_bit_flips_and_truncations_in_every_file(crash: ModuleType, tmp_path: Path) -> None:
    tally = crash.bitflip_trials(tmp_path, per_file=120, seed=2)
    _held(tally, 3 * 120)


def test_full_disk_and_inode_exhaustion_on_a_small_tmpfs(crash: ModuleType, tmp_path: Path) -> None:
    tally = crash.full_disk_trials(tmp_path, points=14, seed=3)
    if tally.skipped:
        pytest.skip(tally.skipped)
    _held(tally, 14)
    assert tally.counts.get("no_space_errors", 0) > 0  # the disk did run full


def test_two_writers_on_one_directory(crash: ModuleType, tmp_path: Path) -> None:
    tally = crash.two_writers_trials(tmp_path, rounds=3, saves_each=15, seed=4)
    _held(tally, 3)
