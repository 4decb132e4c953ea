"""Workloads from TOML or YAML files (edge module: reads the file, then validates purely).

A file holds the Workload fields at top level (or under a `[workload]` table), e.g.

    model = "llama3-8b"
    task = "finetune-lora"
    precision = "bf16"
    batch_size_per_gpu = 4
    seq_len = 2048
    token_budget = 1e8
    activation_checkpointing = true

A `preset = "llama-lora"` key starts from that preset and overrides the rest. A custom LLM gives
`[shape]` with layers, hidden, heads, vocab (and optionally kv_heads, ffn_hidden, gated_mlp).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpurent.catalog.precision import parse_precision
from gpurent.errors import GpurentError, InputError
from gpurent.inputs import files
from gpurent.inputs import values as v
from gpurent.inputs.values import Validator
from gpurent.workload.models import custom_llm, get_model
from gpurent.workload.presets import preset
from gpurent.workload.spec import (
    LlmShape,
    Workload,
    parse_optimizer,
    parse_recompute,
    parse_sharding,
    parse_stack,
    parse_task,
)

# One validator per numeric field, shared with the CLI flags that set the same fields.
FIELD_CHECKS: dict[str, Validator] = {
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
# Fields that may be null (not given): the rest always have a value.
_OPTIONAL = {"seq_len", "dataset_samples", "epochs", "token_budget", "output_tokens"}
_SHAPE_CHECKS: dict[str, Validator] = {
    "layers": v.bounded(v.positive_int, most=100_000),
    "hidden": v.bounded(v.positive_int, most=10_000_000),
    "heads": v.bounded(v.positive_int, most=1_000_000),
    "vocab": v.bounded(v.positive_int, most=100_000_000),
    "kv_heads": v.bounded(v.positive_int, most=1_000_000),
    "ffn_hidden": v.bounded(v.positive_int, most=100_000_000),
}
_BOOL = {"activation_checkpointing", "cpu_offload", "sequence_parallel", "fused_loss"}
# Fields naming one of a closed set: the parser of each (`gpurent.inputs.choices`).
_CHOICES: dict[str, Callable[[str, str], object]] = {
    "task": parse_task,
    "optimizer": parse_optimizer,
    "sharding": parse_sharding,
    "recompute": parse_recompute,
    "precision": parse_precision,
    "stack": parse_stack,
}
_ALIASES = {
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


def _flag(value: Any, key: str, where: str) -> bool:
    if not isinstance(value, bool):
        raise InputError(f"{where}: {key} must be true or false, got {value!r}")
    return value


def _shape(value: dict[str, Any], where: str) -> LlmShape:
    flags = {"gated_mlp", "tied_embeddings"}
    extra = set(value) - set(_SHAPE_CHECKS) - flags
    if extra:
        raise InputError(f"{where}: unknown shape field(s) {', '.join(sorted(map(str, extra)))}")
    missing = {"layers", "hidden", "heads", "vocab"} - set(value)
    if missing:
        raise InputError(f"{where}: shape lacks {', '.join(sorted(missing))}")
    ints: dict[str, Any] = {
        k: check(value[k], f"{where}: shape.{k}")
        for k, check in _SHAPE_CHECKS.items()
        if value.get(k) is not None
    }
    return LlmShape(
        **ints,
        gated_mlp=_flag(value.get("gated_mlp", False), "shape.gated_mlp", where),
        tied_embeddings=_flag(value.get("tied_embeddings", True), "shape.tied_embeddings", where),
    )


def _located(exc: GpurentError, where: str) -> GpurentError:
    """`exc` as an InputError whose message starts with `where: ` (once)."""
    return exc if exc.message.startswith(where) else InputError(f"{where}: {exc.message}")


def workload_from_mapping(raw: dict[str, Any], where: str) -> Workload:
    """Validate a mapping of Workload fields (as from a file) into a Workload; every error
    message starts with `where`."""
    table = raw.get("workload", raw)
    if not isinstance(table, dict):
        raise InputError(f"{where}: `workload` must be a table of workload fields")
    data = dict(table)
    try:
        base = preset(str(data.pop("preset"))) if "preset" in data else None
    except GpurentError as exc:
        raise _located(exc, where) from None
    fields: dict[str, Any] = {}
    for key, value in data.items():
        key = _ALIASES.get(key, key)
        try:
            if key in FIELD_CHECKS:
                if value is None and key not in _OPTIONAL:
                    raise InputError(f"{where}: {key} must be a number, got null")
                fields[key] = None if value is None else FIELD_CHECKS[key](value, f"{where}: {key}")
            elif key in _BOOL:
                fields[key] = _flag(value, key, where)
            elif key in _CHOICES:
                fields[key] = _CHOICES[key](str(value), f"{where}: {key}")
            elif key in ("model", "name"):
                fields[key] = str(value)
            elif key == "shape":
                if not isinstance(value, dict):
                    raise InputError(f"{where}: shape must be a table of layers/hidden/heads/vocab")
                fields[key] = _shape(value, where)
            else:
                raise InputError(f"{where}: unknown field {key!r}")
        except GpurentError as exc:
            raise _located(exc, where) from None
        except (TypeError, ValueError) as exc:
            raise InputError(f"{where}: bad value for {key} ({exc})") from None
    if base is None and "model" not in fields:
        raise InputError(f"{where}: needs a model (or a preset)")
    wl = dataclasses.replace(base, **fields) if base is not None else Workload(**fields)
    try:  # a zoo name (NotFoundError lists the closest) or a shape the estimator accepts
        if wl.shape is None:
            get_model(wl.model)
        else:
            custom_llm(wl.shape, name=wl.model)
    except GpurentError as exc:
        raise _located(exc, where) from None
    return wl


def load_workload(path: str | Path) -> Workload:
    """Read a TOML (.toml) or YAML (.yaml/.yml) workload file (a regular file of at most
    `MAX_CONFIG_BYTES`, UTF-8)."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in (".toml", ".yaml", ".yml"):
        raise InputError(f"{files.shown(p)}: workload files end in .toml, .yaml or .yml")
    text = files.read_text(p, limit_bytes=files.MAX_CONFIG_BYTES, what="workload file")
    where = files.shown(p)
    raw: Any = files.parse_toml(text, where) if suffix == ".toml" else files.parse_yaml(text, where)
    if not isinstance(raw, dict):
        raise InputError(f"{p}: expected a table of workload fields")
    wl = workload_from_mapping(raw, str(p))
    return wl if wl.name else dataclasses.replace(wl, name=p.stem)
