from __future__ import annotations

import csv
import json
import sys
import urllib.request
from pathlib import Path

from typer.testing import CliRunner

from gpurent.cli.main import app
from gpurent.monitor.exporter import Exporter, render_metrics
from gpurent.monitor.recorder import Recorder
from gpurent.monitor.sample import COLUMNS, from_rows, to_rows
from gpurent.monitor.scenarios import SCENARIOS

from .conftest import Clock, run_probe

runner = CliRunner()


def test_exporter_serves_dcgm_names_on_localhost(clock: Clock) -> None:
    samples, _ = run_probe(SCENARIOS["busy"], clock, steps=2)
    exporter = Exporter(port=0, host="127.0.0.1").start()
    try:
        exporter.update(render_metrics(samples[-1], hostname="node-1"))
        with urllib.request.urlopen(f"http://127.0.0.1:{exporter.port}/metrics") as resp:
            body = resp.read().decode()
            assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    finally:
        exporter.stop()
    assert "# TYPE DCGM_FI_DEV_GPU_UTIL gauge" in body
    from prometheus_client.parser import text_string_to_metric_families

    families = {f.name: f for f in text_string_to_metric_families(body)}
    util = families["DCGM_FI_DEV_GPU_UTIL"].samples[0]
    assert util.labels["UUID"].startswith("GPU-fake") and util.value == 100
    assert util.labels == {
        "gpu": "0",
        "UUID": util.labels["UUID"],
        "pci_bus_id": util.labels["pci_bus_id"],
        "device": "nvidia0",
        "modelName": "NVIDIA H100 80GB HBM3",
        "Hostname": "node-1",
    }  # dcgm-exporter's labels
    sm = {s.labels["gpu"]: s.value for s in families["DCGM_FI_PROF_SM_ACTIVE"].samples}
    assert sm["7"] == 0.82
    assert "DCGM_FI_DEV_FB_FREE" in families


def test_recorder_round_trip_and_retention(store_target: str, clock: Clock) -> None:
    samples, _ = run_probe(SCENARIOS["lost"], clock, steps=4)
    db = store_target
    if "://" not in db:
        db = str(Path(db).parent / "sub" / "m.db")  # the recorder makes the folder
    rec = Recorder(db, retention_s=2.5)
    for s in samples:
        rec.add(s)
    assert rec.flush() is None and rec.written_rows == 8
    from gpurent.store import open_engine, select_rows

    engine = open_engine(db)
    with engine.connect() as conn:
        back = from_rows(select_rows(conn))
    assert [s.timestamp_s for s in back] == [s.timestamp_s for s in samples]
    assert back[-1].gpus[1].lost and back[1].gpus[0].source_of("sm_util_pct") == "nvml-gpm"
    assert rec.flush(now_s=samples[-1].timestamp_s) is None  # retention: keep the last 2.5 s
    with engine.connect() as conn:
        assert len(from_rows(select_rows(conn))) == 3
    engine.dispose()
    rec.close()


def test_unwritable_store_keeps_running(tmp_path: Path, clock: Clock) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the store's folder should be")
    samples, _ = run_probe(SCENARIOS["busy"], clock, steps=2)
    rec = Recorder(blocker / "m.db", max_buffer_rows=10)
    for s in samples:
        rec.add(s)
    note = rec.flush()
    assert note is not None and "cannot write" in note
    assert rec.pending_rows == 10 and rec.dropped_rows == 6
    blocker.unlink()  # the disk has room again
    assert rec.flush() is None and rec.written_rows == 10
    rec.close()


def write_csv(path: Path, clock: Clock, scenario: str) -> None:
    samples, _ = run_probe(SCENARIOS[scenario], clock, steps=6)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        for s in samples:
            writer.writerows(to_rows(s))


