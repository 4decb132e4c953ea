"""The store package: SQLite engines, and the one-line error when SQLAlchemy is absent."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gpurent.errors import MissingExtraError


def test_without_sqlalchemy_the_recorder_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from gpurent.monitor.recorder import Recorder

    monkeypatch.setitem(sys.modules, "sqlalchemy", None)  # makes `import sqlalchemy` fail
    for name in ("gpurent.store", "gpurent.store.db", "gpurent.store.samples"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    with pytest.raises(MissingExtraError) as err:
        Recorder(tmp_path / "m.db")
    message = str(err.value)
    assert "gpurent[monitor]" in message and "\n" not in message


def test_read_only_engine_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    from gpurent.store import create_schema, open_engine

    db = tmp_path / "m.db"
    engine = open_engine(db)
    create_schema(engine)
    engine.dispose()
    before = db.read_bytes()
    reader = open_engine(db, read_only=True)
    with reader.connect() as conn:
        conn.exec_driver_sql("SELECT count(*) FROM monitor_samples").scalar()
    reader.dispose()
    assert db.read_bytes() == before


def test_without_sqlalchemy_monitor_report_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tests.conftest import run_cli

    db = tmp_path / "m.db"
    db.write_bytes(b"")
    monkeypatch.setitem(sys.modules, "sqlalchemy", None)
    for name in ("gpurent.store", "gpurent.store.db", "gpurent.store.samples"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    code, _, err = run_cli("monitor", "report", "--db", str(db))
    assert code == 1 and "gpurent[monitor]" in err and "Traceback" not in err
