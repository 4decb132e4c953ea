"""Persistence through SQLAlchemy 2 Core: SQLite by default, PostgreSQL (or any SQLAlchemy URL).

Public API: `open_engine`, `samples_table`, `insert_rows`, `select_rows`, `delete_before`.
Imports sqlalchemy at import time: import this package lazily from CLI code.
"""

from gpurent.store.db import open_engine, store_url
from gpurent.store.samples import (
    create_schema,
    delete_before,
    insert_rows,
    samples_table,
    select_rows,
)

__all__ = [
    "create_schema",
    "delete_before",
    "insert_rows",
    "open_engine",
    "samples_table",
    "select_rows",
    "store_url",
]
