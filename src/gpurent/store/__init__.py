"""Persistence through SQLAlchemy 2 Core: SQLite by default, PostgreSQL (or any SQLAlchemy URL).

Public API: `open_engine`, `upgrade` (schema migrations, `gpurent.store.migrations`),
`create_schema` (which upgrades), `samples_table`, `insert_rows`, `select_rows`, `delete_before`.
Imports sqlalchemy at import time: import this package lazily from CLI code. Without it, the
import raises a one-line `MissingExtraError` naming `gpurent[monitor]`.
"""

from gpurent.errors import require

require("sqlalchemy", "monitor")  # before the submodules, which import it at module level

from gpurent.store import fleet as _fleet  # noqa: E402, F401 - puts the fleet tables on metadata
from gpurent.store.db import open_engine, store_url  # noqa: E402
from gpurent.store.migrate import UpgradeResult, upgrade  # noqa: E402
from gpurent.store.samples import (  # noqa: E402
    create_schema,
    delete_before,
    insert_rows,
    samples_table,
    select_rows,
)

__all__ = [
    "UpgradeResult",
    "create_schema",
    "delete_before",
    "insert_rows",
    "open_engine",
    "samples_table",
    "select_rows",
    "store_url",
    "upgrade",
]
