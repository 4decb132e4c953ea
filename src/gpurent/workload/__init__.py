"""What the user wants to run: workloads, the model zoo and presets.

Public API: `Workload`, `AttentionKernel`, `Task`, `Optimizer`, `Sharding`, `Recompute`,
`Stack` (+ `parse_task`, `parse_optimizer`, `parse_sharding`, `parse_recompute`,
`parse_stack`), `LlmShape`, `ModelInfo`,
`get_model`, `list_models`, `preset`, `list_presets`, `load_workload`, `workload_from_mapping`.
"""

from gpurent.workload.loader import load_workload, workload_from_mapping
from gpurent.workload.models import get_model, list_models, parse_shape
from gpurent.workload.presets import list_presets, preset
from gpurent.workload.spec import (
    AttentionKernel,
    LlmShape,
    Optimizer,
    Recompute,
    Sharding,
    Stack,
    Task,
    Workload,
    parse_optimizer,
    parse_recompute,
    parse_sharding,
    parse_stack,
    parse_task,
)
from gpurent.workload.zoo import ModelInfo

__all__ = [
    "AttentionKernel",
    "LlmShape",
    "ModelInfo",
    "Optimizer",
    "Recompute",
    "Sharding",
    "Stack",
    "Task",
    "Workload",
    "get_model",
    "list_models",
    "list_presets",
    "load_workload",
    "parse_optimizer",
    "parse_recompute",
    "parse_shape",
    "parse_sharding",
    "parse_stack",
    "parse_task",
    "preset",
    "workload_from_mapping",
]
