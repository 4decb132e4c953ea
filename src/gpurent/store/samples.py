"""The `monitor_samples` table: the flat sample rows of `gpurent.monitor.sample.COLUMNS`.

Its metric columns come from `gpurent.sample_columns`, shared with the monitor. The tables here
are the schema's head: a change to them needs a revision in `gpurent.store.migrations`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa

from gpurent.sample_columns import GPU_FLOAT_COLUMNS, GPU_INT_COLUMNS, HOST_COLUMNS

metadata = sa.MetaData()

samples_table = sa.Table(
    "monitor_samples",
    metadata,
    sa.Column("timestamp", sa.Float, nullable=False, index=True),  # Unix seconds
    sa.Column("gpu", sa.Integer, nullable=True),
    sa.Column("gpu_name", sa.String(128), nullable=False, default=""),
    sa.Column("gpu_uuid", sa.String(96), nullable=False, default=""),
    sa.Column("lost", sa.Boolean, nullable=False, default=False),
    *(sa.Column(name, sa.Float, nullable=True) for name in GPU_FLOAT_COLUMNS),
    *(sa.Column(name, sa.BigInteger, nullable=True) for name in GPU_INT_COLUMNS),
    sa.Column("xid", sa.String(256), nullable=False, default=""),
    *(sa.Column(name, sa.Float, nullable=True) for name in HOST_COLUMNS),
    sa.Column("sources_id", sa.Integer, nullable=False, default=0),
    # revision 0002: the rented machine the row came from ('' for rows from before it)
    sa.Column("machine", sa.String(128), nullable=False, default="", server_default=""),
    sa.Index("ix_monitor_samples_machine_timestamp", "machine", "timestamp"),
)
"""One row per GPU per sample (host metrics on every row); sources in their own table."""

# The per-metric source list is the same for nearly every row: stored once, referenced by id.
sources_table = sa.Table(
    "monitor_sources",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("text", sa.Text, nullable=False, unique=True),
)


def create_schema(engine: Any) -> None:
    """Bring the store to the newest schema (creating it, or migrating an older one in place)."""
    from gpurent.store.migrate import upgrade

    upgrade(engine)


_DEFAULTS: dict[str, Any] = {
    "gpu_name": "",
    "gpu_uuid": "",
    "lost": False,
    "xid": "",
    "machine": "",
}


def _source_ids(conn: Any, texts: set[str], *, attempts: int = 5) -> dict[str, int]:
    """The ids of the source lists `texts`, storing the new ones. Another writer storing the
    same list (or taking the same next id) at once makes ours fail: undone to a savepoint,
    read again and retried."""
    table = sources_table
    for attempt in range(attempts):
        known = {
            row.text: row.id
            for row in conn.execute(sa.select(table).where(table.c.text.in_(texts)))
        }
        missing = sorted(texts - set(known))
        if not missing:
            return known
        start = int(conn.execute(sa.select(sa.func.coalesce(sa.func.max(table.c.id), 0))).scalar())
        new = {text: start + 1 + i for i, text in enumerate(missing)}
        try:
            with conn.begin_nested():
                conn.execute(table.insert(), [{"id": i, "text": t} for t, i in new.items()])
        except sa.exc.IntegrityError:
            if attempt == attempts - 1:
                raise
            continue
        known.update(new)
        return known
    raise AssertionError("unreachable")  # pragma: no cover


def _converter(column: sa.Column[Any], dialect: str) -> Callable[[Any], Any] | None:
    """What makes a Python value fit `column` the same way on every backend (None: as it is).

    Text is cut to the column's length (PostgreSQL refuses longer, SQLite would keep it). Beyond
    SQLite, whose driver already does both: a flag given as 0/1 becomes a bool (PostgreSQL
    refuses an integer for BOOLEAN) and NaN becomes NULL (SQLite stores NULL, PostgreSQL NaN).
    """
    kind = column.type
    if isinstance(kind, sa.String) and kind.length is not None:
        length = kind.length
        return lambda v: v[:length] if isinstance(v, str) and len(v) > length else v
    if dialect == "sqlite":
        return None
    if isinstance(kind, sa.Boolean):
        return lambda v: v if v is None or isinstance(v, bool) else bool(v)
    if isinstance(kind, sa.Float):
        return lambda v: None if isinstance(v, float) and math.isnan(v) else v
    return None


_INSERTS: dict[tuple[str, str, bool], Any] = {}


def _compiled_insert(dialect: Any) -> Any:
    """The table's INSERT compiled for `dialect`, once per kind of dialect (compiling costs
    about 2 ms, as much as writing a push of 40 rows)."""
    key = (dialect.name, str(dialect.paramstyle), bool(dialect.positional))
    compiled = _INSERTS.get(key)
    if compiled is None:
        compiled = _INSERTS[key] = samples_table.insert().compile(dialect=dialect)
    return compiled


def insert_rows(conn: Any, rows: Sequence[dict[str, Any]]) -> int:
    """Bulk insert (one DBAPI executemany) of flat rows; returns the count.

    Goes below SQLAlchemy's per-row parameter processing (a compiled INSERT with positional
    tuples, each value made to fit its column by `_converter`); the ingest rate is measured by
    `benchmarks/bench_store_ingest.py`. The statement is compiled for the connection's dialect,
    so the same code serves SQLite (qmark) and PostgreSQL (psycopg's named parameters).
    """
    if not rows:
        return 0
    ids = _source_ids(conn, {str(r.get("sources") or "") for r in rows})
    compiled = _compiled_insert(conn.dialect)
    order = list(compiled.positiontup or compiled.params)
    get = _DEFAULTS.get
    columns = samples_table.c
    fits = [
        (i, fit)
        for i, k in enumerate(order)
        if (fit := _converter(columns[k], conn.dialect.name)) is not None
    ]
    sources_at = order.index("sources_id")
    params: list[tuple[Any, ...]] = []
    for r in rows:
        values = [r.get(k, get(k)) for k in order]
        for i, fit in fits:
            values[i] = fit(values[i])
        values[sources_at] = ids[str(r.get("sources") or "")]
        params.append(tuple(values))
    if not compiled.positional:
        params_named = [dict(zip(order, p, strict=True)) for p in params]
        conn.exec_driver_sql(str(compiled), params_named)
    else:
        conn.exec_driver_sql(str(compiled), params)
    return len(rows)


def select_rows(
    conn: Any,
    *,
    since_s: float | None = None,
    until_s: float | None = None,
    machine: str | None = None,
) -> list[dict[str, Any]]:
    """The sample rows in [since_s, until_s] (Unix seconds), oldest first, with their sources;
    only `machine`'s rows when it is given.

    Reads a store at an older revision as it is (a reader never migrates): a column it lacks
    reads as its default.
    """
    present = {c["name"] for c in sa.inspect(conn).get_columns(samples_table.name)}
    columns = [
        col if col.name in present else sa.literal(_DEFAULTS.get(col.name)).label(col.name)
        for col in samples_table.c
    ]
    query = (
        sa.select(*columns, sources_table.c.text.label("sources"))
        .select_from(samples_table)
        .join(sources_table, sources_table.c.id == samples_table.c.sources_id, isouter=True)
        .order_by(samples_table.c.timestamp, samples_table.c.gpu)
    )
    if since_s is not None:
        query = query.where(samples_table.c.timestamp >= since_s)
    if until_s is not None:
        query = query.where(samples_table.c.timestamp <= until_s)
    if machine is not None:
        query = query.where(samples_table.c.machine == machine)
    return [dict(row._mapping) for row in conn.execute(query)]


def count_rows(conn: Any, *, machine: str | None = None) -> int:
    """How many sample rows the store holds (only `machine`'s when it is given)."""
    query = sa.select(sa.func.count()).select_from(samples_table)
    if machine is not None:
        query = query.where(samples_table.c.machine == machine)
    return int(conn.execute(query).scalar() or 0)


def time_range(conn: Any) -> tuple[float | None, float | None]:
    """(first, last) timestamp in the store, Unix seconds; (None, None) when empty."""
    row = conn.execute(
        sa.select(sa.func.min(samples_table.c.timestamp), sa.func.max(samples_table.c.timestamp))
    ).one()
    return row[0], row[1]


def delete_before(conn: Any, cutoff_s: float) -> int:
    """Retention: drop rows older than `cutoff_s` (Unix seconds); returns how many."""
    result = conn.execute(samples_table.delete().where(samples_table.c.timestamp < cutoff_s))
    return int(result.rowcount or 0)
