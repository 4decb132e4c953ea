"""The supervisor behind `gpurent run`: run, watch, restart, and rebuild after repeated failures.

The guide it implements: health-check every 5 minutes, restart automatically (the command resumes
from the newest valid checkpoint through `CheckpointManager`), back off between restarts, and
after 3 consecutive failed attempts run the rebuild action (a shell command or a webhook) and
stop. An attempt that made progress (its heartbeat step or newest checkpoint went past the best
seen before it) starts a new streak, so a long job preempted many times is not "rebuilt" for
failures that each lost only minutes. A rebuild replaces the machine, so it needs a reason to
blame the machine (a failed health check, a hang, a checkpoint that went back); a streak of
identical fast exits is a bug in the job and ends supervision without a rebuild.

With a `RunLock` (what `gpurent run --checkpoint-dir DIR` passes) there is one supervisor per
checkpoint directory, the failure streak survives restarts, and a job left behind by a
supervisor that died is stopped before a new one starts (`gpurent.runtime.joblock`).

The clock, the sleep, the process spawner and the checks are injected; the supervisor is a
deterministic loop under test.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Protocol

from gpurent.errors import GpurentError, InputError
from gpurent.http import DIRECT_HTTP, Http, HttpError
from gpurent.runtime.health import HealthResult, ProgressTracker, Status, read_step, worst
from gpurent.runtime.joblock import (
    ENV_RUN_ID,
    AttemptRecord,
    ChildRecord,
    RunLock,
    RunState,
    boot_id,
    start_ticks,
    stop_left_behind,
    stop_marked,
)
from gpurent.runtime.jobsync import (
    ENV_GENERATION,
    ENV_NNODES,
    ENV_NODE_RANK,
    ENV_RESUME_STEP,
    JobSync,
    PeersMissingError,
)
from gpurent.runtime.notices import Notice
from gpurent.runtime.redact import open_private_log, redact
from gpurent.runtime.rendezvous import Rendezvous

log_ = logging.getLogger("gpurent.runtime")

ENV_CHECKPOINT_DIR = "GPURENT_CHECKPOINT_DIR"
ENV_HEARTBEAT_FILE = "GPURENT_HEARTBEAT_FILE"
ENV_ATTEMPT = "GPURENT_ATTEMPT"
WEBHOOK_MAX_ANSWER_BYTES = 64 * 1024  # the answer is only logged by its status
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
    fast_exit_s: float = 60.0  # identical exits faster than this are a bug in the job
    rebuild_cmd: str | None = None
    rebuild_webhook: str | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """How supervision ended: `succeeded`, `interrupted`, `rebuilt` or `gave_up`; for the last
    two, the rule that fired (`health_check_failed`, `progress_lost`, `hung`,
    `repeated_failures`, `same_fast_exit`) and a one-line reason."""

    status: str
    attempts: int
    exit_code: int | None
    rule: str | None = None
    reason: str = ""

    @property
    def cli_exit_code(self) -> int:
        """The exit code for the CLI: 0 succeeded, EXIT_INTERRUPTED interrupted, else 1."""
        return {"succeeded": 0, "interrupted": EXIT_INTERRUPTED}.get(self.status, 1)


class Process(Protocol):
    """The child process as the supervisor drives it, like subprocess.Popen."""

    pid: int

    def poll(self) -> int | None:
        """The exit code, or None while the process runs."""

    def terminate(self) -> None:
        """Ask the process to stop (SIGTERM)."""

    def kill(self) -> None:
        """Stop the process at once (SIGKILL)."""


Spawner = Callable[[Sequence[str], Mapping[str, str]], Process]


class _GroupProcess:
    """A child in its own session: signals reach it and its children (torchrun workers)."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        self.pid = popen.pid
        self.pgid = popen.pid  # leader of its own session and group

    def poll(self) -> int | None:
        return self._popen.poll()

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, sig)

    def terminate(self) -> None:
        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        self._signal(signal.SIGKILL)

    def send_signal(self, sig: signal.Signals) -> None:
        """Forward `sig` to the child's whole process group."""
        self._signal(sig)


def popen_spawner(argv: Sequence[str], env: Mapping[str, str]) -> Process:
    """Start `argv` in a new session with `env`; output goes to the supervisor's terminal."""
    return _GroupProcess(subprocess.Popen(list(argv), env=dict(env), start_new_session=True))


