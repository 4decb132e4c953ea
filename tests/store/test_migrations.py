"""Schema migrations on SQLite and PostgreSQL: a store made by the previous release (its
`metadata.create_all`, frozen below) is recognised, stamped and upgraded with its rows kept;
upgrading twice changes nothing; a store from a newer gpurent is a one-line InputError."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from gpurent.errors import InputError
from gpurent.store import create_schema, insert_rows, open_engine, select_rows, upgrade
from gpurent.store.migrate import current_revision, downgrade, head_revision
from tests.conftest import run_cli

# The schema as gpurent 0.1.0 made it (store/samples.py before migrations), frozen here.
_OLD_FLOATS = (
    "sm_util_pct", "sm_occupancy_pct", "tensor_util_pct", "dram_bw_util_pct", "gpu_busy_pct",
    "mem_copy_util_pct", "memory_used_mib", "memory_total_mib", "power_w", "power_limit_w",
    "temperature_c", "sm_clock_mhz", "sm_clock_max_mhz", "mem_clock_mhz", "pcie_tx_mb_per_s",
    "pcie_rx_mb_per_s",
)  # fmt: skip
_OLD_INTS = (
    "throttle_reasons", "pcie_gen", "pcie_gen_max", "pcie_width", "pcie_width_max",
    "ecc_uncorrected", "ecc_corrected",
)  # fmt: skip
_OLD_HOST = (
    "cpu_util_pct", "iowait_pct", "memory_used_gib", "memory_total_gib", "disk_util_pct",
    "disk_read_mb_per_s", "disk_write_mb_per_s", "net_rx_mb_per_s", "net_tx_mb_per_s",
    "data_wait_pct",
)  # fmt: skip


def _old_metadata() -> sa.MetaData:
    old = sa.MetaData()
    sa.Table(
        "monitor_samples",
        old,
        sa.Column("timestamp", sa.Float, nullable=False, index=True),
        sa.Column("gpu", sa.Integer, nullable=True),
        sa.Column("gpu_name", sa.String(128), nullable=False, default=""),
        sa.Column("gpu_uuid", sa.String(96), nullable=False, default=""),
        sa.Column("lost", sa.Boolean, nullable=False, default=False),
        *(sa.Column(name, sa.Float, nullable=True) for name in _OLD_FLOATS),
        *(sa.Column(name, sa.BigInteger, nullable=True) for name in _OLD_INTS),
        sa.Column("xid", sa.String(256), nullable=False, default=""),
        *(sa.Column(name, sa.Float, nullable=True) for name in _OLD_HOST),
        sa.Column("sources_id", sa.Integer, nullable=False, default=0),
    )
    sa.Table(
        "monitor_sources",
        old,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("text", sa.Text, nullable=False, unique=True),
    )
    return old


def _old_store(target: str) -> list[dict[str, Any]]:
    """A store exactly as the previous release made it, with rows; returns the rows."""
    old = _old_metadata()
    engine = open_engine(target)
    old.create_all(engine)
    rows = [
        {
            "timestamp": 100.0 + i,
            "gpu": i % 2,
            "gpu_name": "NVIDIA H100 80GB HBM3",
            "gpu_uuid": f"GPU-{i % 2}",
            "lost": i == 3,
            "sm_util_pct": 50.0 + i,
            "ecc_corrected": 2**40 + i,  # needs a BigInteger
            "xid": "79" if i == 3 else "",
            "cpu_util_pct": 12.5,
            "sources_id": 1,
        }
        for i in range(4)
    ]
    with engine.begin() as conn:
        conn.execute(old.tables["monitor_sources"].insert(), [{"id": 1, "text": "sm=nvml"}])
        conn.execute(old.tables["monitor_samples"].insert(), rows)
    engine.dispose()
    return rows


def _columns(target: str) -> set[str]:
    engine = open_engine(target)
    try:
        with engine.connect() as conn:
            return {c["name"] for c in sa.inspect(conn).get_columns("monitor_samples")}
    finally:
        engine.dispose()


def test_an_old_store_is_stamped_and_upgraded_with_its_rows_kept(store_target: str) -> None:
    rows = _old_store(store_target)
    assert "machine" not in _columns(store_target)
    result = upgrade(store_target)
    assert result.stamped_old_store and result.before_revision == "0001"
    assert result.after_revision == head_revision() == "0003"
    assert "machine" in _columns(store_target)
    engine = open_engine(store_target)
    with engine.connect() as conn:
        assert current_revision(conn) == "0003"
        back = select_rows(conn)
    assert len(back) == len(rows)
    for old, new in zip(rows, back, strict=True):
        assert {k: new[k] for k in old} == old
        assert new["machine"] == "" and new["sources"] == "sm=nvml"
    # the new column takes values, and the old rows are still there beside them
    with engine.begin() as conn:
        insert_rows(conn, [{"timestamp": 200.0, "gpu": 0, "machine": "node-7"}])
    with engine.connect() as conn:
        machines = [r["machine"] for r in select_rows(conn)]
    engine.dispose()
    assert machines == ["", "", "", "", "node-7"]


def test_upgrading_twice_is_a_no_op(store_target: str) -> None:
    first = upgrade(store_target)
    assert first.before_revision is None and not first.stamped_old_store
    engine = open_engine(store_target)
    with engine.begin() as conn:
        insert_rows(conn, [{"timestamp": 1.0, "gpu": 0}])
    second = upgrade(engine)
    assert second == type(second)("0003", "0003", False)
    create_schema(engine)  # what every writer calls
    with engine.connect() as conn:
        assert len(select_rows(conn)) == 1
    engine.dispose()


def test_head_matches_the_tables_in_code(store_target: str) -> None:
    """The revisions build exactly the tables, columns and indexes `metadata` declares."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from gpurent.store.samples import metadata

    upgrade(store_target)
    engine = open_engine(store_target)
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    engine.dispose()
    assert diff == []


