"""The recorder: buffers sample rows and writes them to the store in bulk, with retention.

A store that cannot be written (full disk, read-only path, server down) never stops the monitor:
`flush()` keeps the rows in a bounded buffer (oldest dropped first, counted), returns a note saying
what failed, and retries on the next flush.
"""

from __future__ import annotations

import math
from collections import deque
from pathlib import Path
from typing import Any

from gpurent.errors import InputError
from gpurent.monitor.sample import Sample, to_rows


def check_retention_days(days: float) -> float:
    """`days` when it is a positive finite number; else InputError (a retention of 0 or less
    would delete the whole history, NaN or infinity none of it while saying otherwise)."""
    if not (math.isfinite(days) and days > 0):
        raise InputError(
            f"--retention-days must be a positive number of days, got {days}; records older "
            "than that are deleted (e.g. --retention-days 30)"
        )
    return days


class Recorder:
    """Buffers sample rows and writes them to the store in bulk, with retention."""

    def __init__(
        self,
        target: str | Path,
        *,
        retention_s: float | None = None,
        max_buffer_rows: int = 100_000,
        engine: Any = None,
    ) -> None:
        from gpurent.store import open_engine

        if retention_s is not None:
            check_retention_days(retention_s / 86400.0)
        self.target = str(target)
        self._engine = engine if engine is not None else open_engine(target)
        self._retention_s = retention_s
        self._buffer: deque[dict[str, Any]] = deque(maxlen=max_buffer_rows)
        self._ready = False
        self.written_rows = 0
        self.dropped_rows = 0
        self.retention_deleted_rows = 0
        self.last_error = ""

    def add(self, sample: Sample) -> None:
        """Buffer the sample's rows for the next write."""
        self.add_rows(to_rows(sample))

    def add_rows(self, rows: list[dict[str, Any]]) -> None:
        """Buffer rows for the next write, dropping those beyond the buffer's room."""
        room = (self._buffer.maxlen or 0) - len(self._buffer)
        self.dropped_rows += max(0, len(rows) - room)
        self._buffer.extend(rows)

    @property
    def pending_rows(self) -> int:
        """Rows buffered and not yet written."""
        return len(self._buffer)

    def flush(self, now_s: float | None = None) -> str | None:
        """Write buffered rows (and apply retention at `now_s`); a note on failure, else None."""
        import sqlalchemy as sa

        from gpurent.store import create_schema, delete_before, insert_rows
        from gpurent.store.db import without_password

        if not self._buffer and (now_s is None or self._retention_s is None):
            return None
        rows = list(self._buffer)
        deleted = 0
        try:
            if not self._ready:
                self._prepare_path()
                create_schema(self._engine)
                self._ready = True
            with self._engine.begin() as conn:
                insert_rows(conn, rows)
                if now_s is not None and self._retention_s is not None:
                    deleted = delete_before(conn, now_s - self._retention_s)
        except (sa.exc.SQLAlchemyError, OSError) as exc:
            message = without_password(str(getattr(exc, "orig", None) or exc).splitlines()[0])
            self.last_error = message
            return (
                f"store {without_password(self.target)}: cannot write ({message}); keeping "
                f"{len(rows)} rows in memory and retrying"
            )
        self._buffer.clear()
        self.written_rows += len(rows)
        self.retention_deleted_rows += deleted
        self.last_error = ""
        return None

    def _prepare_path(self) -> None:
        if "://" not in self.target:
            Path(self.target).expanduser().parent.mkdir(parents=True, exist_ok=True)

    def close(self) -> str | None:
        """Write what is buffered and close the store; return a note if the last write failed."""
        try:
            return self.flush()
        finally:  # also when the store refuses us (a newer gpurent's store)
            self._engine.dispose()
