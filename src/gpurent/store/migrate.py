"""Schema migrations in code: `upgrade` brings any store to the newest revision (Alembic).

A store made before migrations (the tables, no alembic_version) is stamped at the base revision
and upgraded in place, its rows kept (one whose tables already match the code's, made by this
gpurent's `metadata.create_all`, is stamped at the head). A store stamped with a revision this
gpurent does not know was made by a newer gpurent: an InputError, nothing touched. See
`gpurent.store.migrations`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from gpurent.errors import InputError, require
from gpurent.store.db import open_engine

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
"""The Alembic script folder shipped in the package (env.py, versions/)."""

BASE_REVISION = "0001"
"""The revision of a store made by `metadata.create_all` before migrations existed."""


@dataclass(frozen=True)
class UpgradeResult:
    """What `upgrade` did: the revision before (None: empty store), after, and whether an
    unversioned store (made by `create_all`) was recognised and stamped first (at the base, or
    at the head when its tables already match the code's)."""

    before_revision: str | None
    after_revision: str
    stamped_old_store: bool


def _config(conn: Any) -> Any:
    config_mod: Any = require("alembic.config", "monitor")
    config = config_mod.Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR).replace("%", "%%"))
    config.attributes["connection"] = conn
    return config


def head_revision() -> str:
    """The newest revision this gpurent knows."""
    script_mod: Any = require("alembic.script", "monitor")
    script = script_mod.ScriptDirectory.from_config(_config(None))
    return str(script.get_current_head())


def current_revision(conn: Any) -> str | None:
    """The store's revision (None when it has no alembic_version table or row)."""
    migration: Any = require("alembic.runtime.migration", "monitor")
    heads = migration.MigrationContext.configure(conn).get_current_heads()
    return str(heads[0]) if heads else None


def _matches_code(conn: Any) -> bool:
    """Whether the store's tables are exactly the ones in code (`metadata.create_all` of this
    gpurent, e.g. in a test), so that it is stamped at the head rather than the base."""
    autogenerate: Any = require("alembic.autogenerate", "monitor")
    migration: Any = require("alembic.runtime.migration", "monitor")
    from gpurent.store.samples import metadata

    context = migration.MigrationContext.configure(conn)
    return not autogenerate.compare_metadata(context, metadata)


def _upgrade_on(conn: Any, shown: str, revision: str, *, down: bool = False) -> UpgradeResult:
    command: Any = require("alembic.command", "monitor")
    script_mod: Any = require("alembic.script", "monitor")
    config = _config(conn)
    script = script_mod.ScriptDirectory.from_config(config)
    known = {rev.revision for rev in script.walk_revisions()}
    before = current_revision(conn)
    if before is not None and before not in known:
        raise InputError(
            f"store {shown}: made by a newer gpurent (schema revision {before!r}, this gpurent "
            f"knows up to {script.get_current_head()!r}); upgrade gpurent to use it"
        )
    stamped = False
    if before is None and sa.inspect(conn).has_table("monitor_samples"):
        # made by create_all: before migrations (the base), or of today's tables (the head)
        before = "heads" if _matches_code(conn) else BASE_REVISION
        command.stamp(config, before)
        before, stamped = str(current_revision(conn)), True
    if down:
        command.downgrade(config, revision)
    else:
        command.upgrade(config, revision)
    return UpgradeResult(before, str(current_revision(conn) or "base"), stamped)


def _run(target: Any, revision: str, *, down: bool) -> UpgradeResult:
    engine = target if isinstance(target, sa.engine.Engine) else open_engine(target)
    shown = str(engine.url.render_as_string(hide_password=True))
    try:
        with engine.begin() as conn:
            return _upgrade_on(conn, shown, revision, down=down)
    finally:
        if engine is not target:
            engine.dispose()


def upgrade(target: Any, *, revision: str = "head") -> UpgradeResult:
    """Bring the store at `target` (an Engine, a SQLite path or a SQLAlchemy URL) to `revision`
    (the newest by default) in one transaction; a no-op when it is there already."""
    return _run(target, revision, down=False)


def downgrade(target: Any, *, revision: str) -> UpgradeResult:
    """Take the store back to an older `revision` ("base" drops every table and its rows)."""
    return _run(target, revision, down=True)