def test_downgrade_to_the_base_and_back(store_target: str) -> None:
    upgrade(store_target)
    assert downgrade(store_target, revision="0001").after_revision == "0001"
    assert "machine" not in _columns(store_target)
    assert upgrade(store_target).after_revision == "0003"


def test_a_store_from_a_newer_gpurent_is_a_one_line_input_error(store_target: str) -> None:
    upgrade(store_target)
    engine = open_engine(store_target)
    with engine.begin() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = '0099'")
    with pytest.raises(InputError) as err:
        upgrade(engine)
    message = str(err.value)
    assert "made by a newer gpurent" in message and "upgrade gpurent" in message
    assert "'0099'" in message and "\n" not in message
    with engine.connect() as conn:
        assert current_revision(conn) == "0099"  # left as it was
    engine.dispose()
    code, _, err_text = run_cli(
        "monitor", "--fake-gpus", "busy", "--duration", "0", "--json", "--record", store_target
    )
    assert code == 2 and "made by a newer gpurent" in err_text and "Traceback" not in err_text
    assert len(err_text.strip().splitlines()) == 1


def test_report_reads_an_old_store_without_changing_it(store_target: str) -> None:
    """`monitor report` opens read-only: an old store is read as it is, not migrated."""
    _old_store(store_target)
    code, _, err = run_cli("monitor", "report", "--db", store_target, "--json")
    assert code == 0, err
    assert "machine" not in _columns(store_target)
    engine = open_engine(store_target)
    with engine.connect() as conn:
        assert current_revision(conn) is None
    engine.dispose()


def test_store_upgrade_command(store_target: str) -> None:
    _old_store(store_target)
    code, out, err = run_cli("monitor", "store", "upgrade", "--db", store_target)
    assert code == 0, err
    assert "0001 -> 0003" in out and "made before migrations" in out
    code, out, err = run_cli("monitor", "store", "upgrade", "--db", store_target)
    assert code == 0 and "already at 0003" in out, (out, err)


def test_a_failed_upgrade_leaves_the_store_as_it_was(store_target: str) -> None:
    """All or nothing, on SQLite too: a revision that fails half-way (here an index name already
    taken by another table) leaves no half-made tables behind to be mistaken for an old store."""
    engine = open_engine(store_target)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE other (x INTEGER)")
        conn.exec_driver_sql("CREATE INDEX ix_monitor_samples_timestamp ON other (x)")
    with pytest.raises(sa.exc.SQLAlchemyError):
        upgrade(engine)
    with engine.connect() as conn:
        tables = set(sa.inspect(conn).get_table_names())
    engine.dispose()
    assert tables == {"other"}


def test_store_upgrade_command_errors_are_one_line(tmp_path: Path) -> None:
    code, _, err = run_cli("monitor", "store", "upgrade", "--db", str(tmp_path / "none.db"))
    assert code == 2 and "no such file" in err and not (tmp_path / "none.db").exists()
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database\n")
    code, _, err = run_cli("monitor", "store", "upgrade", "--db", str(notes))
    assert code == 1 and "cannot upgrade the store" in err
    assert notes.read_text() == "not a database\n"
    closed = "postgresql+psycopg://postgres:secret@127.0.0.1:1/gpurent"  # nothing listens on 1
    code, _, err = run_cli("monitor", "store", "upgrade", "--db", closed)
    assert code == 1 and "cannot upgrade the store" in err and "secret" not in err
    for text in (err,):
        assert len(text.strip().splitlines()) == 1 and "Traceback" not in text


def test_a_store_made_by_todays_create_all_is_stamped_at_the_head(store_target: str) -> None:
    from gpurent.store.samples import metadata

    engine = open_engine(store_target)
    metadata.create_all(engine)
    result = upgrade(engine)
    assert result.stamped_old_store and result.before_revision == result.after_revision == "0003"
    with engine.connect() as conn:
        assert current_revision(conn) == "0003"
    engine.dispose()


def test_a_store_at_0002_gains_the_fleet_tables_and_keeps_its_samples(store_target: str) -> None:
    """Revision 0003 adds `gpurent serve`'s fleet tables to a store a monitor recorded into."""
    upgrade(store_target)
    assert downgrade(store_target, revision="0002").after_revision == "0002"
    engine = open_engine(store_target)
    with engine.connect() as conn:
        assert not {"fleet_machines", "fleet_budgets", "fleet_alerts"} & set(
            sa.inspect(conn).get_table_names()
        )
    with engine.begin() as conn:
        insert_rows(conn, [{"timestamp": 5.0, "gpu": 0, "machine": "node-1"}])
    result = upgrade(engine)
    assert (result.before_revision, result.after_revision) == ("0002", "0003")
    with engine.connect() as conn:
        tables = set(sa.inspect(conn).get_table_names())
        assert [r["machine"] for r in select_rows(conn)] == ["node-1"]
    engine.dispose()
    assert {"fleet_machines", "fleet_budgets", "fleet_alerts"} <= tables
