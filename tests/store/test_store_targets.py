"""The PostgreSQL test target: skips without a server, fails under CI=true, leaves nothing."""

from __future__ import annotations

import pytest

from tests import store_targets


def test_without_a_server_the_postgresql_cases_skip_locally_and_fail_in_ci(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(store_targets.PG_URL_ENV, raising=False)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"\.ci/pg-up\.sh"):
        next(store_targets.fresh_pg_database())
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must run the PostgreSQL tests"):
        next(store_targets.fresh_pg_database())


def test_each_postgresql_case_gets_its_own_database_dropped_after(pg_url: str) -> None:
    import sqlalchemy as sa

    base = sa.engine.make_url(store_targets._pg_base_url())
    made = store_targets.fresh_pg_database()
    url = next(made)
    assert url != pg_url and sa.engine.make_url(url).database != base.database
    made.close()  # the test ends: its database goes
    admin = sa.create_engine(base)
    with admin.connect() as conn:
        names = {
            row[0] for row in conn.exec_driver_sql("SELECT datname FROM pg_database").fetchall()
        }
    admin.dispose()
    assert sa.engine.make_url(url).database not in names
    assert sa.engine.make_url(pg_url).database in names  # this test's own, dropped after it
