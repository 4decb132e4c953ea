"""Issue 13, items 7-10: one supervisor per checkpoint directory, no processes left behind, junk
metadata answers, failure streaks that survive restarts, the rebuild rules, checkpoint progress."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gpurent.cli.main import app
from gpurent.runtime import CheckpointManager
from gpurent.runtime.health import HealthResult, ProgressTracker, Status, read_step
from gpurent.runtime.joblock import ChildRecord, RunLock, RunState, boot_id, start_ticks
from gpurent.runtime.notices import AwsWatcher, AzureWatcher, GcpWatcher, NoticeMonitor
from gpurent.runtime.supervisor import Supervisor

from .metadata_server import MetadataState, metadata_server
from .supervisor_fakes import FakeClock, FakeProc, fake_supervisor

HERE = Path(__file__).parent
FAMILY = str(HERE / "family_job.py")
NO_SUCH_PID = 2**30  # above any pid_max: a fake process never matches a real one


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] not in {b"Z", b"X"}


def _events(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.fixture()
def pypath(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(sys.path))


def _run(*args: str) -> Any:
    return CliRunner().invoke(app, ["run", "--notice", "none", "--poll", "0.05", *args])


# ---- item 7: the lock, jobs left behind, grandchildren ------------------------------------


def test_second_supervisor_refuses_naming_the_holder_pid(tmp_path: Path) -> None:
    ck = tmp_path / "ck"
    with RunLock(ck):
        r = _run("--checkpoint-dir", str(ck), "--", "true")
    assert r.exit_code == 1
    assert f"pid {os.getpid()}" in r.stderr and "already supervised" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert _run("--checkpoint-dir", str(ck), "--", "true").exit_code == 0  # lock released


@pytest.mark.parametrize("same_process", [True, False])
def test_left_behind_job_is_stopped_only_if_it_is_the_same_process(
    tmp_path: Path, same_process: bool
) -> None:
    ck = tmp_path / "ck"
    victim = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        ticks = start_ticks(victim.pid)
        assert ticks is not None
        record = ChildRecord(
            pid=victim.pid,
            pgid=victim.pid,
            start_ticks=ticks if same_process else ticks + 1,  # + 1: the PID was reused
            run_id=uuid.uuid4().hex,
            boot_id=boot_id(),
        )
        ck.mkdir()
        RunLock(ck).write_state(RunState(child=record))
        log = tmp_path / "log.jsonl"
        r = _run("--checkpoint-dir", str(ck), "--log", str(log), "--grace", "2", "--", "true")
        assert r.exit_code == 0, r.stderr
        time.sleep(0.1)
        assert (victim.poll() is None) is (not same_process)
        if same_process:
            assert _events(log)[1]["event"] == "left_behind"
    finally:
        victim.kill()
        victim.wait()


@pytest.mark.parametrize(
    "mode", [["exit", "0"], ["exit", "4"], ["hang"], ["stubborn"]], ids="-".join
)
def test_grandchildren_do_not_outlive_the_job(
    tmp_path: Path, pypath: None, mode: list[str]
) -> None:
    pids = tmp_path / "pids"
    hb = tmp_path / "hb"
    args = ["--max-failures", "1", "--grace", "0.3"]
    if mode[0] in {"hang", "stubborn"}:
        args += ["--heartbeat-file", str(hb), "--hang-timeout", "0.5"]
    started = time.monotonic()
    r = _run(*args, "--", sys.executable, FAMILY, str(pids), *mode)
    elapsed = time.monotonic() - started
    assert r.exit_code == (0 if mode == ["exit", "0"] else 1), r.stderr
    grandchildren = [int(p) for p in pids.read_text().split()]
    assert len(grandchildren) == 2
    assert not [p for p in grandchildren if _alive(p)]
    assert elapsed < 15  # --grace 0.3, not the 30 s default, before SIGKILL


# ---- item 8: junk metadata answers, slow servers, junk heartbeats -------------------------

INSTANCE_ACTION = "/latest/meta-data/spot/instance-action"
TOKEN = "/latest/api/token"
AZURE = "/metadata/scheduledevents?api-version=2020-07-01"
GCP = "/computeMetadata/v1/instance/preempted"

JUNK = {
    "aws-list": ("aws", INSTANCE_ACTION, (200, b"[1,2]", None)),
    "aws-string": ("aws", INSTANCE_ACTION, (200, b'"terminate"', None)),
    "aws-truncated": ("aws", INSTANCE_ACTION, (200, b'{"action": "ter', 400)),
    "aws-not-utf8": ("aws", INSTANCE_ACTION, (200, b'{"action": "\xff"}', None)),
    "aws-token-not-utf8": ("aws", TOKEN, (200, b"tok-\xff\xfe", None)),
    "aws-token-crlf": ("aws", TOKEN, (200, b"tok\r\nX-Injected: 1", None)),
    "azure-events-int": ("azure", AZURE, (200, b'{"Events": 5}', None)),
    "azure-list-of-ints": ("azure", AZURE, (200, b'{"Events": [1]}', None)),
    "azure-truncated": ("azure", AZURE, (200, b'{"Events": [', 100)),
    "gcp-junk": ("gcp", GCP, (200, b"\xff\x00maybe", None)),
}


@pytest.fixture()
def server() -> Iterator[tuple[str, MetadataState]]:
    with metadata_server() as s:
        yield s


@pytest.mark.parametrize("case", sorted(JUNK))
def test_junk_answer_is_logged_once_and_means_no_notice(
    server: tuple[str, MetadataState], case: str, caplog: pytest.LogCaptureFixture
) -> None:
    url, state = server
    provider, path, answer = JUNK[case]
    state.raw[path] = answer
    watcher = {"aws": AwsWatcher, "azure": AzureWatcher, "gcp": GcpWatcher}[provider](url)
    monitor = NoticeMonitor([watcher], lambda n: None)
    with caplog.at_level(logging.DEBUG, logger="gpurent.runtime"):
        assert monitor.poll_once() == [] and monitor.poll_once() == []
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and provider in warnings[0].getMessage()


def test_junk_metadata_never_crashes_gpurent_run(
    server: tuple[str, MetadataState], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    url, state = server
    state.raw[INSTANCE_ACTION] = (200, b"[1,2]", None)
    monkeypatch.setenv("GPURENT_AWS_METADATA_URL", url)
    r = CliRunner().invoke(app, ["run", "--notice", "aws", "--poll", "0.05", "--", "true"])
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output


def test_slow_metadata_server_does_not_delay_noticing_the_exit(
    server: tuple[str, MetadataState], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    url, state = server
    state.trickle_s = 0.5  # every byte half a second apart: no socket timeout ever fires
    monkeypatch.setenv("GPURENT_AWS_METADATA_URL", url)
    log = tmp_path / "log.jsonl"
    args = ["run", "--notice", "aws", "--poll", "0.05", "--log", str(log), "--", "sleep", "0.3"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    by_event = {e["event"]: e["time_unix_s"] for e in _events(log)}
    # 0.3 s of job and about a poll more; polling in line would wait >= 3.5 s for the token alone
    assert by_event["exit"] - by_event["start"] < 2.0


def test_non_utf8_heartbeat_is_no_step_not_a_crash(tmp_path: Path, pypath: None) -> None:
    hb = tmp_path / "hb"
    hb.write_bytes(b"\xff\xfe12\n")
    assert read_step(hb) is None
    assert ProgressTracker(hb, hang_timeout_s=5).check().status is Status.OK
    job = f"open({str(hb)!r}, 'wb').write(b'\\xff\\xfe\\x80')"
    r = _run("--heartbeat-file", str(hb), "--hang-timeout", "5", "--", sys.executable, "-c", job)
    assert r.exit_code == 0, r.output


# ---- item 9: the failure streak across restarts, exit 75, the rebuild rules ---------------


class SupervisorDiedError(Exception):
    pass


def _fake(
    plan: Sequence[tuple[int, float | None] | None],
    *,
    lock: RunLock | None = None,
    checks: Sequence[Any] = (),
    on_spawn: Any = None,
    **config: Any,
) -> tuple[Supervisor, list[str]]:
    """A supervisor on a fake clock; a None in `plan` is the supervisor dying at that spawn."""
    clock = FakeClock()
    spawned: list[FakeProc] = []

    def spawner(argv: Sequence[str], env: Mapping[str, str]) -> FakeProc:
        step = plan[len(spawned)]
        if step is None:
            raise SupervisorDiedError
        if on_spawn is not None:
            on_spawn(len(spawned))
        spawned.append(FakeProc(clock, step[0], step[1], NO_SUCH_PID + len(spawned)))
        return spawned[-1]

    return fake_supervisor(clock, spawner, checks=checks, lock=lock, **config)


def test_restarted_supervisor_goes_on_counting_failures(tmp_path: Path) -> None:
    lock = RunLock(tmp_path / "ck").acquire()
    first, _ = _fake([(1, 100.0), (2, 100.0), None], lock=lock, rebuild_cmd="recreate")
    with pytest.raises(SupervisorDiedError):
        first.run()
    assert len(lock.read_state().streak) == 2
    second, shell = _fake([(3, 100.0)], lock=lock, rebuild_cmd="recreate")
    outcome = second.run()
    assert outcome.status == "rebuilt" and outcome.attempts == 1 and shell == ["recreate"]
    assert second.log.events[0]["event"] == "resumed_streak"
    assert lock.read_state().streak == ()  # the rebuilt machine starts a new streak
    lock.release()


def test_job_exiting_75_itself_is_an_interruption_not_a_failure() -> None:
    sup, _ = _fake([(75, 5.0), (0, 1.0)])
    outcome = sup.run()
    assert outcome.status == "interrupted" and outcome.attempts == 1
    assert outcome.cli_exit_code == 75
    assert "restart" not in [e["event"] for e in sup.log.events]


def test_identical_fast_exits_do_not_rebuild(tmp_path: Path, pypath: None) -> None:
    sup, shell = _fake([(1, 2.0)] * 3, rebuild_cmd="recreate")
    outcome = sup.run()
    assert outcome.status == "gave_up" and outcome.rule == "same_fast_exit" and shell == []
    gave_up = sup.log.events[-1]
    assert gave_up["event"] == "gave_up" and gave_up["rule"] == "same_fast_exit"
    marker = tmp_path / "rebuilt"
    r = _run(
        "--backoff", "0", "--max-failures", "3", "--rebuild-cmd", f"touch {marker}",
        "--", sys.executable, "-c", "raise SystemExit(3)",
    )  # fmt: skip
    assert r.exit_code == 1 and not marker.exists()
    assert "same_fast_exit" in r.stderr and "exited 3" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_failed_health_check_rebuilds() -> None:
    calls: list[int] = []

    def gpu() -> HealthResult:
        calls.append(1)
        return HealthResult(check="gpu", status=Status.FAIL, reason="Xid 79")

    sup, shell = _fake(
        [(1, 100.0), (0, None), (1, 100.0)],
        checks=[gpu],
        health_interval_s=1.0,
        rebuild_cmd="recreate",
    )
    outcome = sup.run()
    assert outcome.status == "rebuilt" and outcome.rule == "health_check_failed"
    assert shell == ["recreate"]
    rebuild = next(e for e in sup.log.events if e["event"] == "rebuild")
    assert rebuild["rule"] == "health_check_failed"


def test_checkpoint_lost_rebuilds(tmp_path: Path) -> None:
    ck = tmp_path / "ck"
    saved = CheckpointManager(ck, interval=None).save({"x": 1}, 10)

    def lose_it(n: int) -> None:  # the disk drops the checkpoint while the first attempt runs
        if n == 0:
            for path in sorted((ck / saved.name).iterdir()):
                path.unlink()
            (ck / saved.name).rmdir()

    sup, shell = _fake(
        [(1, 2.0)] * 3, checkpoint_dir=str(ck), on_spawn=lose_it, rebuild_cmd="recreate"
    )
    outcome = sup.run()
    assert outcome.status == "rebuilt" and outcome.rule == "progress_lost"
    assert shell == ["recreate"]


def test_grace_must_be_a_finite_non_negative_number() -> None:
    for bad in ("nan", "-1", "inf"):
        r = _run("--grace", bad, "--", "true")
        assert r.exit_code == 2 and "--grace" in r.stderr, bad
        assert len(r.stderr.strip().splitlines()) == 1


# ---- item 10: progress through verified checkpoints ---------------------------------------

CKPT_JOB = """
import os, sys
from pathlib import Path
from gpurent.runtime import CheckpointManager
mgr = CheckpointManager(os.environ["GPURENT_CHECKPOINT_DIR"], interval=None)
attempt = int(os.environ["GPURENT_ATTEMPT"])
if attempt == 3:
    sys.exit(0)
