"""The one JSON conversion: leaves pass through, non-finite floats become null, enums a value."""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from pathlib import Path

from gpurent.report.jsonable import to_jsonable


class Colour(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


@dataclasses.dataclass(frozen=True)
class Row:
    name: str
    rate_per_s: float
    count: int
    ok: bool
    colour: Colour
    level: Level
    where: Path
    parts: tuple[float, ...]


def test_leaves_enums_and_non_finite_floats() -> None:
    row = Row("a", math.inf, 2, True, Colour.RED, Level.HIGH, Path("/x/y"), (1.5, math.nan))
    out = to_jsonable({"row": row, 1: [None, -math.inf]})
    assert out == {
        "row": {
            "name": "a",
            "rate_per_s": None,
            "count": 2,
            "ok": True,
            "colour": "red",
            "level": 3,
            "where": "/x/y",
            "parts": [1.5, None],
        },
        "1": [None, None],
    }
    assert type(out["row"]["level"]) is int  # an IntEnum is written as its plain value
    json.dumps(out, allow_nan=False)  # strict JSON: no NaN or Infinity left
