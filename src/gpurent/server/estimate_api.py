"""POST /api/estimate: one workload on one GPU count, the document of `gpurent estimate --json`."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from gpurent.catalog import get_gpu, parse_precision
from gpurent.catalog.links import parse_estimated_link
from gpurent.errors import InputError
from gpurent.estimate.calibration_file import load_estimator
from gpurent.inputs import values as v
from gpurent.plan.layouts import with_layout_hint
from gpurent.server.params import check, required
from gpurent.workload import get_model, preset
from gpurent.workload.loader import FIELD_CHECKS
from gpurent.workload.models import default_precision
from gpurent.workload.spec import Task, Workload

router = APIRouter(prefix="/api", tags=["estimate"])


class EstimateRequest(BaseModel):
    """The fields of `gpurent estimate`'s flags of the same names (a subset for now)."""

    model_config = ConfigDict(extra="forbid")

    gpu: str = Field(description="A GPU name or alias, e.g. H100.", max_length=200)
    gpus: int = Field(1, description="Total number of GPUs.")
    nodes: int = Field(1, description="Nodes the GPUs are spread over.")
    model: str | None = Field(None, description="A model-zoo name.", max_length=200)
    preset: str | None = Field(None, description="A workload preset.", max_length=200)
    precision: str | None = Field(None, description="fp32, tf32, amp, bf16, fp8, ...")
    batch_size: int | None = Field(None, description="Micro-batch per GPU.")
    seq_len: int | None = Field(None, description="Tokens per sequence (LLMs).")
    task: str | None = Field(None, description="training, finetune-lora, inference, ...")
    interconnect: str | None = Field(None, description="nvlink or pcie inside a node.")
    inter_node_gbps: float | None = Field(None, description="Network between nodes, Gbit/s.")
    no_measured: bool = Field(False, description="Ignore your stored calibration.")


def _workload(req: EstimateRequest) -> Workload:
    """The workload as `gpurent estimate` builds it from --preset/--model and the overrides."""
    if req.preset is not None:
        wl = preset(req.preset)
    elif req.model is not None:
        info = get_model(req.model)
        wl = Workload(
            model=info.name,
            precision=parse_precision(req.precision) if req.precision else default_precision(info),
            batch_size_per_gpu=info.default_batch_size,
            shape=info.llm if req.model.lower().startswith("custom:") else None,
        )
    else:
        raise InputError('give model or preset (e.g. {"preset": "llama-lora"})')
    changes: dict[str, Any] = {}
    if req.model is not None and req.preset is not None:
        changes["model"] = get_model(req.model).name
    if req.precision is not None:
        changes["precision"] = parse_precision(req.precision)
    if req.batch_size is not None:
        changes["batch_size_per_gpu"] = check(
            req.batch_size, "batch_size", FIELD_CHECKS["batch_size_per_gpu"]
        )
    if req.seq_len is not None:
        changes["seq_len"] = check(req.seq_len, "seq_len", FIELD_CHECKS["seq_len"])
    if req.task is not None:
        try:
            changes["task"] = Task(req.task.lower())
        except ValueError:
            raise InputError(
                f"task {req.task!r}: one of {', '.join(t.value for t in Task)}"
            ) from None
    return replace(wl, **changes)


@router.post("/estimate", summary="Throughput, memory and time (as `gpurent estimate --json`)")
def estimate(req: EstimateRequest) -> dict[str, Any]:
    """One configuration's estimate, the document `gpurent estimate --json` prints."""
    gpus = required(req.gpus, "gpus", v.bounded(v.positive_int, most=v.MAX_GPUS))
    nodes = required(req.nodes, "nodes", v.bounded(v.positive_int, most=v.MAX_NODES))
    inter_node = check(req.inter_node_gbps, "inter_node_gbps", v.bounded(v.positive, most=1e6))
    link = parse_estimated_link(req.interconnect, "interconnect") if req.interconnect else None
    wl = _workload(req)
    gpu = get_gpu(req.gpu)
    estimator = load_estimator(use_calibration=not req.no_measured)
    est = estimator.estimate(
        wl, gpu, gpus, nodes=nodes, inter_node_gbps=inter_node, intra_node_interconnect=link
    )
    est = with_layout_hint(estimator, est, wl, gpu=gpu, nodes=nodes, inter_node_gbps=inter_node)
    return est.to_json()
