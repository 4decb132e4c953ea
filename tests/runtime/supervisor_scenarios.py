"""Kill `gpurent run` in every state, restart it, and check: one job at a time on a checkpoint
directory, and no job process left running. Shared by `test_supervisor_kill_suite.py` and
`benchmarks/bench_reliability_supervisor.py` (self-contained: no relative imports).

A scenario starts a supervisor (a real `python -m gpurent run` process) on `suite_job.py`, waits
for a state, sends a signal, waits for that supervisor to end (SIGKILL leaves its job behind on
purpose), then runs a second supervisor on the same checkpoint directory to completion. It
holds when no two jobs ever held the job's lock at once, the second supervisor succeeded, and no
process of the test's marker (a job or its grandchildren) is alive afterwards; for a catchable
signal, also right after the first supervisor ended.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SUITE_JOB = str(HERE / "suite_job.py")
SRC = str(HERE.parent.parent / "src")
STATES = ("starting", "running", "backoff", "health", "rebuild")
SIGNALS = (signal.SIGKILL, signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


@dataclasses.dataclass(frozen=True, slots=True)
class Result:
    state: str
    signal: str
    reached: bool  # the supervisor was in the state when the signal was sent
    problems: tuple[str, ...]
    seconds: float

    @property
    def held(self) -> bool:
        return not self.problems


def _events(log: Path) -> list[dict[str, Any]]:
    try:
        lines = log.read_text().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a line being written
    return out


def job_processes(mark: str) -> list[int]:
    """Live processes of this scenario's jobs: the job itself and its grandchildren."""
    needle = f"SUITE_MARK={mark}".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            environ = Path(entry.path, "environ").read_bytes().split(b"\0")
            cmdline = Path(entry.path, "cmdline").read_bytes()
            stat = Path(entry.path, "stat").read_bytes()
        except OSError:
            continue
        if stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] in {b"Z", b"X"}:
            continue
        if needle in environ and (b"SUITE_JOB=1" in environ or b"suite_job.py" in cmdline):
            found.append(int(entry.name))
    return found


def _wait(predicate: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def _state_args(state: str) -> tuple[list[str], str]:
    """(extra `gpurent run` options, $SUITE_MODE) that bring the supervisor to `state`."""
    if state in {"starting", "running"}:
        return [], "forever"
    if state == "backoff":
        return ["--backoff", "30"], "fail"
    if state == "health":  # the disk check fails; the job ignores SIGTERM: the stop takes --grace
        return ["--health-interval", "0.3", "--min-free-gib", "1e9", "--grace", "3"], "stubborn"
    if state == "rebuild":
        return ["--backoff", "0", "--max-failures", "2", "--rebuild-cmd", "sleep 3"], "fail"
    raise ValueError(state)


def _reached(state: str, log: Path, root: Path) -> bool:
    events = _events(log)
    kinds = [e["event"] for e in events]
    if state == "starting":
        return "start" not in kinds
    if state == "running":
        return (root / "hb").exists() and kinds.count("start") == 1 and "exit" not in kinds
    if state == "backoff":
        return "restart" in kinds
    if state == "health":
        return any(e["event"] == "health" and e["status"] == "fail" for e in events)
    return "rebuild" in kinds and "rebuild_result" not in kinds


def run_scenario(
    base: Path, state: str, sig: signal.Signals, *, python: str = sys.executable
) -> Result:
    started = time.monotonic()
    root = base / f"{state}-{sig.name}-{uuid.uuid4().hex[:8]}"
    root.mkdir(parents=True)
    mark = uuid.uuid4().hex
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]),
        "SUITE_MARK": mark,
        "SUITE_DIR": str(root),
    }
    extra, mode = _state_args(state)

    def gpurent_run(log: Path, options: list[str], suite_mode: str) -> subprocess.Popen[bytes]:
        # stderr to a file, not a pipe: a job left behind would hold a pipe open
        argv = [
            python, "-m", "gpurent", "run", "--checkpoint-dir", str(root / "ck"),
            "--notice", "none", "--poll", "0.1", "--json", "--log", str(log),
            "--heartbeat-file", str(root / "hb"), *options, "--", python, SUITE_JOB,
        ]  # fmt: skip
        with log.with_suffix(".err").open("wb") as err_file:
            return subprocess.Popen(
                argv,
                env={**env, "SUITE_MODE": suite_mode},
                stdout=subprocess.DEVNULL,
                stderr=err_file,
            )

    problems: list[str] = []
    log1 = root / "first.jsonl"
    first = gpurent_run(log1, extra, mode)
    if state == "starting":
        time.sleep(0.15)
        reached = _reached(state, log1, root)
    else:
        reached = _wait(lambda: _reached(state, log1, root), 20.0)
        if not reached:
            problems.append(f"never reached {state}")
    first.send_signal(sig)
    try:
        first.wait(timeout=20)
    except subprocess.TimeoutExpired:
        first.kill()
        first.wait()
        problems.append(f"first supervisor did not end within 20 s of {sig.name}")
    err = log1.with_suffix(".err").read_bytes()
    if sig is not signal.SIGKILL and reached and state != "starting":
        # 75: stopped by a signal; 1: the rebuild ran to its end, then the failure-limit exit
        expected = 1 if state == "rebuild" else 75
        if first.returncode != expected:
            problems.append(f"first supervisor exited {first.returncode} on {sig.name}")
        if f"{SRC}/gpurent/".encode() in err:  # a traceback through gpurent, not the job's own
            problems.append(f"traceback on {sig.name}: {err.decode(errors='replace')[-300:]}")
        if left := job_processes(mark):
            problems.append(f"{len(left)} job processes alive after the supervisor ended")
    log2 = root / "second.jsonl"
    second = gpurent_run(log2, ["--grace", "3"], "run")
    try:
        second.wait(timeout=30)
    except subprocess.TimeoutExpired:
        second.kill()
        second.wait()
    err = log2.with_suffix(".err").read_bytes()
    if second.returncode != 0:
        tail = err.decode(errors="replace").strip()[-300:]
        problems.append(f"restarted supervisor exited {second.returncode}: {tail}")
    if (root / "overlaps").exists():
        problems.append("two jobs ran at once on one checkpoint directory")
    if left := job_processes(mark):
        problems.append(f"orphans after the restart: {len(left)} job processes alive")
        for pid in left:  # do not leave them to the next scenario
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    return Result(
        state=state,
        signal=sig.name,
        reached=reached,
        problems=tuple(problems),
        seconds=round(time.monotonic() - started, 2),
    )
