"""A resumable plain-Python job for the Slurm requeue test: counts to N with checkpoints.

On the job's first run (no $SLURM_RESTART_COUNT, or 0) it asks Slurm to requeue it after the
checkpoint of step $JOB_REQUEUE_AT, as a preemption would, and waits to be stopped; the
requeued run resumes from that checkpoint. Writes {"step", "total", "resumed_from",
"restart_count"} to $JOB_RESULT_DIR/result.json (result-nodeR.json on node R of a multi-node
`gpurent run`). $JOB_FAIL_AT=S (multi-node): in the job's first generation node
$JOB_FAIL_NODE (1) exits 1 at step S and the other nodes wait there, as in a collective.
$JOB_SAVE_NODE=R: only node R saves checkpoints (as rank 0 does in a directory every node
shares); every node loads them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from gpurent.runtime import CheckpointManager


def expected_total(n: int) -> int:
    total = 0
    for step in range(1, n + 1):
        total = (total * 31 + step) % 1_000_000_007
    return total


def main() -> int:
    n = int(sys.argv[1])
    out = Path(os.environ["JOB_RESULT_DIR"])
    requeue_at = int(os.environ.get("JOB_REQUEUE_AT", "0"))
    restarts = int(os.environ.get("SLURM_RESTART_COUNT", "0") or "0")
    fail_at = int(os.environ.get("JOB_FAIL_AT", "0"))
    fail_node = os.environ.get("JOB_FAIL_NODE", "1")
    node = os.environ.get("GPURENT_NODE_RANK")  # set by a multi-node gpurent run
    generation = os.environ.get("GPURENT_JOB_GENERATION", "")
    save_node = os.environ.get("JOB_SAVE_NODE")
    saves = save_node is None or node is None or node == save_node
    mgr = CheckpointManager(os.environ["GPURENT_CHECKPOINT_DIR"], every_steps=5, interval=None)
    loaded = mgr.load_latest()
    step, total = (loaded[0], loaded[1]["total"]) if loaded else (0, 0)
    resumed = step
    while step < n:
        step += 1
        total = (total * 31 + step) % 1_000_000_007
        if saves and mgr.should_save(step):
            mgr.save({"total": total}, step)
        if fail_at and generation == "1" and step == fail_at:
            if node == fail_node:
                return 1  # this node's job fails in the job's first generation
            time.sleep(120)  # the others wait for it as in a collective, until stopped
        if step == requeue_at and restarts == 0:
            subprocess.run(["scontrol", "requeue", os.environ["SLURM_JOB_ID"]], check=True)
            time.sleep(120)  # Slurm stops this run here
            return 1
    result = {"step": step, "total": total, "resumed_from": resumed, "restart_count": restarts}
    (out / ("result.json" if node is None else f"result-node{node}.json")).write_text(
        json.dumps(result)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
