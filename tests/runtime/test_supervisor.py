"""Supervisor: fake-process logic under a fake clock, and a real job killed 5 times."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gpurent.runtime.health import HealthResult, Status
from gpurent.runtime.notices import Notice
from gpurent.runtime.supervisor import (
    ENV_CHECKPOINT_DIR,
    EventLog,
    Supervisor,
    SupervisorConfig,
    popen_spawner,
    torchrun_argv,
)

from .counter_job import expected_total
from .supervisor_fakes import FakeClock, FakeProc, fake_supervisor

JOB = str(Path(__file__).with_name("counter_job.py"))


class FakeSpawner:
    def __init__(self, clock: FakeClock, plan: Sequence[tuple[int, float | None]]) -> None:
        self.clock, self.plan = clock, list(plan)
        self.procs: list[FakeProc] = []
        self.envs: list[Mapping[str, str]] = []

    def __call__(self, argv: Sequence[str], env: Mapping[str, str]) -> FakeProc:
        code, runtime_s = self.plan[len(self.procs)]
        proc = FakeProc(self.clock, code, runtime_s, pid=100 + len(self.procs))
        self.procs.append(proc)
        self.envs.append(env)
        return proc


def _supervisor(
    plan: Sequence[tuple[int, float | None]], **config: Any
) -> tuple[Supervisor, FakeSpawner, FakeClock, list[str]]:
    clock = FakeClock()
    spawner = FakeSpawner(clock, plan)
    if "notices" in config:
        config["poll_notices"] = config.pop("notices")
    sup, shell = fake_supervisor(clock, spawner, **config)
    return sup, spawner, clock, shell


def test_success_first_time() -> None:
    sup, spawner, _, _ = _supervisor([(0, 5.0)], checkpoint_dir="ck")
    outcome = sup.run()
    assert outcome.status == "succeeded" and outcome.attempts == 1
    assert spawner.envs[0][ENV_CHECKPOINT_DIR] == "ck"
    assert [e["event"] for e in sup.log.events] == ["start", "exit", "done"]


def test_restarts_with_backoff_then_rebuilds_after_three_failures() -> None:
    # each attempt ran 2 minutes (longer than fast_exit_s): not the "same fast exit" of a bug
    sup, _, _, shell = _supervisor([(1, 120.0)] * 3, rebuild_cmd="recreate-vm")
    outcome = sup.run()
    assert outcome.status == "rebuilt" and outcome.attempts == 3 and outcome.cli_exit_code == 1
    assert outcome.rule == "repeated_failures"
    assert shell == ["recreate-vm"]
    restarts = [e for e in sup.log.events if e["event"] == "restart"]
    assert [r["backoff_s"] for r in restarts] == [10.0, 20.0]
    assert [e["event"] for e in sup.log.events][-2:] == ["rebuild", "rebuild_result"]


def test_gives_up_without_rebuild_action() -> None:
    sup, _, _, _ = _supervisor([(1, 1.0)] * 2, max_failures=2)
    assert sup.run().status == "gave_up"


def test_hang_is_killed_and_restarted(tmp_path: Path) -> None:
    hb = tmp_path / "hb"
    sup, spawner, _, _ = _supervisor(
        [(0, None), (0, 3.0)], heartbeat_file=str(hb), hang_timeout_s=60.0
    )
    outcome = sup.run()
    assert outcome.status == "succeeded" and outcome.attempts == 2
    assert spawner.procs[0].signals == ["TERM"]
    health = [e for e in sup.log.events if e["event"] == "health"]
    assert health[0]["checks"][0]["check"] == "progress" and health[0]["status"] == "fail"
    assert next(e for e in sup.log.events if e["event"] == "exit")["stopped_for"] == "hang"


def test_failed_health_check_restarts_every_interval() -> None:
    calls: list[float] = []

    def gpu_check() -> HealthResult:
        calls.append(1)
        status = Status.FAIL if len(calls) == 2 else Status.OK
        return HealthResult(check="gpu", status=status, reason="Xid 79" if calls else "")

    sup, spawner, _, _ = _supervisor(
        [(0, 1000.0), (0, 10.0)], checks=[gpu_check], health_interval_s=300.0
    )
    outcome = sup.run()
    assert outcome.status == "succeeded" and outcome.attempts == 2
    assert len(calls) == 2  # at 300 s (ok) and 600 s (fail): then the job was stopped
    assert spawner.procs[0].signals == ["TERM"]


def test_progress_resets_the_failure_streak(tmp_path: Path) -> None:
    hb = tmp_path / "hb"
    clock_holder: list[FakeClock] = []

    class ProgressingSpawner(FakeSpawner):
        def __call__(self, argv: Sequence[str], env: Mapping[str, str]) -> FakeProc:
            hb.write_text(f"{(len(self.procs) + 1) * 100}\n")  # every attempt gets further
            return super().__call__(argv, env)

    sup, _, clock, _ = _supervisor([(1, 5.0)] * 5 + [(0, 5.0)], heartbeat_file=str(hb))
    clock_holder.append(clock)
    sup._spawn = ProgressingSpawner(clock, [(1, 5.0)] * 5 + [(0, 5.0)])
    outcome = sup.run()
    assert outcome.status == "succeeded" and outcome.attempts == 6


def test_terminating_notice_stops_child_and_supervision() -> None:
    pending = [Notice(provider="aws", kind="spot-terminate", detail="t", grace_s=120.0)]
    calls: list[int] = []

    def notices() -> list[Notice]:  # nothing before the start; the notice while it runs
        calls.append(1)
        if len(calls) == 1:
            return []
        out, pending[:] = list(pending), []
        return out

    sup, spawner, _, _ = _supervisor([(0, None)], notices=notices)
    outcome = sup.run()
    assert outcome.status == "interrupted" and outcome.cli_exit_code == 75
    assert spawner.procs[0].signals == ["TERM"]
    assert sup.log.events[1]["event"] == "notice" and sup.log.events[1]["grace_s"] == 120.0


def test_event_log_writes_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "run.jsonl"
    echoed: list[dict[str, Any]] = []
    log = EventLog(path, echo=echoed.append, wall_clock=lambda: 5.0)
    log.emit("start", attempt=1)
    log.emit("exit", attempt=1, exit_code=0)
    log.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert (
        lines
        == echoed
        == [
            {"time_unix_s": 5.0, "event": "start", "attempt": 1},
            {"time_unix_s": 5.0, "event": "exit", "attempt": 1, "exit_code": 0},
        ]
    )


def test_torchrun_wrapping() -> None:
    assert torchrun_argv(["python", "t.py", "--x"], None) == ["python", "t.py", "--x"]
    argv = torchrun_argv(["python3", "t.py", "--x"], 4)
    assert argv[1:4] == ["-m", "torch.distributed.run", "--nproc-per-node=4"]
    assert argv[-2:] == ["t.py", "--x"]
    assert "--no-python" in torchrun_argv(["./train.sh"], 2)


def test_real_job_killed_five_times_reaches_the_exact_result(tmp_path: Path) -> None:
    """SIGKILL the training process 5 times mid-run; it must still finish with the right total."""
    n = 150
    result = tmp_path / "result.json"
    hb = tmp_path / "hb"
    procs: list[Any] = []

    def spawner(argv: Sequence[str], env: Mapping[str, str]) -> Any:
        proc = popen_spawner(argv, env)
        procs.append(proc)
        return proc

    config = SupervisorConfig(
        command=(sys.executable, JOB, str(n), str(result), "0.01"),
        checkpoint_dir=str(tmp_path / "ckpt"),
        heartbeat_file=str(hb),
        poll_s=0.05,
        backoff_base_s=0.05,
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    sup = Supervisor(config, log=EventLog(), spawner=spawner, base_env=env)
    kills: list[int] = []

    def killer() -> None:
        targets = iter([15, 35, 60, 85, 110])
        target = next(targets)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                step = int(hb.read_text().split()[0])
            except (OSError, ValueError, IndexError):
                step = 0
            if step >= target and procs and procs[-1].poll() is None:
                os.killpg(procs[-1].pid, signal.SIGKILL)
                kills.append(step)
                target = next(targets, None)
                if target is None:
                    return
            time.sleep(0.01)

    thread = threading.Thread(target=killer)
    thread.start()
    outcome = sup.run()
    thread.join()
    assert len(kills) == 5
    assert outcome.status == "succeeded" and outcome.attempts == 6
    assert json.loads(result.read_text()) == {"step": n, "total": expected_total(n)}
    exits = [e["exit_code"] for e in sup.log.events if e["event"] == "exit"]
    assert exits == [-9] * 5 + [0]
