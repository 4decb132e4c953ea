"""The store's schema migrations (Alembic), run in code by `gpurent.store.upgrade`.

No alembic.ini: `gpurent.store.migrate` builds an `alembic.config.Config` whose script_location
is this folder, hands Alembic the open connection (`config.attributes["connection"]`), and
`env.py` runs the revisions in `versions/` on it. Shipped as package data (pyproject's
`[tool.setuptools.package-data]`: `store/migrations/*.mako`; the .py files are modules).

Revisions: `versions/rev_0001_samples.py` is the schema every gpurent before migrations made with
`metadata.create_all` (monitor_samples, monitor_sources); a store with those tables and no
`alembic_version` table is stamped at 0001, then upgraded (its rows kept); one whose tables
already match the code's (this gpurent's `metadata.create_all`) is stamped at the head. Each
later revision changes the schema one step.

How to add a revision (e.g. new tables beside `gpurent.store.samples.metadata`):
1. Change the tables in code (the `sa.Table` on `gpurent.store.samples.metadata`).
2. Add `versions/rev_NNNN_what.py` (copy the newest one; `script.py.mako` is the template):
   `revision = "NNNN"`, `down_revision` = the previous head, and `upgrade()` / `downgrade()`
   written with `alembic.op` and literal column lists (a revision is frozen: never import the
   live tables into it, they will change again). New NOT NULL columns on old tables need a
   `server_default` so old rows get a value; SQLite alters tables only through
   `op.batch_alter_table` for anything beyond adding a column.
3. Test it the way `tests/store/test_migrations.py` does: build a store at the previous revision,
   insert rows, upgrade, check rows and the new schema, on SQLite and PostgreSQL. Its
   `test_head_matches_the_tables_in_code` fails until the revision matches the code's tables.
"""

__all__: list[str] = []
