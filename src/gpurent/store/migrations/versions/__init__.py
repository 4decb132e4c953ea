"""The revisions, one module each, oldest first (Alembic loads them by path)."""

__all__: list[str] = []
