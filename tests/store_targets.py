"""Store targets for tests that run on both backends: a SQLite file, and a fresh database on the
PostgreSQL server named by GPURENT_TEST_PG_URL (.ci/pg-up.sh starts one; .ci/run exports it).

Without that variable the PostgreSQL cases skip, and fail under CI=true (so CI never silently
skips them). Each test gets its own database, dropped when the test ends.

Use: `from tests.store_targets import store_target` in a conftest.py, then take `store_target`
(a str: a path or a URL) in a test; `pg_url` alone for PostgreSQL-only tests.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

PG_URL_ENV = "GPURENT_TEST_PG_URL"
BACKENDS = ("sqlite", "postgresql")


def _pg_base_url() -> str:
    url = os.environ.get(PG_URL_ENV, "").strip()
    if not url:
        reason = f"{PG_URL_ENV} is not set: start a server with .ci/pg-up.sh (root, Debian)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason}; CI must run the PostgreSQL tests (.ci/run starts it)")
        pytest.skip(reason)
    return url


def fresh_pg_database() -> Iterator[str]:
    """A new, empty database on the test server (its URL), dropped afterwards."""
    import sqlalchemy as sa

    base = sa.engine.make_url(_pg_base_url())
    name = f"gpurent_t_{uuid.uuid4().hex[:16]}"
    admin = sa.create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        yield base.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


@pytest.fixture(params=BACKENDS)
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Where a store lives: a SQLite file path, or a fresh PostgreSQL database's URL."""
    if request.param == "sqlite":
        yield str(tmp_path / "store.db")
    else:
        yield from fresh_pg_database()


@pytest.fixture()
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database's URL (skips, or fails under CI=true, without a server)."""
    yield from fresh_pg_database()
