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
from pathlib import Path
from typing import Any

from gpurent.errors import GpurentError, InputError
from gpurent.inputs import files
from gpurent.workload.fields import NUMBER_CHECKS, workload_fields
from gpurent.workload.models import custom_llm, get_model
from gpurent.workload.presets import preset
from gpurent.workload.spec import Workload

# One validator per numeric field, shared with the CLI flags that set the same fields (the
# bounds live with the converter, `gpurent.workload.fields`).
FIELD_CHECKS = NUMBER_CHECKS


def _located(exc: GpurentError, where: str) -> GpurentError:
    """`exc` as an InputError whose message starts with `where: ` (once)."""
    return exc if exc.message.startswith(where) else InputError(f"{where}: {exc.message}")


def workload_from_mapping(raw: dict[str, Any], where: str, *, text: bool = False) -> Workload:
    """Validate a mapping of Workload fields (as from a file, or a CSV row with `text`) into a
    Workload (`gpurent.workload.fields.workload_fields`); every error message starts with
    `where`."""
    table = raw.get("workload", raw)
    if not isinstance(table, dict):
        raise InputError(f"{where}: `workload` must be a table of workload fields")
    data = dict(table)
    try:
        base = preset(str(data.pop("preset"))) if "preset" in data else None
    except GpurentError as exc:
        raise _located(exc, where) from None
    fields = workload_fields(data, where, text=text)
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
    raw: Any = files.read_toml_or_yaml(p, "workload file")
    if not isinstance(raw, dict):
        raise InputError(f"{p}: expected a table of workload fields")
    wl = workload_from_mapping(raw, str(p))
    return wl if wl.name else dataclasses.replace(wl, name=p.stem)
