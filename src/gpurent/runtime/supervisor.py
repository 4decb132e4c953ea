"""The supervisor behind `gpurent run`: run, watch, restart, and rebuild after repeated failures.

The guide it implements: health-check every 5 minutes, restart automatically (the command resumes
from the newest valid checkpoint through `CheckpointManager`), back off between restarts, and
after 3 consecutive failed attempts run the rebuild action (a shell command or a webhook) and
stop. An attempt that made progress (its heartbeat step or newest checkpoint went past the best
seen before it) starts a new streak, so a long job preempted many times is not "rebuilt" for
failures that each lost only minutes.

The clock, the sleep, the process spawner and the checks are injected; the supervisor is a
deterministic loop under test.
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
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Protocol

from gpurent.runtime.health import HealthResult, ProgressTracker, Status, read_step, worst
from gpurent.runtime.notices import Http, Notice, urllib_http
from gpurent.runtime.redact import open_private_log, redact

ENV_CHECKPOINT_DIR = "GPURENT_CHECKPOINT_DIR"
ENV_HEARTBEAT_FILE = "GPURENT_HEARTBEAT_FILE"
ENV_ATTEMPT = "GPURENT_ATTEMPT"
EXIT_INTERRUPTED = 75  # EX_TEMPFAIL: stopped by an interruption notice; run again elsewhere


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SupervisorConfig:
    """What `gpurent run` was asked to do. Durations in seconds."""

    command: tuple[str, ...]
    checkpoint_dir: str | None = None
    heartbeat_file: str | None = None
    health_interval_s: float = 300.0
    hang_timeout_s: float | None = None
    max_failures: int = 3
    backoff_base_s: float = 10.0
    backoff_max_s: float = 600.0
    poll_s: float = 1.0
    term_grace_s: float = 30.0
    rebuild_cmd: str | None = None
    rebuild_webhook: str | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """How supervision ended: `succeeded`, `interrupted`, `rebuilt` or `gave_up`."""

    status: str
    attempts: int
    exit_code: int | None

    @property
    def cli_exit_code(self) -> int:
        return {"succeeded": 0, "interrupted": EXIT_INTERRUPTED}.get(self.status, 1)


class Process(Protocol):
    pid: int

    def poll(self) -> int | None: ...

    def terminate(self) -> None: ...

    def kill(self) -> None: ...


Spawner = Callable[[Sequence[str], Mapping[str, str]], Process]


class _GroupProcess:
    """A child in its own session: signals reach it and its children (torchrun workers)."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        self.pid = popen.pid

    def poll(self) -> int | None:
        return self._popen.poll()

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, sig)

    def terminate(self) -> None:
        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        self._signal(signal.SIGKILL)


def popen_spawner(argv: Sequence[str], env: Mapping[str, str]) -> Process:
    """Start `argv` in a new session with `env`; output goes to the supervisor's terminal."""
    return _GroupProcess(subprocess.Popen(list(argv), env=dict(env), start_new_session=True))


