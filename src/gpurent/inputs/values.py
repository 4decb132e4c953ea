"""One validator per kind of value: what a flag, a workload field or a CSV cell may hold.

Every validator takes the raw value (a float or int from a flag or a TOML/YAML/JSON file, or a
string from a CSV cell) and `where` (the flag, or `file:line: field`, it came from) and returns
the checked value or raises `InputError` with one line `<where> must be ..., got ...`. NaN and
infinity never pass; booleans are not numbers; integers reject fractional values (3.7) rather
than truncating them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from gpurent.errors import DataError, InputError

T = TypeVar("T")

# The largest magnitude any gpurent quantity may have in its unit (tokens, GB, hours, USD...):
# beyond it floats lose the integer precision the estimator and the cost sums rely on, and
# intermediate products overflow to infinity.
MAX_FLOAT = 1e18
# The smallest positive quantity: below it products underflow to 0 and divisions overflow.
MIN_POSITIVE = 1e-9
# The largest count (batch size, sequence length, samples, steps) read as an integer.
MAX_INT = 10**15

_INT_TEXT = re.compile(r"[+-]?\d{1,18}")

Validator = Callable[[object, str], object]


def _number(value: object, where: str) -> float:
    if isinstance(value, bool):
        raise InputError(f"{where} must be a number, got {value!r}")
    if isinstance(value, int):
        return float(value) if abs(value) <= MAX_FLOAT else (math.inf if value > 0 else -math.inf)
    if isinstance(value, float):
        return value
    if isinstance(value, str):
        text = value.strip()
        try:
            return float(text)
        except ValueError:
            pass
    raise InputError(f"{where} must be a number, got {_show(value)}")


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def finite(value: object, where: str, *, most: float = MAX_FLOAT) -> float:
    """A finite number of magnitude at most `most`."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > most:
        raise InputError(f"{where} must be at most {most:g}, got {_shown_int(value)}")
    v = _number(value, where)
    if not math.isfinite(v):
        raise InputError(f"{where} must be a finite number, got {_show(value)}")
    if abs(v) > most:
        raise InputError(f"{where} must be at most {most:g}, got {v:g}")
    return v


def positive(
    value: object, where: str, *, most: float = MAX_FLOAT, least: float | None = None
) -> float:
    """A finite number >= `least` (default `MIN_POSITIVE`; larger where a smaller amount means
    nothing, such as a fraction of a token) and <= `most`."""
    v = finite(value, where, most=most)
    if v <= 0:
        raise InputError(f"{where} must be > 0, got {v:g}")
    least = MIN_POSITIVE if least is None else least
    if v < least:
        raise InputError(f"{where} must be at least {least:g}, got {v:g}")
    return v


def non_negative(value: object, where: str, *, most: float = MAX_FLOAT) -> float:
    """A finite number >= 0 and <= `most`."""
    v = finite(value, where, most=most)
    if v < 0:
        raise InputError(f"{where} must be >= 0, got {v:g}")
    return v


def fraction(value: object, where: str) -> float:
    """A finite number in [0, 1]."""
    v = finite(value, where)
    if not 0 <= v <= 1:
        raise InputError(f"{where} must be between 0 and 1, got {v:g}")
    return v


def percent(value: object, where: str) -> float:
    """A finite number in [0, 100]."""
    v = finite(value, where)
    if not 0 <= v <= 100:
        raise InputError(f"{where} must be between 0 and 100, got {v:g}")
    return v


def integer(value: object, where: str, *, least: int = 0, most: int = MAX_INT) -> int:
    """A whole number in [least, most]: 4, 4.0 and "4" pass; 3.7, true, "abc", nan and inf
    do not."""
    if isinstance(value, bool):
        raise InputError(f"{where} must be a whole number, got {value!r}")
    if isinstance(value, int):
        return _in_range(value, where, least, most)
    if isinstance(value, str) and _INT_TEXT.fullmatch(value.strip()):
        return _in_range(int(value.strip()), where, least, most)
    v = _number(value, where)
    if not math.isfinite(v) or not v.is_integer():
        raise InputError(f"{where} must be a whole number, got {_show(value)}")
    return _in_range(int(v), where, least, most)