def test_diagnose_csv_and_jsonl(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "s.csv"
    write_csv(path, clock, "idle")
    r = runner.invoke(
        app, ["monitor", "diagnose", str(path), "--json", "--price-usd-per-hour", "10"]
    )
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert {f["kind"] for f in out["diagnosis"]["findings"]} == {"idle-gpu"}
    assert out["cost"]["idle_wasted_usd"] > 0
    jl = tmp_path / "s.jsonl"
    jl.write_text(
        "\n".join(
            json.dumps(
                {
                    "timestamp": i,
                    "gpu": 0,
                    "gpu_busy_pct": 100,
                    "sm_util_pct": 20,
                    "cpu_util_pct": 97,
                }
            )
            for i in range(5)
        )
    )
    r = runner.invoke(app, ["monitor", "diagnose", str(jl)])
    assert r.exit_code == 0 and "input-pipeline-bound" in r.stdout


def test_diagnose_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("timestamp,gpu,sm_util_pct\n1,0,lots\n")
    r = runner.invoke(app, ["monitor", "diagnose", str(bad)])
    assert r.exit_code == 1 and "bad.csv:2: sm_util_pct must be a number, got 'lots'" in r.stderr
    nohdr = tmp_path / "nohdr.csv"
    nohdr.write_text("a,b\n1,2\n")
    r = runner.invoke(app, ["monitor", "diagnose", str(nohdr)])
    assert r.exit_code == 1 and "no 'timestamp' column" in r.stderr
    r = runner.invoke(app, ["monitor", "diagnose", str(tmp_path / "missing.csv")])
    assert r.exit_code == 2 and "no such file" in r.stderr


def test_cli_run_records_then_reports(tmp_path: Path, store_target: str) -> None:
    db = store_target
    action_file = tmp_path / "idle-fired"
    r = runner.invoke(
        app,
        [
            "monitor",
            "--fake-gpus",
            "idle",
            "--duration",
            "0.3",
            "--interval",
            "0.1",
            "--json",
            "--record",
            str(db),
            "--instance",
            "p5.48xlarge",
            "--idle-action",
            f"touch {action_file}",
            "--idle-minutes",
            "0.001",
        ],
    )
    assert r.exit_code == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["gpus"] == 2 and summary["recorded_rows"] == 2 * summary["samples"]
    assert summary["cost"]["label"].startswith("aws p5.48xlarge")
    assert action_file.exists() and summary["idle_actions"][0]["returncode"] == 0
    html = tmp_path / "r.html"
    r = runner.invoke(
        app, ["monitor", "report", "--db", str(db), "--html", str(html), "--markdown"]
    )
    assert r.exit_code == 0, r.stderr
    assert "idle-gpu" in r.stdout and "<svg" in html.read_text()
    r = runner.invoke(app, ["monitor", "report", "--db", str(db), "--since", "1h", "--json"])
    assert json.loads(r.stdout)["diagnosis"]["samples"] == summary["samples"]


def test_cli_no_driver_and_errors(tmp_path: Path) -> None:
    r = runner.invoke(
        app,
        [
            "monitor",
            "--fake-gpus",
            "no-driver",
            "--duration",
            "0",
            "--json",
            "--proc-root",
            str(tmp_path / "none"),
        ],
    )
    assert r.exit_code == 0
    assert "NVML unavailable" in r.stderr and json.loads(r.stdout)["gpus"] == 0
    for args, text in (
        (["--interval", "0"], "--interval must be positive"),
        (["--fake-gpus", "nope"], "built-in: busy"),
        (["--instance", "p9.mega"], "unknown instance type"),
        (["--port", "70000", "--exporter"], "--port must be"),
    ):
        r = runner.invoke(app, ["monitor", *args, "--duration", "0", "--json"])
        assert r.exit_code == 2 and text in r.stderr, (args, r.stderr)
    r = runner.invoke(app, ["monitor", "report", "--db", str(tmp_path / "x.db")])
    assert r.exit_code == 2 and "no such file" in r.stderr


def test_live_view_renders_without_gpm() -> None:
    r = runner.invoke(
        app, ["monitor", "--fake-gpus", "ampere", "--duration", "0", "--price-usd-per-hour", "12"]
    )
    assert r.exit_code == 0, r.stderr
    assert "n/a (no" in r.stdout and "cost:" in r.stdout and "no GPM" in r.stderr


def test_report_never_writes_to_the_file_it_reads(tmp_path: Path) -> None:
    """`--db` names something to read: a file that is not a store stays byte for byte."""
    for content in (b"", b"not a database at all\n"):
        path = tmp_path / "notes.txt"
        path.write_bytes(content)
        r = runner.invoke(app, ["monitor", "report", "--db", str(path), "--json"])
        assert r.exit_code != 0
        assert "error:" in r.stderr and "Traceback" not in r.stderr
        assert path.read_bytes() == content
        assert not (tmp_path / "notes.txt-wal").exists()


def test_missing_nvml_extra_names_the_install(tmp_path: Path, monkeypatch) -> None:
    """Without nvidia-ml-py the monitor runs on host metrics and names the extra to install."""
    monkeypatch.setitem(sys.modules, "pynvml", None)  # makes `import pynvml` raise ImportError
    r = runner.invoke(
        app, ["monitor", "--duration", "0", "--json", "--proc-root", str(tmp_path / "none")]
    )
    assert r.exit_code == 0, r.stderr
    assert "pip install 'gpurent[monitor]'" in r.stderr
    assert json.loads(r.stdout)["gpus"] == 0


def test_report_reads_a_naive_time_as_utc_as_the_report_prints_it(
    tmp_path: Path, monkeypatch
) -> None:
    """`--until 2026-11-30T12:00` means UTC (the report's own times are UTC), whatever the TZ."""
    import time
    from datetime import UTC, datetime

    db = tmp_path / "m.db"
    args = ["monitor", "--fake-gpus", "busy", "--duration", "0", "--json", "--record", str(db)]
    assert runner.invoke(app, args).exit_code == 0
    until = datetime.fromtimestamp(time.time() + 60, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    monkeypatch.setenv("TZ", "Asia/Kolkata")  # UTC+5:30: a local reading ends 5.5 h too early
    time.tzset()
    try:
        r = runner.invoke(app, ["monitor", "report", "--db", str(db), "--until", until, "--json"])
    finally:
        monkeypatch.undo()
        time.tzset()
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["diagnosis"]["samples"] == 1
    r = runner.invoke(app, ["monitor", "report", "--db", str(db), "--until", "noon"])
    assert r.exit_code == 2 and "--until 'noon': give an ISO time" in r.stderr


def test_cli_bad_flags_and_stores_are_one_line_errors(tmp_path: Path) -> None:
    for args, text in (
        (["--provider", "aws"], "--provider/--region need --instance TYPE"),
        (["--price-usd-per-hour", "-1"], "--price-usd-per-hour must be a non-negative"),
        (["--idle-pct", "101"], "--idle-pct must be between 0 and 100"),
        (["--idle-action", "true", "--idle-minutes", "0"], "--idle-minutes must be positive"),
        (["--instance", "p5.48xlarge", "--provider", "gcp"], "not sold by provider 'gcp'"),
    ):
        r = runner.invoke(app, ["monitor", "--fake-gpus", "busy", *args, "--duration", "0"])
        assert r.exit_code == 2 and text in r.stderr, (args, r.stderr)
        assert "Traceback" not in r.stderr
    not_a_store = tmp_path / "notes.db"
    not_a_store.write_text("just text, not SQLite\n")
    r = runner.invoke(app, ["monitor", "report", "--db", str(not_a_store)])
    assert r.exit_code == 1 and "not a gpurent monitor store" in r.stderr, r.stderr
    db = tmp_path / "m.db"
    args = ["monitor", "--fake-gpus", "busy", "--duration", "0", "--json", "--record", str(db)]
    assert runner.invoke(app, args).exit_code == 0
    r = runner.invoke(app, ["monitor", "report", "--db", str(db), "--until", "0"])
    assert r.exit_code == 1 and "no samples in the requested window" in r.stderr