def torchrun_argv(
    command: Sequence[str], nproc_per_node: int | None, rendezvous: Rendezvous | None = None
) -> list[str]:
    """Wrap `command` in torchrun for several GPUs per node (torchrun restarts are ours, 0);
    with `rendezvous`, the static multi-node rendezvous of this node (its rank, the master)."""
    if rendezvous is not None:
        nproc_per_node = rendezvous.nproc_per_node
    if not nproc_per_node:
        return list(command)
    base = [sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={nproc_per_node}"]
    if rendezvous is not None:
        base += [
            f"--nnodes={rendezvous.nnodes}",
            f"--node-rank={rendezvous.node_rank}",
            f"--master-addr={rendezvous.master_addr}",
            f"--master-port={rendezvous.master_port}",
        ]
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
        """Record an event (secrets redacted in the file and on the terminal); return the record."""
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
        """Close the event file."""
        if self._file is not None:
            self._file.close()
            self._file = None


class _CheckpointProgress:
    """The step of the newest checkpoint in a directory that verifies (size and sha256 of every
    file against its manifest, `CheckpointManager.newest_verified`); hashed again only when the
    list of committed checkpoints changed."""

    def __init__(self, checkpoint_dir: str | None) -> None:
        self._dir = checkpoint_dir
        self._seen: tuple[str, ...] | None = None
        self._step: int | None = None

    def newest_step(self) -> int | None:
        if self._dir is None:
            return None
        from gpurent.runtime.checkpoint import CheckpointManager

        try:
            mgr = CheckpointManager(self._dir, interval=None)
            names = tuple(info.name for info in mgr.committed())
            if names != self._seen:
                newest = mgr.newest_verified()
                self._seen, self._step = names, None if newest is None else newest.step
        except GpurentError:  # a missing extra, a bad URL: the user's to fix, before starting
            raise
        except Exception as exc:  # a damaged or unreachable directory must not stop supervision
            log_.warning("cannot read checkpoints in %s: %s", self._dir, exc)
            return None
        return self._step


def _min_opt(a: int | None, b: int) -> int:
    return b if a is None else min(a, b)


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
        http: Http = DIRECT_HTTP,
        base_env: Mapping[str, str] | None = None,
        run_shell: Callable[[str], int] | None = None,
        lock: RunLock | None = None,
        reap: Callable[[], None] | None = None,
        sync: JobSync | None = None,
    ) -> None:
        self.config = config
        self._sync = sync
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
        self._lock = lock
        self._reap = reap
        self._checkpoints = _CheckpointProgress(config.checkpoint_dir)
        self.run_id = uuid.uuid4().hex
        self._boot_id = boot_id()

    def _env(self, attempt: int) -> dict[str, str]:
        env = dict(self._base_env)
        if self.config.checkpoint_dir:
            env[ENV_CHECKPOINT_DIR] = self.config.checkpoint_dir
        if self.config.heartbeat_file:
            env[ENV_HEARTBEAT_FILE] = self.config.heartbeat_file
        env[ENV_ATTEMPT] = str(attempt)
        env[ENV_RUN_ID] = self.run_id
        return env

    def _heartbeat_progress(self) -> int | None:
        if self._progress is not None:
            return self._progress.best_step
        if self.config.heartbeat_file:
            return read_step(self.config.heartbeat_file)
        return None

    def _save(self, state: RunState) -> None:
        if self._lock is not None:
            try:
                self._lock.write_state(state)
            except OSError as exc:  # a full disk must not orphan the child
                log_.warning("cannot write %s: %s", self._lock.state_path, exc)

    def _take_notices(self, attempt: int) -> Notice | None:
        """Log every pending notice; the first that stops the job, if any."""
        stop: Notice | None = None
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
            if notice.terminating and stop is None:
                stop = notice
        return stop

    def _stop_child(
        self, proc: Process, grace_s: float, sig: signal.Signals = signal.SIGTERM
    ) -> int | None:
        """`sig` (SIGTERM), wait up to `grace_s`, then SIGKILL; the exit code if it exited."""
        send = getattr(proc, "send_signal", None)
        if sig is signal.SIGTERM or send is None:
            proc.terminate()
        else:
            send(sig)
        deadline = self._clock() + grace_s
        while (code := proc.poll()) is None and self._clock() < deadline:
            self._sleep(min(self.config.poll_s, 0.2))
        if code is None:
            proc.kill()
            while (code := proc.poll()) is None:
                self._sleep(0.05)
        return code

    def _stop_for_notice(self, proc: Process, notice: Notice) -> int | None:
        if notice.provider == "signal":  # forward SIGTERM, SIGINT or SIGHUP as it came
            sig = getattr(signal.Signals, notice.kind.upper(), signal.SIGTERM)
            return self._stop_child(proc, self.config.term_grace_s, sig)
        # leave the child most of the grace period to write its emergency checkpoint
        return self._stop_child(proc, max(notice.grace_s - 5.0, 1.0))

    def _watch(self, proc: Process, attempt: int) -> tuple[int | None, str | None, Notice | None]:
        """Wait for the attempt to end; (exit code, reason we stopped it, notice)."""
        next_health = self._clock() + self.config.health_interval_s
        while (code := proc.poll()) is None:
            notice = self._take_notices(attempt)
            if notice is not None:
                return self._stop_for_notice(proc, notice), "notice", notice
            if self._sync is not None and (event := self._sync.peer_event()) is not None:
                self.log.emit("peer", attempt=attempt, node=event.rank, kind=event.kind)
                code = self._stop_child(proc, self.config.term_grace_s)
                return code, f"peer_{event.kind}", None
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

    def _backoff(self, seconds: float, attempt: int) -> Notice | None:
        """Sleep `seconds` in slices of the poll period; a terminating notice cuts it short."""
        deadline = self._clock() + seconds
        while True:
            notice = self._take_notices(attempt)
            if notice is not None:
                return notice
            left = deadline - self._clock()
            if left <= 0:
                return None
            self._sleep(min(left, self.config.poll_s))

    def _emit_health(self, attempt: int, results: Sequence[HealthResult]) -> None:
        self.log.emit(
            "health",
            attempt=attempt,
            status=worst(results).value,
            checks=[
                {"check": r.check, "status": r.status.value, "reason": r.reason} for r in results
            ],
        )

    def _clean_up_after(self, proc: Process) -> list[int]:
        """Stop what the attempt left running: its process group, then every process that
        carries this run's id (background and `setsid` grandchildren)."""
        pgid = getattr(proc, "pgid", None)
        if pgid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGTERM)
        left = stop_marked(self.run_id, grace_s=min(self.config.term_grace_s, 5.0))
        if pgid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
        if self._reap is not None:
            self._reap()
        return left

    def run(self) -> Outcome:
        """Supervise the command until it succeeds, is interrupted or gives up; say how it ended."""
        state = RunState()
        if self._lock is not None:
            state = self._lock.read_state()
            stopped: list[int] = []
            if state.child is not None:
                stopped += stop_left_behind(state.child, grace_s=self.config.term_grace_s)
            if state.run_id is not None:
                stopped += stop_marked(state.run_id, grace_s=self.config.term_grace_s)
            if state.child is not None or stopped:
                self.log.emit(
                    "left_behind",
                    pid=state.child.pid if state.child else None,
                    stopped=sorted(set(stopped)),
                )
            if state.streak:
                self.log.emit("resumed_streak", consecutive_failures=len(state.streak))
        state = dataclasses.replace(state, run_id=self.run_id, child=None)
        self._save(state)
        return self._loop(state)

    def _interrupted(self, attempt: int, exit_code: int | None, reason: str) -> Outcome:
        self.log.emit("stopped", reason=reason, attempts=attempt)
        return Outcome(status="interrupted", attempts=attempt, exit_code=exit_code, reason=reason)

    def _loop(self, state: RunState) -> Outcome:
        config = self.config
        attempt = 0
        while True:
            notice = self._take_notices(attempt)
            if notice is not None:
                return self._interrupted(attempt, None, "interruption notice")
            attempt += 1
            ckpt_before = self._checkpoints.newest_step()
            best_before = _max_opt(
                state.best_progress, _max_opt(self._heartbeat_progress(), ckpt_before)
            )
            env = self._env(attempt)
            if self._sync is not None:
                agreed = self._agree(attempt, ckpt_before)
                if isinstance(agreed, Outcome):
                    return agreed
                env.update(agreed)
                # the job drops what is newer than the agreed step: that is no lost progress
                resume = agreed[ENV_RESUME_STEP]
                ckpt_before = None if resume == "none" else _min_opt(ckpt_before, int(resume))
            try:
                proc = self._spawn(config.command, env)
            except OSError as exc:  # not found, not executable, no memory for a fork
                raise InputError(
                    f"cannot start {config.command[0]!r}: {exc.strerror or exc}; check the "
                    "command after `--`"
                ) from None
            started = self._clock()
            child = ChildRecord(
                pid=proc.pid,
                pgid=getattr(proc, "pgid", None),
                start_ticks=start_ticks(proc.pid),
                run_id=self.run_id,
                boot_id=self._boot_id,
            )
            state = dataclasses.replace(state, child=child, best_progress=best_before)
            self._save(state)
            self.log.emit("start", attempt=attempt, pid=proc.pid, command=list(config.command))
            if self._progress is not None:
                self._progress.reset()
            exit_code, stopped_for, notice = self._watch(proc, attempt)
            runtime_s = self._clock() - started
            left = self._clean_up_after(proc)
            extra = {"left_running": left} if left else {}
            self.log.emit(
                "exit", attempt=attempt, exit_code=exit_code, stopped_for=stopped_for, **extra
            )
            state = dataclasses.replace(state, child=None)
            if notice is not None:
                self._save(state)
                self._mark("interrupted")
                return self._interrupted(attempt, exit_code, "interruption notice")
            if stopped_for is None and exit_code == EXIT_INTERRUPTED:
                self._save(state)
                self._mark("interrupted")
                return self._interrupted(attempt, exit_code, f"the job exited {EXIT_INTERRUPTED}")
            if stopped_for is not None and stopped_for.startswith("peer_"):
                self._save(state)
                peer = self._after_peer(attempt, exit_code, stopped_for)
                if peer is not None:
                    return peer
                continue
            if stopped_for is None and exit_code == 0:
                self._mark("done")
                self._save(RunState(run_id=self.run_id))
                self.log.emit("done", attempts=attempt)
                return Outcome(status="succeeded", attempts=attempt, exit_code=0)
            ckpt_after = self._checkpoints.newest_step()
            best_after = _max_opt(self._heartbeat_progress(), ckpt_after)
            progressed = _max_opt(best_before, best_after) != best_before
            lost = ckpt_before is not None and (ckpt_after is None or ckpt_after < ckpt_before)
            record = AttemptRecord(
                exit_code=exit_code,
                runtime_s=round(runtime_s, 3),
                stopped_for=stopped_for,
                progress_lost=lost,
            )
            streak = (record,) if progressed else (*state.streak, record)
            state = dataclasses.replace(
                state, streak=streak, best_progress=_max_opt(best_before, best_after)
            )
            self._save(state)
            self._mark("failed")
            failures = len(streak)
            if failures >= config.max_failures:
                self._mark("gave_up")
                return self._rebuild(attempt, state, exit_code)
            backoff_s = min(config.backoff_base_s * 2 ** (failures - 1), config.backoff_max_s)
            self.log.emit(
                "restart",
                attempt=attempt,
                consecutive_failures=failures,
                progressed=progressed,
                backoff_s=backoff_s,
            )
            if self._backoff(backoff_s, attempt) is not None:
                return self._interrupted(attempt, exit_code, "interruption notice")

    def _mark(self, kind: str) -> None:
        if self._sync is not None:
            try:
                self._sync.mark(kind)
            except OSError as exc:  # the peers then learn it from their own job's failure
                log_.warning("cannot record %s in %s: %s", kind, self._sync.directory, exc)

    def _agree(self, attempt: int, own_step: int | None) -> dict[str, str] | Outcome:
        """Wait until every node reported its newest verified step; the env for the job."""
        assert self._sync is not None
        stop: list[Notice] = []

        def should_stop() -> bool:
            if (notice := self._take_notices(attempt)) is not None:
                stop.append(notice)
            return bool(stop)

        try:
            agreed = self._sync.begin(
                own_step, poll_s=min(self.config.poll_s, 0.5), should_stop=should_stop
            )
        except OSError as exc:
            raise InputError(
                f"cannot use the sync directory {self._sync.directory}: "
                f"{exc.strerror or exc}; give --sync-dir a directory every node can write"
            ) from None
        except PeersMissingError as exc:
            self.log.emit("gave_up", attempts=attempt - 1, rule="peers_missing", reason=str(exc))
            return Outcome(
                status="gave_up",
                attempts=attempt - 1,
                exit_code=None,
                rule="peers_missing",
                reason=str(exc),
            )
        if agreed is None:
            self._mark("interrupted")
            return self._interrupted(attempt - 1, None, "interruption notice")
        resume = agreed.resume_step
        self.log.emit(
            "agreed",
            attempt=attempt,
            generation=agreed.generation,
            node=self._sync.node_rank,
            steps=list(agreed.steps),
            resume_step=resume,
        )
        return {
            ENV_RESUME_STEP: "none" if resume is None else str(resume),
            ENV_NODE_RANK: str(self._sync.node_rank),
            ENV_NNODES: str(self._sync.nnodes),
            ENV_GENERATION: str(agreed.generation),
        }

    def _after_peer(self, attempt: int, exit_code: int | None, stopped_for: str) -> Outcome | None:
        """Another node ended the generation: follow it (stop, give up) or restart with it.
        A restart for a peer's failure does not count against this node's streak."""
        kind = stopped_for.removeprefix("peer_")
        if kind == "interrupted":
            return self._interrupted(attempt, exit_code, "another node was interrupted")
        if kind == "gave_up":
            reason = "another node gave up; the whole job stops"
            self.log.emit("gave_up", attempts=attempt, rule="peer_gave_up", reason=reason)
            return Outcome(
                status="gave_up",
                attempts=attempt,
                exit_code=exit_code,
                rule="peer_gave_up",
                reason=reason,
            )
        self.log.emit("restart", attempt=attempt, reason="another node failed", backoff_s=0.0)
        return None

    def _rebuild(self, attempts: int, state: RunState, exit_code: int | None) -> Outcome:
        config = self.config
        rule, reason = rebuild_rule(state.streak, fast_exit_s=config.fast_exit_s)
        failures = len(state.streak)
        # the next supervisor starts a new streak (on the rebuilt machine, or after a fix)
        self._save(dataclasses.replace(state, streak=()))
        if rule == "same_fast_exit" or not (config.rebuild_cmd or config.rebuild_webhook):
            self.log.emit(
                "gave_up",
                attempts=attempts,
                consecutive_failures=failures,
                rebuild="none",
                rule=rule,
                reason=reason,
            )
            return Outcome(
                status="gave_up", attempts=attempts, exit_code=exit_code, rule=rule, reason=reason
            )
        if config.rebuild_cmd:
            self.log.emit(
                "rebuild", action="command", command=config.rebuild_cmd, rule=rule, reason=reason
            )
            rc = self._run_shell(config.rebuild_cmd)
            self.log.emit("rebuild_result", action="command", exit_code=rc)
        if config.rebuild_webhook:
            self.log.emit(
                "rebuild", action="webhook", url=config.rebuild_webhook, rule=rule, reason=reason
            )
            payload = {
                "event": "rebuild",
                "attempts": attempts,
                "last_exit_code": exit_code,
                "rule": rule,
                "reason": reason,
            }
            try:
                answer = self._http.post(
                    config.rebuild_webhook,
                    headers={"Content-Type": "application/json"},
                    body=json.dumps(payload).encode(),
                    timeout_s=10.0,
                    deadline_s=10.0,
                    max_bytes=WEBHOOK_MAX_ANSWER_BYTES,
                )
                self.log.emit("rebuild_result", action="webhook", http_status=answer.status)
            except HttpError as exc:
                self.log.emit("rebuild_result", action="webhook", error=str(exc))
        return Outcome(
            status="rebuilt", attempts=attempts, exit_code=exit_code, rule=rule, reason=reason
        )


