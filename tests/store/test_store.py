"""The store package: SQLite engines, and the one-line error when SQLAlchemy is absent."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

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


def _engine(target: str, *, read_only: bool = False) -> Any:
    from gpurent.store import create_schema, open_engine

    if not read_only:
        engine = open_engine(target)
        create_schema(engine)
        return engine
    return open_engine(target, read_only=True)


def test_rows_round_trip_on_both_backends(store_target: str) -> None:
    """The values a writer sends come back the same from SQLite and PostgreSQL, whatever the
    Python type (a push sends JSON: 0/1 for a flag, ints where floats are stored)."""
    from gpurent.store import delete_before, insert_rows, select_rows

    engine = _engine(store_target)
    rows = [
        {"timestamp": 10.0, "gpu": 0, "lost": 1, "sm_util_pct": 50, "ecc_corrected": 2**40},
        {"timestamp": 10.0, "gpu": 1, "lost": False, "power_w": 300.5, "sources": "a=b"},
        {"timestamp": 11.0, "gpu": None, "lost": 0, "cpu_util_pct": 3, "machine": "node-1"},
    ]
    with engine.begin() as conn:
        assert insert_rows(conn, rows) == 3
    with engine.connect() as conn:
        back = select_rows(conn)
    assert [r["lost"] for r in back] == [True, False, False]
    assert all(type(r["lost"]) is bool for r in back)
    assert back[0]["sm_util_pct"] == 50.0 and back[0]["ecc_corrected"] == 2**40
    assert back[1]["power_w"] == 300.5 and back[1]["sources"] == "a=b"
    assert back[2]["gpu"] is None and back[2]["machine"] == "node-1" and back[0]["machine"] == ""
    with engine.begin() as conn:
        assert delete_before(conn, 11.0) == 2
        assert delete_before(conn, 11.0) == 0
    with engine.connect() as conn:
        assert [r["timestamp"] for r in select_rows(conn)] == [11.0]
    engine.dispose()


def test_over_long_text_is_cut_to_the_column_not_refused(store_target: str) -> None:
    """PostgreSQL refuses a VARCHAR(256) value of 300 characters (SQLite keeps it): one such row
    would make every retry of the recorder's batch fail, so both stores keep the first part."""
    from gpurent.store import insert_rows, select_rows

    engine = _engine(store_target)
    xid = ",".join(["79"] * 150)  # 449 characters of Xid codes
    with engine.begin() as conn:
        insert_rows(conn, [{"timestamp": 1.0, "gpu": 0, "xid": xid, "gpu_name": "G" * 200}])
    with engine.connect() as conn:
        (row,) = select_rows(conn)
    engine.dispose()
    assert row["xid"] == xid[:256] and row["gpu_name"] == "G" * 128


def test_nan_reads_back_as_missing_on_both_backends(store_target: str) -> None:
    """SQLite stores NaN as NULL and PostgreSQL as NaN; the store writes None for both."""
    from gpurent.store import insert_rows, select_rows

    engine = _engine(store_target)
    with engine.begin() as conn:
        insert_rows(conn, [{"timestamp": 1.0, "gpu": 0, "power_w": math.nan}])
    with engine.connect() as conn:
        (row,) = select_rows(conn)
    engine.dispose()
    assert row["power_w"] is None


def test_a_read_only_engine_cannot_write_on_either_backend(store_target: str) -> None:
    import sqlalchemy as sa

    from gpurent.store import insert_rows, select_rows

    engine = _engine(store_target)
    with engine.begin() as conn:
        insert_rows(conn, [{"timestamp": 1.0, "gpu": 0}])
    engine.dispose()
    reader = _engine(store_target, read_only=True)
    with reader.connect() as conn:
        assert len(select_rows(conn)) == 1
    with pytest.raises(sa.exc.SQLAlchemyError), reader.begin() as conn:
        insert_rows(conn, [{"timestamp": 2.0, "gpu": 0}])
    with pytest.raises(sa.exc.SQLAlchemyError), reader.begin() as conn:
        conn.exec_driver_sql("DELETE FROM monitor_samples")
    reader.dispose()
    engine = _engine(store_target)
    with engine.connect() as conn:
        assert [r["timestamp"] for r in select_rows(conn)] == [1.0]
    engine.dispose()


def test_recorder_keeps_rows_while_the_database_is_missing(pg_url: str) -> None:
    """PostgreSQL's 'cannot write' case: the database does not exist yet (or the server is
    down); the recorder keeps its rows and writes them once the database is there."""
    import sqlalchemy as sa

    from gpurent.monitor.recorder import Recorder
    from gpurent.store import open_engine, select_rows

    url = sa.engine.make_url(pg_url)
    later = f"{url.database}_later"
    target = url.set(database=later).render_as_string(hide_password=False)
    rec = Recorder(target)
    rec.add_rows([{"timestamp": 1.0, "gpu": 0}, {"timestamp": 1.0, "gpu": 1}])
    note = rec.flush()
    assert note is not None and "cannot write" in note and later in note
    assert "\n" not in note and rec.pending_rows == 2
    with_password = url.set(database=later, password="s3cret").render_as_string(False)
    secret = Recorder(with_password)
    secret.add_rows([{"timestamp": 1.0, "gpu": 0}])
    note = secret.close()
    assert note is not None and "cannot write" in note and "s3cret" not in note and "***" in note
    admin = sa.create_engine(pg_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{later}"')
    try:
        assert rec.flush() is None and rec.written_rows == 2
        assert rec.close() is None
        engine = open_engine(target, read_only=True)
        with engine.connect() as conn:
            assert [r["gpu"] for r in select_rows(conn)] == [0, 1]
        engine.dispose()
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{later}" WITH (FORCE)')
        admin.dispose()


def test_concurrent_writers_all_land(store_target: str) -> None:
    """Pushes from many machines write at once: every transaction commits (SQLite waits for
    the write lock instead of failing with 'database is locked'), and new source lists seen by
    two writers at the same moment are stored once."""
    from concurrent.futures import ThreadPoolExecutor

    from gpurent.store import insert_rows, select_rows

    engine = _engine(store_target)

    def write(writer: int) -> None:
        for k in range(15):
            rows = [
                {"timestamp": float(k), "gpu": g, "machine": f"m{writer}", "sources": f"s{k}"}
                for g in range(8)
            ]
            with engine.begin() as conn:
                select_rows(conn, since_s=1e12)  # a read first, as a request handler may do
                insert_rows(conn, rows)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(write, range(4)))
    with engine.connect() as conn:
        back = select_rows(conn)
        sources = conn.exec_driver_sql("SELECT count(*) FROM monitor_sources").scalar()
    engine.dispose()
    assert len(back) == 4 * 15 * 8 and sources == 15
    assert {r["sources"] for r in back if r["timestamp"] == 3.0} == {"s3"}
