"""One parser for every named choice (an enum value) a flag, a workload field or a CSV cell holds.

`parse_choice(Task, "finetune-lora", what="task", where="--task")` returns `Task.FINETUNE_LORA`;
an unknown name raises `NotFoundError` (an `InputError`, exit 2) with one line of one shape:

    --task: unknown task 'trainin'; did you mean training? (one of training, finetune-full, ...)

Names match case-insensitively and with surrounding spaces ignored; `aliases` maps other
spellings ("fsdp") onto members. "Did you mean" suggests the closest values (the closest
aliases where no value is close); "one of" lists the values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import Enum
from functools import cache
from typing import TypeVar

from gpurent.errors import NotFoundError, closest

E = TypeVar("E", bound=Enum)


def parse_choice(
    enum_type: type[E],
    text: object,
    *,
    what: str,
    where: str | None = None,
    aliases: Mapping[str, E] | None = None,
    only: Iterable[E] | None = None,
) -> E:
    """The member of `enum_type` that `text` names (its value, or a key of `aliases`).

    `only` narrows the members accepted (e.g. the two links the estimator models);
    `what` names the kind in the message and `where` (a flag, or `file:line: field`) starts it.
    """
    allowed = list(enum_type) if only is None else list(only)
    if isinstance(text, enum_type) and text in allowed:
        return text
    key = str(text).strip().lower()
    found = _by_value(enum_type).get(key)
    if isinstance(found, enum_type) and found in allowed:
        return found  # a value names its member before any alias, as below
    by_name: dict[str, E] = {str(m.value).lower(): m for m in allowed}
    for alias, member in (aliases or {}).items():
        if member in allowed:
            by_name.setdefault(alias.strip().lower(), member)
    if key in by_name:
        return by_name[key]
    values = [str(m.value) for m in allowed]
    # suggest the canonical names; an alias only where no canonical name is close
    known = values if closest(str(text), values) else list(by_name)
    raise NotFoundError(what, str(text), known, where=where, choices=values)


@cache
def _by_value(enum_type: type[Enum]) -> dict[str, Enum]:
    """Each member of an enum by its lower-case value (an enum's members never change)."""
    return {str(m.value).lower(): m for m in enum_type}


def parse_choices(
    enum_type: type[E],
    text: str,
    *,
    what: str,
    where: str,
    aliases: Mapping[str, E] | None = None,
) -> tuple[E, ...]:
    """A comma list of choices (`--pricing on-demand,spot`), each as `parse_choice`; empty
    parts are dropped."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    return tuple(parse_choice(enum_type, p, what=what, where=where, aliases=aliases) for p in parts)


__all__ = ["parse_choice", "parse_choices"]
