"""The store's tests run on SQLite and PostgreSQL (tests/store_targets.py)."""

from tests.store_targets import pg_url, store_target

__all__ = ["pg_url", "store_target"]
