"""Engines: a path means a SQLite file (WAL journal, synchronous=NORMAL for ingest speed); a
string with `://` is used as a SQLAlchemy URL (e.g. postgresql+psycopg://user@host/db).
Only SQLite is tested here; PostgreSQL works through the same Core statements in principle."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from gpurent.errors import InputError


def store_url(target: str | Path, *, read_only: bool = False) -> str:
    """A SQLAlchemy URL for `target`: a URL as it is, a path as SQLite (read-only if asked)."""
    text = str(target)
    if "://" in text:
        return text
    path = Path(text).expanduser()
    if read_only:
        # SQLite's URI form opens the file as it is: no journal-mode switch, no write, so a
        # report over the wrong file can never turn it into a database.
        return f"sqlite:///file:{path}?mode=ro&uri=true"
    return f"sqlite:///{path}"


def shown_url(url: str) -> str:
    """The URL for a message: a password (user:secret@) replaced by ***."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)


def open_engine(target: str | Path, *, read_only: bool = False) -> Any:
    """A SQLAlchemy Engine for a path or URL. Creates no file until first use; with
    `read_only`, a SQLite file is opened read-only and left byte for byte as it was."""
    url = store_url(target, read_only=read_only)
    shown = shown_url(url)
    try:
        engine = sa.create_engine(url)
    except sa.exc.NoSuchModuleError:
        raise InputError(
            f"{shown}: unknown database kind {url.split('://')[0]!r}; give a SQLite file path or "
            "a SQLAlchemy URL such as postgresql+psycopg://user@host/db"
        ) from None
    except sa.exc.ArgumentError as exc:
        raise InputError(f"{shown}: not a database URL ({str(exc).splitlines()[0]})") from None
    except ImportError as exc:
        raise InputError(
            f"{shown}: the database driver {exc.name or 'module'!r} is not installed; "
            f"`pip install {exc.name or 'the driver'}` or use a SQLite file"
        ) from None
    if url.startswith("sqlite") and not read_only:

        @sa.event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

    return engine
