"""Alembic's environment: runs the revisions on the connection `gpurent.store.migrate` passes.

Loaded by Alembic (never imported by gpurent): `context.config.attributes["connection"]` is an
open SQLAlchemy Connection inside the caller's transaction.
"""

from __future__ import annotations

from alembic import context

from gpurent.store.samples import metadata


def run_migrations() -> None:
    """Configure Alembic on the caller's connection and run the migrations it asked for."""
    connection = context.config.attributes["connection"]
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


run_migrations()