_TRUE = frozenset({"true", "yes", "y", "1"})
_FALSE = frozenset({"false", "no", "n", "0"})


def boolean(value: object, where: str, *, text: bool = False) -> bool:
    """True or false. With `text` (a CSV cell, where every value is a string) the words
    true/false, yes/no, y/n, 1/0 (any case) pass too; in a typed file (TOML, YAML, JSON) only
    the file's own booleans do."""
    if isinstance(value, bool):
        return value
    if text and isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
    raise InputError(f"{where} must be true or false, got {_show(value)}")


def _shown_int(n: int) -> str:
    return str(n) if abs(n) <= MAX_INT else f"{float(n):g}" if abs(n) < 1e300 else "a huge number"


def _in_range(n: int, where: str, least: int, most: int) -> int:
    shown = _shown_int(n)
    if n < least:
        raise InputError(f"{where} must be >= {least}, got {shown}")
    if n > most:
        raise InputError(f"{where} must be at most {most}, got {shown}")
    return n


def positive_int(value: object, where: str, *, most: int = MAX_INT) -> int:
    """A whole number >= 1 and <= `most`."""
    return integer(value, where, least=1, most=most)


def non_negative_int(value: object, where: str, *, most: int = MAX_INT) -> int:
    """A whole number >= 0 and <= `most`."""
    return integer(value, where, least=0, most=most)


# Documented bounds on counts (docs/inputs.md): far above any real job, low enough that no
# loop, array or product over them runs for minutes or overflows.
MAX_GPUS = 100_000  # GPUs in one job (the largest clusters)
MAX_NODES = 10_000  # instances in one job
MAX_BATCH = 10_000_000  # micro-batch per GPU
MAX_SEQ_LEN = 100_000_000  # tokens per sequence
MAX_PARALLEL = 4096  # tensor-/pipeline-parallel degree
MAX_EPOCHS = 1e6
MIN_EPOCHS = 1e-6  # a millionth of an epoch: less underflows the cost to nothing
MAX_HOURS = 87_600.0  # ten years: job, deadline and trace lengths in hours
MAX_SECONDS = MAX_HOURS * 3600.0  # timeouts, intervals, checkpoint and restart times
MAX_STARTS = 10_000  # runs of `spot simulate`
MAX_TOP = 10_000  # rows of a ranked table


def blank(value: object) -> bool:
    """True for a missing cell: None, or a string of whitespace only."""
    return value is None or (isinstance(value, str) and not value.strip())


def optional_finite(value: object, where: str, *, most: float = MAX_FLOAT) -> float | None:
    """None for a blank cell (`blank`), else `finite`."""
    return None if blank(value) else finite(value, where, most=most)


def optional_non_negative(value: object, where: str, *, most: float = MAX_FLOAT) -> float | None:
    """None for a blank cell (`blank`), else `non_negative`."""
    return None if blank(value) else non_negative(value, where, most=most)


def finite_list(values: object, where: str) -> tuple[float, ...]:
    """A non-empty list of finite numbers; the bad item is named `where[i]`."""
    if not isinstance(values, Sequence) or isinstance(values, str | bytes) or not values:
        raise InputError(f"{where} must be a non-empty list of numbers, got {_show(values)}")
    return tuple(finite(v, f"{where}[{i}]") for i, v in enumerate(values))


def in_data_file(check: Callable[..., T], value: object, where: str, **limits: Any) -> T:
    """`check(value, where, **limits)` for a cell of a data file (a trace, recorded samples):
    the same one-line message, raised as `DataError` (exit 1) rather than `InputError`."""
    try:
        return check(value, where, **limits)
    except InputError as exc:
        raise DataError(exc.message) from None


def bounded(check: Callable[..., Any], **limits: Any) -> Validator:
    """`check` with fixed limits, e.g. `bounded(positive_int, most=MAX_GPUS)`."""

    def run(value: object, where: str) -> object:
        return check(value, where, **limits)

    return run
