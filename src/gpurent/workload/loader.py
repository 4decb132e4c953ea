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
import tomllib
from pathlib import Path
from typing import Any

from gpurent.catalog.precision import parse_precision
from gpurent.errors import GpurentError, InputError
from gpurent.workload.models import custom_llm, get_model
from gpurent.workload.presets import preset
from gpurent.workload.spec import (
    LlmShape,
    Optimizer,
    Task,
    Workload,
    parse_recompute,
    parse_sharding,
    parse_stack,
)

_INT = {
    "batch_size_per_gpu",
    "seq_len",
    "dataset_samples",
    "output_tokens",
    "tensor_parallel",
    "pipeline_parallel",
    "virtual_pipeline_stages",
    "context_parallel",
    "gradient_accumulation",
    "lora_rank",
}
_FLOAT = {"epochs", "token_budget"}
_BOOL = {"activation_checkpointing", "cpu_offload", "sequence_parallel", "fused_loss"}
_ALIASES = {
    "batch_size": "batch_size_per_gpu",
    "batch": "batch_size_per_gpu",
    "tp": "tensor_parallel",
    "pp": "pipeline_parallel",
    "vp": "virtual_pipeline_stages",
    "cp": "context_parallel",
    "sp": "sequence_parallel",
    "grad_accum": "gradient_accumulation",
}


def _enum(cls: Any, value: Any, key: str, where: str) -> Any:
    try:
        return cls(str(value).strip().lower())
    except ValueError:
        known = ", ".join(m.value for m in cls)
        raise InputError(f"{where}: {key} {value!r} is not one of {known}") from None


def _shape(value: dict[str, Any], where: str) -> LlmShape:
    ints = {"layers", "hidden", "heads", "vocab", "kv_heads", "ffn_hidden"}
    flags = {"gated_mlp", "tied_embeddings"}
    extra = set(value) - ints - flags
    if extra:
        raise InputError(f"{where}: unknown shape field(s) {', '.join(sorted(extra))}")
    missing = {"layers", "hidden", "heads", "vocab"} - set(value)
    if missing:
        raise InputError(f"{where}: shape lacks {', '.join(sorted(missing))}")
    kv = value.get("kv_heads")
    ffn = value.get("ffn_hidden")
    return LlmShape(
        layers=int(value["layers"]),
        hidden=int(value["hidden"]),
        heads=int(value["heads"]),
        vocab=int(value["vocab"]),
        kv_heads=int(kv) if kv is not None else None,
        ffn_hidden=int(ffn) if ffn is not None else None,
        gated_mlp=bool(value.get("gated_mlp", False)),
        tied_embeddings=bool(value.get("tied_embeddings", True)),
    )


def _located(exc: GpurentError, where: str) -> GpurentError:
    """`exc` as an InputError whose message starts with `where: ` (once)."""
    return exc if exc.message.startswith(where) else InputError(f"{where}: {exc.message}")


def workload_from_mapping(raw: dict[str, Any], where: str) -> Workload:
    """Validate a mapping of Workload fields (as from a file) into a Workload; every error
    message starts with `where`."""
    data = dict(raw.get("workload", raw))
    try:
        base = preset(str(data.pop("preset"))) if "preset" in data else None
    except GpurentError as exc:
        raise _located(exc, where) from None
    fields: dict[str, Any] = {}
    for key, value in data.items():
        key = _ALIASES.get(key, key)
        try:
            if key in _INT:
                fields[key] = None if value is None else int(value)
            elif key in _FLOAT:
                fields[key] = None if value is None else float(value)
            elif key in _BOOL:
                if not isinstance(value, bool):
                    raise InputError(f"{where}: {key} must be true or false, got {value!r}")
                fields[key] = value
            elif key == "task":
                fields[key] = _enum(Task, value, key, where)
            elif key == "optimizer":
                fields[key] = _enum(Optimizer, value, key, where)
            elif key == "sharding":
                try:
                    fields[key] = parse_sharding(str(value))
                except ValueError as exc:
                    raise InputError(f"{where}: {exc}") from None
            elif key == "recompute":
                try:
                    fields[key] = parse_recompute(str(value))
                except ValueError as exc:
                    raise InputError(f"{where}: {exc}") from None
            elif key == "precision":
                fields[key] = parse_precision(str(value))
            elif key == "stack":
                fields[key] = parse_stack(str(value))
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
    """Read a TOML (.toml) or YAML (.yaml/.yml) workload file."""
    import yaml  # lazy: keeps `gpurent estimate` start-up short

    p = Path(path)
    text = p.read_text(encoding="utf-8")
    try:
        if p.suffix.lower() == ".toml":
            raw: Any = tomllib.loads(text)
        elif p.suffix.lower() in (".yaml", ".yml"):
            raw = yaml.safe_load(text)
        else:
            raise InputError(f"{p}: workload files end in .toml, .yaml or .yml")
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{p}: not valid TOML ({exc})") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{p}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(raw, dict):
        raise InputError(f"{p}: expected a table of workload fields")
    wl = workload_from_mapping(raw, str(p))
    return wl if wl.name else dataclasses.replace(wl, name=p.stem)
