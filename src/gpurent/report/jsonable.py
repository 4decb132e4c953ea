"""Result objects as plain JSON values: the one conversion behind every `--json` and the API."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def to_jsonable(obj: Any) -> Any:
    """Dataclasses, enums, paths, tuples and non-finite floats to plain JSON values.

    An object with a `json_view()` method (e.g. a monitor finding, whose text is rendered from
    its figures) is written as what that method returns."""
    kind = type(obj)
    if kind is str or kind is int or kind is bool or obj is None:
        return obj  # the common leaves first: most of a long result's values
    if kind is float:
        return obj if math.isfinite(obj) else None
    view = getattr(obj, "json_view", None)
    if callable(view) and not isinstance(obj, type):
        return to_jsonable(view())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set | frozenset):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, dt.datetime | dt.date):
        return obj.isoformat()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj
