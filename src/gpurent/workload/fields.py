"""Raw values -> typed `Workload` fields: the one converter behind workload files, CSV rows and
the CLI's workload flags.

Each field's check is derived from its type hint in `Workload` (and `LlmShape` for `[shape]`):
whole numbers and floats through `gpurent.inputs.values` with the bounds in `NUMBER_CHECKS`,
booleans through `values.boolean`, enums through `gpurent.inputs.choices.parse_choice` (with
each enum's aliases), `LlmShape` as a nested table, strings as given. A field whose hint allows
None may be null. Keys may be the short names of `KEY_ALIASES` (`tp`, `batch`); an unknown key
is an error that names it. Every message starts with where the value came from: `file: key`,
`file:line: column`, or the flag (`--batch-size`).
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Mapping
from enum import Enum
from typing import Any

from gpurent.catalog.precision import PRECISION_ALIASES, Precision
from gpurent.errors import InputError, closest
from gpurent.inputs import values as v
from gpurent.inputs.choices import parse_choice
from gpurent.inputs.values import Validator
from gpurent.workload.spec import (
    RECOMPUTE_ALIASES,
    SHARDING_ALIASES,
    STACK_ALIASES,
    AttentionKernel,
    LlmShape,
    Recompute,
    Sharding,
    Stack,
    Workload,
)

# Bounds of the numeric fields (docs/inputs.md); a numeric field not listed is a positive
# number of its type.
NUMBER_CHECKS: dict[str, Validator] = {
    "batch_size_per_gpu": v.bounded(v.positive_int, most=v.MAX_BATCH),
    "seq_len": v.bounded(v.positive_int, most=v.MAX_SEQ_LEN),
    "dataset_samples": v.positive_int,
    "output_tokens": v.bounded(v.positive_int, most=v.MAX_SEQ_LEN),
    "tensor_parallel": v.bounded(v.positive_int, most=v.MAX_PARALLEL),
    "pipeline_parallel": v.bounded(v.positive_int, most=v.MAX_PARALLEL),
    "virtual_pipeline_stages": v.bounded(v.positive_int, most=v.MAX_PARALLEL),
    "context_parallel": v.bounded(v.positive_int, most=v.MAX_PARALLEL),
    "expert_parallel": v.bounded(v.positive_int, most=v.MAX_PARALLEL),
    "gradient_accumulation": v.bounded(v.positive_int, most=v.MAX_BATCH),
    "lora_rank": v.bounded(v.positive_int, most=v.MAX_BATCH),
    "epochs": v.bounded(v.positive, least=v.MIN_EPOCHS, most=v.MAX_EPOCHS),
    "token_budget": v.bounded(v.positive, least=1.0),
}
SHAPE_CHECKS: dict[str, Validator] = {
    "layers": v.bounded(v.positive_int, most=100_000),
    "hidden": v.bounded(v.positive_int, most=10_000_000),
    "heads": v.bounded(v.positive_int, most=1_000_000),
    "vocab": v.bounded(v.positive_int, most=100_000_000),
    "kv_heads": v.bounded(v.positive_int, most=1_000_000),
    "ffn_hidden": v.bounded(v.positive_int, most=100_000_000),
}
# The `[shape]` fields a file may give: the dense shape (mixture-of-experts and head_dim
# shapes come from the zoo, whose entries are checked against their papers).
SHAPE_KEYS = frozenset({*SHAPE_CHECKS, "gated_mlp", "tied_embeddings"})
# Short names a file, a CSV header or a flag may use for a Workload field.
KEY_ALIASES: dict[str, str] = {
    "batch_size": "batch_size_per_gpu",
    "batch": "batch_size_per_gpu",
    "tp": "tensor_parallel",
    "pp": "pipeline_parallel",
    "vp": "virtual_pipeline_stages",
    "cp": "context_parallel",
    "ep": "expert_parallel",
    "sp": "sequence_parallel",
    "grad_accum": "gradient_accumulation",
}
_CHOICE_ALIASES: dict[type[Enum], Mapping[str, Any]] = {
    Precision: PRECISION_ALIASES,
    Stack: STACK_ALIASES,
    Sharding: SHARDING_ALIASES,
    Recompute: RECOMPUTE_ALIASES,
}
_WHAT: dict[type[Enum], str] = {Stack: "software stack", AttentionKernel: "attention kernel"}


@dataclasses.dataclass(frozen=True, slots=True)
class _Field:
    name: str
    kind: type  # int, float, bool, str, an Enum, or LlmShape
    nullable: bool  # the hint allows None
    required: bool  # no default


@functools.cache
def _spec(cls: type) -> dict[str, _Field]:
    """The fields of dataclass `cls`, each with its kind from the type hint."""
    hints = typing.get_type_hints(cls)
    out: dict[str, _Field] = {}
    for f in dataclasses.fields(cls):
        args = typing.get_args(hints[f.name])
        kinds = [a for a in args if a is not type(None)] if args else [hints[f.name]]
        if len(kinds) != 1:
            raise TypeError(f"{cls.__name__}.{f.name}: one type (or it and None) expected")
        no_default = f.default is dataclasses.MISSING
        required = no_default and f.default_factory is dataclasses.MISSING
        out[f.name] = _Field(f.name, kinds[0], type(None) in args, required)
    return out


def workload_keys() -> frozenset[str]:
    """Every key a workload mapping may hold: the Workload's fields and `KEY_ALIASES`."""
    return frozenset(_spec(Workload)) | frozenset(KEY_ALIASES)


def workload_fields(
    raw: Mapping[str, object],
    where: str,
    *,
    flags: Mapping[str, str] | None = None,
    text: bool = False,
) -> dict[str, Any]:
    """Typed Workload fields from `raw` (keys: field names or `KEY_ALIASES`), for
    `dataclasses.replace` or `Workload(**...)`.

    Messages name `where: key` (`key` as written), or `flags[field]` where given (the CLI
    passes the flag each field came from). `text`: every value is a string (a CSV cell), so
    booleans may be spelt yes/no, 1/0 too.
    """
    return _convert(Workload, raw, where, flags=flags, text=text, checks=NUMBER_CHECKS)


def _convert(
    cls: type,
    raw: Mapping[str, object],
    where: str,
    *,
    flags: Mapping[str, str] | None,
    text: bool,
    checks: Mapping[str, Validator],
    prefix: str = "",
) -> dict[str, Any]:
    spec = _spec(cls)
    if cls is LlmShape:
        spec = {name: f for name, f in spec.items() if name in SHAPE_KEYS}
    aliases = KEY_ALIASES if cls is Workload else {}
    named: dict[str, tuple[str, object]] = {}  # field -> (key as written, value)
    unknown: list[str] = []
    for key, value in raw.items():
        name = aliases.get(str(key), str(key))
        if name in named:
            first = named[name][0]
            raise InputError(f"{where}: {first} and {key} both set {name}; give one of them")
        if name in spec:
            named[name] = (str(key), value)
        else:
            unknown.append(str(key))
    if unknown:
        raise InputError(f"{where}: {_unknown(unknown, [*spec, *aliases], prefix)}")
    if prefix:  # a nested table must be whole; the top level may be completed by a preset
        missing = [f.name for f in spec.values() if f.required and f.name not in named]
        if missing:
            raise InputError(f"{where}: {prefix.rstrip('.')} lacks {', '.join(missing)}")
    out: dict[str, Any] = {}
    for name, (key, value) in named.items():
        at = flags[name] if flags and name in flags else f"{where}: {prefix}{key}"
        out[name] = _value(spec[name], value, at, where, text=text, checks=checks)
    return out


def _unknown(keys: list[str], known: list[str], prefix: str) -> str:
    kind = f"{prefix.rstrip('.')} field" if prefix else "field"
    if len(keys) > 1:
        return f"unknown {kind}s {', '.join(map(repr, keys))}"
    hint = closest(keys[0], known, n=1)
    return f"unknown {kind} {keys[0]!r}" + (f"; did you mean {hint[0]}?" if hint else "")


def _value(
    field: _Field,
    value: object,
    at: str,
    where: str,
    *,
    text: bool,
    checks: Mapping[str, Validator],
) -> object:
    kind = field.kind
    if value is None:
        if field.nullable:
            return None
        expected = {int: "a number", float: "a number", bool: "true or false"}.get(kind, "given")
        raise InputError(f"{at} must be {expected}, got null")
    if kind is bool:
        return v.boolean(value, at, text=text)
    if kind is int or kind is float:
        default = v.positive_int if kind is int else v.positive
        return checks.get(field.name, default)(value, at)
    if issubclass(kind, Enum):
        what = _WHAT.get(kind, field.name)
        return parse_choice(kind, value, what=what, where=at, aliases=_CHOICE_ALIASES.get(kind))
    if kind is str:
        return str(value)
    if kind is LlmShape:
        if isinstance(value, LlmShape):
            return value
        if not isinstance(value, Mapping):
            raise InputError(f"{at} must be a table of layers/hidden/heads/vocab")
        shape = _convert(
            LlmShape, value, where, flags=None, text=text, checks=SHAPE_CHECKS, prefix="shape."
        )
        return LlmShape(**shape)
    raise TypeError(f"no converter for {kind!r} ({field.name})")  # a new field type: add one


__all__ = [
    "KEY_ALIASES",
    "NUMBER_CHECKS",
    "SHAPE_CHECKS",
    "SHAPE_KEYS",
    "workload_fields",
    "workload_keys",
]