info = mgr.save({"attempt": attempt}, attempt * 10)
if sys.argv[1] == "damage":  # the newest checkpoint does not verify
    data = Path(os.environ["GPURENT_CHECKPOINT_DIR"], info.name, "data.json")
    data.write_bytes(data.read_bytes().replace(b"attempt", b"attempX"))
sys.exit(1)
"""


@pytest.mark.parametrize("damage", [False, True])
def test_progress_is_a_newer_verified_checkpoint(
    tmp_path: Path, pypath: None, damage: bool
) -> None:
    log = tmp_path / "log.jsonl"
    r = _run(
        "--checkpoint-dir", str(tmp_path / "ck"), "--backoff", "0", "--max-failures", "5",
        "--log", str(log), "--", sys.executable, "-c", CKPT_JOB, "damage" if damage else "ok",
    )  # fmt: skip
    assert r.exit_code == 0, r.stderr
    restarts = [e for e in _events(log) if e["event"] == "restart"]
    assert [e["progressed"] for e in restarts] == [not damage, not damage]
    assert [e["consecutive_failures"] for e in restarts] == ([1, 2] if damage else [1, 1])


def test_command_that_cannot_start_is_one_line(tmp_path: Path) -> None:
    r = _run("--checkpoint-dir", str(tmp_path / "ck"), "--", str(tmp_path / "no-such-program"))
    assert r.exit_code == 2 and "cannot start" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_fifo_heartbeat_never_blocks(tmp_path: Path) -> None:
    fifo = tmp_path / "hb"
    os.mkfifo(fifo)
    started = time.monotonic()
    assert read_step(fifo) is None
    assert ProgressTracker(fifo, hang_timeout_s=5).check().status is Status.OK
    assert time.monotonic() - started < 1


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGINT, signal.SIGTERM], ids=str)
def test_signal_to_the_supervisor_reaches_the_job_as_it_came(
    tmp_path: Path, sig: signal.Signals
) -> None:
    got, pids = tmp_path / "got", tmp_path / "pids"
    log = tmp_path / "log.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    argv = [
        sys.executable, "-m", "gpurent", "run", "--notice", "none", "--poll", "0.05",
        "--log", str(log), "--checkpoint-dir", str(tmp_path / "ck"),
        "--", sys.executable, FAMILY, str(pids), "signal", str(got),
    ]  # fmt: skip
    sup = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    ready = tmp_path / "got.ready"  # written once the job's signal handlers are in place
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    sup.send_signal(sig)
    _, err = sup.communicate(timeout=20)
    assert sup.returncode == 75, err
    assert got.read_text() == sig.name
    assert not [p for p in map(int, pids.read_text().split()) if _alive(p)]
    assert b"Traceback" not in err
