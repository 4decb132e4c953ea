"""Request values checked with the same validators as the CLI's flags (gpurent.inputs.values)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from gpurent.inputs.values import Validator

T = TypeVar("T")


def check(value: T | None, where: str, validator: Validator) -> T | None:
    """`value` through `validator` (an InputError naming `where` when it fails); None passes."""
    if value is None:
        return None
    checked: T = validator(value, where)  # type: ignore[assignment]
    return checked


def items(values: Iterable[str] | None) -> tuple[str, ...]:
    """Items of a repeated or comma-separated parameter, blanks dropped, whitespace stripped."""
    return tuple(p.strip() for value in values or () for p in value.split(",") if p.strip())


def required(value: T, where: str, validator: Validator) -> T:
    """`value` (given) through `validator`."""
    checked: T = validator(value, where)  # type: ignore[assignment]
    return checked
