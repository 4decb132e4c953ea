"""Points in time as users and data files write them: ISO 8601 or epoch seconds.

One parser for every reader (spot traces, price histories, `monitor report --since/--until`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gpurent.errors import DataError


def is_number(cell: str) -> bool:
    """Whether `float()` accepts the text (so also `nan`, `inf`, `1e3`)."""
    try:
        float(cell)
    except ValueError:
        return False
    return True


def parse_time(cell: Any, where: str) -> datetime:
    """ISO 8601 (with `Z` or an offset; naive means UTC) or epoch seconds, as an aware datetime.

    `where` (file:line, or the flag) leads the error message."""
    s = str(cell).strip()
    if is_number(s):
        try:
            return datetime.fromtimestamp(float(s), tz=UTC)
        except (ValueError, OverflowError, OSError):  # nan, inf, or beyond year 9999
            raise DataError(
                f"{where}: epoch seconds {s!r} are not a time between 1970 and 9999"
            ) from None
    try:
        t = datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        raise DataError(
            f"{where}: bad timestamp {s!r}; use ISO 8601 (2023-02-15 22:08:00, "
            "2022-05-31T18:20:41Z) or epoch seconds"
        ) from None
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)
