"""Engines: a path means a SQLite file (WAL journal, synchronous=NORMAL for ingest speed); a
string with `://` is used as a SQLAlchemy URL (e.g. postgresql+psycopg://user@host/db).
Only SQLite is tested here; PostgreSQL works through the same Core statements in principle."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa


def store_url(target: str | Path, *, read_only: bool = False) -> str:
    text = str(target)
    if "://" in text:
        return text
    path = Path(text).expanduser()
    if read_only:
        # SQLite's URI form opens the file as it is: no journal-mode switch, no write, so a
        # report over the wrong file can never turn it into a database.
        return f"sqlite:///file:{path}?mode=ro&uri=true"
    return f"sqlite:///{path}"


def open_engine(target: str | Path, *, read_only: bool = False) -> Any:
    """A SQLAlchemy Engine for a path or URL. Creates no file until first use; with
    `read_only`, a SQLite file is opened read-only and left byte for byte as it was."""
    url = store_url(target, read_only=read_only)
    engine = sa.create_engine(url)
    if url.startswith("sqlite") and not read_only:

        @sa.event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

    return engine
