"""A job with a family, for the supervisor tests: it starts a background grandchild (same process
group) and a `setsid` grandchild (a session of its own), writes their PIDs, then behaves as told.

Usage: python family_job.py PIDFILE MODE, MODE one of
  exit N       exit with code N at once
  hang         never write a heartbeat, sleep (the supervisor's hang check kills it)
  stubborn     like hang, and ignore SIGTERM (only SIGKILL stops it)
  signal FILE  write FILE.ready, wait for a signal, write its name to FILE, exit 0
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time


def main() -> int:
    pidfile, mode = sys.argv[1], sys.argv[2]
    background = subprocess.Popen(["sleep", "60"])
    detached = subprocess.Popen(["sleep", "60"], start_new_session=True)
    with open(pidfile, "w") as fh:
        fh.write(f"{background.pid} {detached.pid}\n")
    if mode == "exit":
        return int(sys.argv[3])
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if mode == "signal":
        got: list[str] = []
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, lambda signum, frame: got.append(signal.Signals(signum).name))
        open(sys.argv[3] + ".ready", "w").close()
        while not got:
            time.sleep(0.01)
        with open(sys.argv[3], "w") as fh:
            fh.write(got[0])
        return 0
    time.sleep(60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