def torchrun_argv(command: Sequence[str], nproc_per_node: int | None) -> list[str]:
    """Wrap `command` in torchrun for several GPUs per node (torchrun restarts are ours, 0)."""
    if not nproc_per_node:
        return list(command)
    base = [sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={nproc_per_node}"]
    base.append("--max-restarts=0")
    if Path(command[0]).name.startswith("python"):
        return [*base, *command[1:]]
    return [*base, "--no-python", *command]


class EventLog:
    """Every event as one JSON line in a file and through `echo` (the terminal)."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        echo: Callable[[dict[str, Any]], None] | None = None,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._file: IO[str] | None = None
        if path is not None:
            self._file = open_private_log(path)  # 0600; closed in close()
        self._echo = echo
        self._wall_clock = wall_clock
        self.events: list[dict[str, Any]] = []

    def emit(self, event: str, **fields: Any) -> dict[str, Any]:
        record = {"time_unix_s": round(self._wall_clock(), 3), "event": event, **fields}
        self.events.append(record)
        shown = redact(record)  # the file and the terminal never see a secret
        if self._file is not None:
            self._file.write(json.dumps(shown, separators=(",", ":")) + "\n")
            self._file.flush()
        if self._echo is not None:
            self._echo(shown)
        return record

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _newest_checkpoint_step(checkpoint_dir: str | None) -> int | None:
    if checkpoint_dir is None:
        return None
    from gpurent.runtime.checkpoint import CheckpointManager

    try:
        committed = CheckpointManager(checkpoint_dir).committed()
    except (OSError, ValueError):
        return None
    return committed[0].step if committed else None


def _max_opt(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)


class Supervisor:
    """Runs `config.command` until it succeeds, is interrupted, or fails too often."""

    def __init__(
        self,
        config: SupervisorConfig,
        *,
        log: EventLog,
        spawner: Spawner = popen_spawner,
        checks: Sequence[Callable[[], HealthResult]] = (),
        poll_notices: Callable[[], Sequence[Notice]] = list,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        http: Http = urllib_http,
        base_env: Mapping[str, str] | None = None,
        run_shell: Callable[[str], int] | None = None,
    ) -> None:
        self.config = config
        self.log = log
        self._spawn = spawner
        self._checks = list(checks)
        self._poll_notices = poll_notices
        self._clock = clock
        self._sleep = sleep
        self._http = http
        self._base_env = dict(os.environ if base_env is None else base_env)
        self._run_shell = run_shell or _run_shell
        self._progress = (
            ProgressTracker(
                config.heartbeat_file, hang_timeout_s=config.hang_timeout_s, clock=clock
            )
            if config.heartbeat_file and config.hang_timeout_s
            else None
        )

    def _env(self, attempt: int) -> dict[str, str]:
        env = dict(self._base_env)
        if self.config.checkpoint_dir:
            env[ENV_CHECKPOINT_DIR] = self.config.checkpoint_dir
        if self.config.heartbeat_file:
            env[ENV_HEARTBEAT_FILE] = self.config.heartbeat_file
        env[ENV_ATTEMPT] = str(attempt)
        return env

    def _best_progress(self) -> int | None:
        if self._progress is not None:
            heartbeat = self._progress.best_step
        elif self.config.heartbeat_file:
            heartbeat = read_step(self.config.heartbeat_file)
        else:
            heartbeat = None
        return _max_opt(heartbeat, _newest_checkpoint_step(self.config.checkpoint_dir))

    def _stop_child(self, proc: Process, grace_s: float) -> int | None:
        """SIGTERM, wait up to `grace_s`, then SIGKILL; the exit code if it exited."""
        proc.terminate()
        deadline = self._clock() + grace_s
        while (code := proc.poll()) is None and self._clock() < deadline:
            self._sleep(min(self.config.poll_s, 0.2))
        if code is None:
            proc.kill()
            while (code := proc.poll()) is None:
                self._sleep(0.05)
        return code

    def _watch(self, proc: Process, attempt: int) -> tuple[int | None, str | None, Notice | None]:
        """Wait for the attempt to end; (exit code, reason we stopped it, notice)."""
        next_health = self._clock() + self.config.health_interval_s
        while (code := proc.poll()) is None:
            for notice in self._poll_notices():
                self.log.emit(
                    "notice",
                    attempt=attempt,
                    provider=notice.provider,
                    kind=notice.kind,
                    detail=notice.detail,
                    grace_s=notice.grace_s,
                    terminating=notice.terminating,
                )
                if notice.terminating:
                    # leave the child most of the grace period to write its emergency checkpoint
                    code = self._stop_child(proc, max(notice.grace_s - 5.0, 1.0))
                    return code, "notice", notice
            if self._progress is not None:
                result = self._progress.check()
                if result.status is Status.FAIL:
                    self._emit_health(attempt, [result])
                    return self._stop_child(proc, self.config.term_grace_s), "hang", None
            if self._clock() >= next_health:
                next_health += self.config.health_interval_s
                results = [check() for check in self._checks]
                self._emit_health(attempt, results)
                if worst(results) is Status.FAIL:
                    return self._stop_child(proc, self.config.term_grace_s), "health", None
            self._sleep(self.config.poll_s)
        return code, None, None

    def _emit_health(self, attempt: int, results: Sequence[HealthResult]) -> None:
        self.log.emit(
            "health",
            attempt=attempt,
            status=worst(results).value,
            checks=[
                {"check": r.check, "status": r.status.value, "reason": r.reason} for r in results
            ],
        )

    def run(self) -> Outcome:
        config = self.config
        attempt = 0
        failures = 0
        exit_code: int | None = None
        while True:
            attempt += 1
            best_before = self._best_progress()
            proc = self._spawn(config.command, self._env(attempt))
            self.log.emit("start", attempt=attempt, pid=proc.pid, command=list(config.command))
            if self._progress is not None:
                self._progress.reset()
            exit_code, stopped_for, notice = self._watch(proc, attempt)
            self.log.emit("exit", attempt=attempt, exit_code=exit_code, stopped_for=stopped_for)
            if notice is not None:
                self.log.emit("stopped", reason="interruption notice", attempts=attempt)
                return Outcome(status="interrupted", attempts=attempt, exit_code=exit_code)
            if stopped_for is None and exit_code == 0:
                self.log.emit("done", attempts=attempt)
                return Outcome(status="succeeded", attempts=attempt, exit_code=0)
            progressed = _max_opt(best_before, self._best_progress()) != best_before
            failures = 1 if progressed else failures + 1
            if failures >= config.max_failures:
                return self._rebuild(attempt, failures, exit_code)
            backoff_s = min(config.backoff_base_s * 2 ** (failures - 1), config.backoff_max_s)
            self.log.emit(
                "restart",
                attempt=attempt,
                consecutive_failures=failures,
                progressed=progressed,
                backoff_s=backoff_s,
            )
            self._sleep(backoff_s)

    def _rebuild(self, attempts: int, failures: int, exit_code: int | None) -> Outcome:
        config = self.config
        if not (config.rebuild_cmd or config.rebuild_webhook):
            self.log.emit(
                "gave_up", attempts=attempts, consecutive_failures=failures, rebuild="none"
            )
            return Outcome(status="gave_up", attempts=attempts, exit_code=exit_code)
        if config.rebuild_cmd:
            self.log.emit("rebuild", action="command", command=config.rebuild_cmd)
            rc = self._run_shell(config.rebuild_cmd)
            self.log.emit("rebuild_result", action="command", exit_code=rc)
        if config.rebuild_webhook:
            self.log.emit("rebuild", action="webhook", url=config.rebuild_webhook)
            payload = {"event": "rebuild", "attempts": attempts, "last_exit_code": exit_code}
            try:
                status, _ = self._http(
                    "POST",
                    config.rebuild_webhook,
                    {"Content-Type": "application/json"},
                    10.0,
                    json.dumps(payload).encode(),
                )
                self.log.emit("rebuild_result", action="webhook", http_status=status)
            except OSError as exc:
                self.log.emit("rebuild_result", action="webhook", error=str(exc))
        return Outcome(status="rebuilt", attempts=attempts, exit_code=exit_code)


def _run_shell(command: str) -> int:
    return subprocess.run(command, shell=True, check=False, timeout=3600).returncode
