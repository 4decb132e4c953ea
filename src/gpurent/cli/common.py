"""Shared CLI glue: one-line errors, JSON output, consoles, comma lists and durations."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import functools
import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from gpurent.errors import GpurentError

P = ParamSpec("P")
R = TypeVar("R")

console = Console()
err_console = Console(stderr=True)

_DURATION = re.compile(
    r"^\s*(\d+(?:\.\d+)?)\s*(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|weeks?)?\s*$"
)
_UNIT_S = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}


def read_duration_s(text: str, *, bare_unit: str | None = "h") -> float | None:
    """Seconds in a duration such as '3d', '72h', '90min', '1.5w', '3600s' or '2 hours', or
    None when `text` is not one. A bare number is in `bare_unit` ('s', 'm', 'h', 'd', 'w'), or
    is not a duration when `bare_unit` is None (where a bare number means something else)."""
    match = _DURATION.match(text.lower())
    if not match or (match.group(2) is None and bare_unit is None):
        return None
    unit = (match.group(2) or bare_unit or "h")[0]
    return float(match.group(1)) * _UNIT_S[unit]


def split_list(values: str | Iterable[str] | None) -> tuple[str, ...]:
    """Comma-separated items of one option value, or of a repeated option's values; blanks
    dropped, whitespace stripped."""
    if values is None:
        return ()
    items = [values] if isinstance(values, str) else list(values)
    return tuple(v.strip() for item in items for v in item.split(",") if v.strip())


def fail(message: str, exit_code: int = 1) -> typer.Exit:
    """Print `error: message` on stderr and return the Exit to raise."""
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(exit_code)


def cli_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn gpurent errors and OS errors into one line on stderr and a non-zero exit code."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except GpurentError as exc:
            raise fail(exc.message, exc.exit_code) from None
        except FileNotFoundError as exc:
            raise fail(f"no such file: {exc.filename}; check the path", 2) from None
        except IsADirectoryError as exc:
            raise fail(f"{exc.filename} is a directory; give a file", 2) from None
        except PermissionError as exc:
            raise fail(f"permission denied: {exc.filename}", 1) from None
        except KeyboardInterrupt:
            raise fail("interrupted", 130) from None

    return wrapper


def to_jsonable(obj: Any) -> Any:
    """Dataclasses, enums, paths, tuples and non-finite floats to plain JSON values."""
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


def print_json(obj: Any) -> None:
    """Write `obj` as indented JSON to stdout (bypassing rich, so the output stays parseable)."""
    sys.stdout.write(json.dumps(to_jsonable(obj), indent=2) + "\n")
    sys.stdout.flush()


def print_json_line(obj: Any) -> None:
    sys.stdout.write(json.dumps(to_jsonable(obj), separators=(",", ":")) + "\n")
