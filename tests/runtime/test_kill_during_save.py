"""SIGKILL a process mid-save (a small version of benchmarks/bench_runtime_kill.py)."""

from __future__ import annotations

import os
import random
import signal
import time
from pathlib import Path

import pytest

from gpurent.runtime import CheckpointManager

torch = pytest.importorskip("torch")


def test_sigkill_during_saves_never_yields_a_corrupt_state(tmp_path: Path) -> None:
    rng = random.Random(1)
    ckpt = tmp_path / "ckpt"
    last_step = 0
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(1)  # an OpenMP pool started before fork() deadlocks the child
    try:
        for _ in range(15):
            pid = os.fork()
            if pid == 0:
                try:
                    mgr = CheckpointManager(ckpt, interval=None)
                    step = last_step
                    while True:
                        step += 1
                        mgr.save({"w": torch.full((1 << 18,), float(step)), "step": step}, step)
                finally:
                    os._exit(1)
            time.sleep(rng.uniform(0.01, 0.15))
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            loaded = CheckpointManager(ckpt).load_latest()
            if loaded is None:
                assert last_step == 0
                continue
            step, state = loaded
            assert state["step"] == step >= last_step
            assert bool(torch.all(state["w"] == float(step)))
            last_step = step
    finally:
        torch.set_num_threads(previous_threads)
    assert last_step > 0
