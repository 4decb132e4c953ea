"""SIGKILL a process in the middle of saving, many times; `load_latest` must never return a
corrupt or partial state.

Each trial forks a child (torch already imported, so a trial costs milliseconds, not an import)
that saves checkpoints in a loop, each state internally consistent (every tensor element and
the plain `step` equal the step), and SIGKILLs it after a random delay spread over a save's
duration. The parent then loads the latest checkpoint and checks it. Run:

    PYTHONPATH=src python benchmarks/bench_runtime_kill.py --kills 200
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import torch

from gpurent.runtime import CheckpointManager

STATE_ELEMENTS = 1 << 20  # 4 MiB of float32 per checkpoint


def _child(root: Path, start_step: int) -> None:
    mgr = CheckpointManager(root, keep_last=3, interval=None)
    step = start_step
    while True:
        step += 1
        mgr.save({"w": torch.full((STATE_ELEMENTS,), float(step)), "step": step}, step)


def run(kills: int, root: Path, seed: int = 0) -> dict[str, float]:
    # One intra-op thread: an OpenMP pool started before fork() deadlocks the forked child.
    torch.set_num_threads(1)
    rng = random.Random(seed)
    probe = CheckpointManager(root / "probe")
    t0 = time.perf_counter()
    probe.save({"w": torch.zeros(STATE_ELEMENTS), "step": 0}, 0)
    save_s = time.perf_counter() - t0
    shutil.rmtree(root / "probe")
    ckpt = root / "ckpt"
    last_step = 0
    loaded_none = 0
    for _ in range(kills):
        pid = os.fork()
        if pid == 0:  # child: save until killed
            try:
                _child(ckpt, last_step)
            finally:
                os._exit(1)
        time.sleep(rng.uniform(0.0, 4.0 * save_s))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        loaded = CheckpointManager(ckpt).load_latest()
        if loaded is None:
            if last_step:
                raise SystemExit("a committed checkpoint vanished after a kill")
            loaded_none += 1
            continue
        step, state = loaded
        ok = state["step"] == step and bool(torch.all(state["w"] == float(step)))
        if not ok or step < last_step:
            raise SystemExit(f"corrupt or older state after a kill: step {step}")
        last_step = step
    return {
        "kills": kills,
        "save_s": save_s,
        "final_step": last_step,
        "trials_with_nothing_committed_yet": loaded_none,
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--dir", default=None, help="where to write (default: a temp dir)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="gpurent-kill-", dir=args.dir))
    try:
        t0 = time.perf_counter()
        result = run(args.kills, root)
        result["wall_s"] = time.perf_counter() - t0
    finally:
        shutil.rmtree(root, ignore_errors=True)
    fields = (f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in result.items())
    print(" ".join(fields))
    print("OK: every load_latest after a SIGKILL returned a complete, consistent state")
    return 0


if __name__ == "__main__":
    sys.exit(main())
