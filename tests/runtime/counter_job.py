"""A tiny resumable "training" job for supervisor tests: counts to N with checkpoints.

Plain Python (no torch) so each restart costs milliseconds. The result depends on every step
being applied exactly once in order, so a wrong resume shows up in the final total.
Usage: python counter_job.py N RESULT_FILE [STEP_SLEEP_S]; checkpoint dir and heartbeat file
come from $GPURENT_CHECKPOINT_DIR and $GPURENT_HEARTBEAT_FILE.
"""

from __future__ import annotations

import json
import os
import sys
import time

from gpurent.runtime import CheckpointManager


def expected_total(n: int) -> int:
    total = 0
    for step in range(1, n + 1):
        total = (total * 31 + step) % 1_000_000_007
    return total


def main() -> int:
    n, result_file = int(sys.argv[1]), sys.argv[2]
    step_sleep_s = float(sys.argv[3]) if len(sys.argv) > 3 else 0.01
    mgr = CheckpointManager(os.environ["GPURENT_CHECKPOINT_DIR"], every_steps=5, interval=None)
    heartbeat = os.environ.get("GPURENT_HEARTBEAT_FILE")
    loaded = mgr.load_latest()
    step, total = (loaded[0], loaded[1]["total"]) if loaded else (0, 0)
    while step < n:
        step += 1
        total = (total * 31 + step) % 1_000_000_007
        time.sleep(step_sleep_s)
        if mgr.should_save(step):
            mgr.save({"total": total}, step)
        if heartbeat:
            with open(heartbeat, "w") as fh:
                fh.write(f"{step}\n")
    with open(result_file, "w") as fh:
        json.dump({"step": step, "total": total}, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
