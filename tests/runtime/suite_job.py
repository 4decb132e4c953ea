"""The job of the supervisor kill suite (stdlib only, so it starts in milliseconds).

It takes an exclusive lock on `$SUITE_DIR/job.lock` and writes `overlap` to `$SUITE_DIR/overlaps`
when it cannot (two jobs on one checkpoint directory at once), starts a background and a `setsid`
grandchild (`sleep 60`, marked with SUITE_JOB=1 in their environment), then per `$SUITE_MODE`:
  run       write the heartbeat for $SUITE_STEPS steps and exit 0
  forever   write the heartbeat until stopped
  stubborn  like forever, ignoring SIGTERM
  fail      exit with the attempt number ($GPURENT_ATTEMPT): a different code each time
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def main() -> int:
    root = Path(os.environ["SUITE_DIR"])
    mode = os.environ["SUITE_MODE"]
    lock = open(root / "job.lock", "a")  # noqa: SIM115 (held until the process ends)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        with open(root / "overlaps", "a") as fh:
            fh.write(f"overlap {os.getpid()}\n")
    with open(root / "starts", "a") as fh:
        fh.write(f"{os.getpid()} {mode}\n")
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    env = {**os.environ, "SUITE_JOB": "1"}
    subprocess.Popen(["sleep", "60"], env=env)
    subprocess.Popen(["sleep", "60"], env=env, start_new_session=True)
    if mode == "fail":
        return int(os.environ.get("GPURENT_ATTEMPT", "1"))
    heartbeat = os.environ.get("GPURENT_HEARTBEAT_FILE")
    steps = int(os.environ.get("SUITE_STEPS", "5")) if mode == "run" else 10**9
    for step in range(1, steps + 1):
        if heartbeat:
            Path(heartbeat).write_text(f"{step}\n")
        time.sleep(0.02)
    return 0


if __name__ == "__main__":
    sys.exit(main())
