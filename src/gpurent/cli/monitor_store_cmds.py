"""`gpurent monitor store upgrade --db DB`: bring a monitor store's schema to this gpurent's.

Every writer (`gpurent monitor --record`) upgrades on its first write; this runs it by hand,
e.g. before pointing several machines at one PostgreSQL store. sqlalchemy and alembic are
imported inside the command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from gpurent.cli.common import cli_errors, console
from gpurent.errors import DataError, InputError, require

store_app = typer.Typer(help="The monitor store's schema: `upgrade` migrates it, keeping its rows.")


@store_app.command("upgrade")
@cli_errors
def upgrade_cmd(
    *,
    db: str = typer.Option(..., "--db", help="The store: SQLite path or SQLAlchemy URL."),
) -> None:
    """Migrate the store to the newest schema in place (its rows kept); a no-op when it is.

    Example: gpurent monitor store upgrade --db postgresql+psycopg://me@db-host/gpurent
    """
    from gpurent.store import upgrade  # names the extra if it is missing
    from gpurent.store.db import without_password

    sa: Any = require("sqlalchemy", "monitor")
    if "://" not in db and not Path(db).expanduser().is_file():
        raise InputError(f"--db {db}: no such file; a store is made by `gpurent monitor --record`")
    try:
        result = upgrade(db)
    except sa.exc.SQLAlchemyError as exc:
        raise DataError(
            f"--db {without_password(db)}: cannot upgrade the store "
            f"({without_password(str(exc).splitlines()[0])})"
        ) from None
    db = without_password(db)
    if result.before_revision == result.after_revision and not result.stamped_old_store:
        console.print(f"store {db}: already at {result.after_revision}", highlight=False)
        return
    how = (
        f" (made before migrations: stamped {result.before_revision} first)"
        if result.stamped_old_store
        else ""
    )
    console.print(
        f"store {db}: {result.before_revision or 'empty'} -> {result.after_revision}{how}",
        highlight=False,
        soft_wrap=True,
    )