def rebuild_rule(streak: Sequence[AttemptRecord], *, fast_exit_s: float) -> tuple[str, str]:
    """Which rule a streak of failed attempts fires, and why, in one line. Only
    `same_fast_exit` (two or more attempts that fail the same way within seconds: a bug, not
    the machine) does not rebuild; a single failure (`--max-failures 1`) is not a pattern."""
    n = len(streak)
    health = sum(a.stopped_for == "health" for a in streak)
    if health:
        return "health_check_failed", f"{health} of {n} failed attempts failed a health check"
    if any(a.progress_lost for a in streak):
        return "progress_lost", "the newest verified checkpoint went back or vanished"
    hung = sum(a.stopped_for == "hang" for a in streak)
    if hung:
        return "hung", f"{hung} of {n} failed attempts stopped making progress (hang)"
    codes = {a.exit_code for a in streak}
    if n >= 2 and len(codes) == 1 and all(a.runtime_s < fast_exit_s for a in streak):
        return "same_fast_exit", (
            f"{n} attempts each exited {next(iter(codes))} within {fast_exit_s:g} s: "
            "a bug in the job, not the machine; not rebuilding"
        )
    return "repeated_failures", f"{n} consecutive failed attempts without progress"


def _run_shell(command: str) -> int:
    return subprocess.run(command, shell=True, check=False, timeout=3600).returncode
