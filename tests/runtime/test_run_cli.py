"""`gpurent run` through the real CLI."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpurent.cli.main import app

from .counter_job import expected_total

JOB = str(Path(__file__).with_name("counter_job.py"))


def test_run_supervises_to_success_and_logs_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(sys.path))
    log = tmp_path / "events.jsonl"
    result_file = tmp_path / "r.json"
    r = CliRunner().invoke(
        app,
        [
            "run",
            "--checkpoint-dir", str(tmp_path / "ck"),
            "--notice", "none",
            "--log", str(log),
            "--poll", "0.05",
            "--json",
            "--",
            sys.executable, JOB, "20", str(result_file), "0",
        ],
    )  # fmt: skip
    assert r.exit_code == 0, r.stderr
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["event"] for e in events] == ["watching", "start", "exit", "done"]
    assert [json.loads(line)["event"] for line in r.stdout.splitlines()][-1] == "done"
    assert json.loads(result_file.read_text())["total"] == expected_total(20)


def test_failing_command_runs_rebuild_and_exits_1(tmp_path: Path) -> None:
    marker = tmp_path / "rebuilt"
    # a different exit code each attempt: not the identical fast exits of a bug in the job
    job = "import os; raise SystemExit(int(os.environ['GPURENT_ATTEMPT']))"
    r = CliRunner().invoke(
        app,
        [
            "run", "--notice", "none", "--backoff", "0", "--poll", "0.05",
            "--max-failures", "2", "--rebuild-cmd", f"touch {marker}",
            "--", sys.executable, "-c", job,
        ],
    )  # fmt: skip
    assert r.exit_code == 1
    assert marker.exists()
    assert "rebuild" in r.stdout
    assert "repeated_failures" in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--notice", "none"], "no command to run"),
        (["run", "--notice", "ibm", "--", "true"], "--notice must be"),
        (["run", "--hang-timeout", "5", "--", "true"], "needs --heartbeat-file"),
        (["run", "--max-failures", "0", "--", "true"], "--max-failures must be"),
    ],
)
def test_bad_input_is_one_line_exit_2(args: list[str], message: str) -> None:
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 2
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_log_is_private_and_never_holds_a_secret(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "events.jsonl"
    log.parent.mkdir()
    log.write_text("")
    log.chmod(0o644)  # an existing, world-readable log becomes private too
    r = CliRunner().invoke(
        app,
        [
            "run", "--notice", "none", "--backoff", "0", "--poll", "0.05", "--max-failures", "1",
            "--log", str(log), "--json",
            "--rebuild-webhook", "http://ops:S3CRET-PW@127.0.0.1:9/hook?sig=S3CRET-SIG",
            "--rebuild-cmd", "AWS_SECRET_ACCESS_KEY=S3CRET-AWS true --password S3CRET-PASS",
            "--", sys.executable, "-c", "raise SystemExit(3)",
            "--api-key=S3CRET-KEY", "--token", "S3CRET-TOK", "--max-tokens", "512",
            "HF_TOKEN=S3CRET-HF", "https://u:S3CRET-URL@example.com/x?token=S3CRET-Q",
        ],
    )  # fmt: skip
    assert r.exit_code == 1, r.stderr
    text = log.read_text()
    assert (log.stat().st_mode & 0o777) == 0o600
    for where in (text, r.stdout, r.stderr):
        assert "S3CRET" not in where
    start = next(json.loads(line) for line in text.splitlines() if '"start"' in line)
    assert start["command"][3:] == [
        "--api-key=***", "--token", "***", "--max-tokens", "512", "HF_TOKEN=***",
        "https://***@example.com/x?***",
    ]  # fmt: skip
    assert '"url":"http://***@127.0.0.1:9/hook?***"' in text
    assert "AWS_SECRET_ACCESS_KEY=*** true --password ***" in text


def test_new_log_is_created_0600(tmp_path: Path) -> None:
    log = tmp_path / "new" / "events.jsonl"
    old = os.umask(0o022)
    try:
        r = CliRunner().invoke(
            app, ["run", "--notice", "none", "--log", str(log), "--poll", "0.05", "--",
                  sys.executable, "-c", "pass"],
        )  # fmt: skip
    finally:
        os.umask(old)
    assert r.exit_code == 0, r.stderr
    assert (log.stat().st_mode & 0o777) == 0o600 and '"done"' in log.read_text()
