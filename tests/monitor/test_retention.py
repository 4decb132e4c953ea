"""`gpurent monitor --record DB --retention-days N`: N must be a positive finite number, checked
before the store is touched; the summary's row counts match what the store holds."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from gpurent.cli.main import app
from gpurent.errors import InputError
from gpurent.monitor.recorder import Recorder
from gpurent.monitor.scenarios import SCENARIOS

from .conftest import Clock, run_probe

runner = CliRunner()


def _rows(db: str | Path) -> int:
    from gpurent.store import open_engine, select_rows

    engine = open_engine(db)
    try:
        with engine.connect() as conn:
            return len(select_rows(conn))
    finally:
        engine.dispose()


def _record(db: str | Path, *extra: str) -> Result:
    args = ["monitor", "--fake-gpus", "busy", "--duration", "0", "--json", "--record", str(db)]
    return runner.invoke(app, [*args, *extra])


@pytest.mark.parametrize("bad", ["-1", "0", "-0.5", "nan", "inf", "-inf"])
def test_bad_retention_is_refused_before_the_store_is_touched(tmp_path: Path, bad: str) -> None:
    db = tmp_path / "m.db"
    r = _record(db)
    assert r.exit_code == 0, r.stderr
    before = _rows(db)
    assert before > 0
    stamp = db.stat().st_mtime_ns
    r = _record(db, "--retention-days", bad)
    assert r.exit_code == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    # NaN and infinity are refused by the CLI's finite check of every float flag, first
    assert len(lines) == 1 and (
        "--retention-days must be a positive number of days" in lines[0]
        or "--retention-days must be a finite number" in lines[0]
    )
    assert _rows(db) == before and db.stat().st_mtime_ns == stamp
    fresh = tmp_path / "new.db"
    assert _record(fresh, "--retention-days", bad).exit_code == 2
    assert not fresh.exists()


def test_recorder_refuses_bad_retention(tmp_path: Path) -> None:
    for bad in (0.0, -86400.0, math.nan, math.inf):
        with pytest.raises(InputError, match="retention"):
            Recorder(tmp_path / "m.db", retention_s=bad)


def test_summary_counts_match_the_store(store_target: str) -> None:
    db = store_target
    old_clock = Clock(1000.0)  # 1970: older than any retention
    samples, _ = run_probe(SCENARIOS["busy"], old_clock, steps=3)
    rec = Recorder(db)
    for s in samples:
        rec.add(s)
    assert rec.flush() is None
    old_rows = rec.written_rows
    rec.close()
    assert old_rows > 0 and _rows(db) == old_rows
    r = _record(db, "--retention-days", "30")
    assert r.exit_code == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["retention_deleted_rows"] == old_rows
    assert summary["recorded_rows"] == _rows(db) == summary["gpus"] * summary["samples"]
