"""dstack: one task configuration (`dstack apply -f .dstack.yml`).

Several nodes: every node runs `gpurent run --nodes auto` ($DSTACK_NODE_RANK,
$DSTACK_MASTER_NODE_IP), which restarts the whole job; the sync directory is named after
$DSTACK_RUN_NAME, which a retried run keeps.
"""

from __future__ import annotations

import math
from typing import Any

from gpurent.deploy.common import (
    RenderedFile,
    comment_block,
    dump_yaml,
    multi_node_run_line,
    pip_install_line,
    run_line,
)
from gpurent.deploy.spec import PRICE_MARGIN, DeploySpec
from gpurent.errors import InputError

FILE_NAME = ".dstack.yml"
# A GPU below this utilisation for the whole window is a stuck or idle job: dstack stops it
# rather than bill an idle cluster (the guide's waste rule; docs/monitor.md uses the same 10%).
MIN_GPU_UTILIZATION_PERCENT = 10
UTILIZATION_WINDOW = "30m"
RETRY_DURATION = "1d"

# gpurent provider -> dstack backend (dstack 0.22 BackendType).
BACKENDS = {
    "aws": "aws",
    "azure": "azure",
    "gcp": "gcp",
    "lambda": "lambda",
    "nebius": "nebius",
    "oci": "oci",
    "runpod": "runpod",
    "vast": "vastai",
    "verda": "verda",
    "datacrunch": "verda",
    "tensordock": "tensordock",
    "cudo": "cudo",
    "digitalocean": "digitalocean",
    "vultr": "vultr",
    "crusoe": "crusoe",
    "jarvislabs": "jarvislabs",
    "hotaisle": "hotaisle",
    "cloudrift": "cloudrift",
}


def _duration(seconds: float) -> str:
    return f"{math.ceil(seconds / 60)}m"


def _job_line(spec: DeploySpec) -> str:
    if spec.multi_node:
        return multi_node_run_line(
            spec,
            nproc=str(spec.procs_per_node),
            node_rank='"$DSTACK_NODE_RANK"',
            job_id='"$DSTACK_RUN_NAME"',
        )
    return run_line(
        spec,
        nnodes="$DSTACK_NODES_NUM",
        node_rank="$DSTACK_NODE_RANK",
        nproc="$DSTACK_GPUS_PER_NODE",
        master_addr="$DSTACK_MASTER_NODE_IP",
    )


def task_document(spec: DeploySpec) -> dict[str, Any]:
    """The dstack task as a mapping; InputError if dstack has no backend for the provider."""
    backend = BACKENDS.get(spec.provider)
    if backend is None:
        raise InputError(
            f"dstack: no dstack backend for provider {spec.provider!r} (candidate "
            f"{spec.candidate_index}); choose another --candidate or --format"
        )
    gpu: dict[str, Any] = {"name": [spec.gpu_short_name], "count": spec.gpus_per_node}
    if spec.gpu_memory_gib > 0:
        gpu["memory"] = f"{spec.gpu_memory_gib:g}GB"
    doc: dict[str, Any] = {
        "type": "task",
        "name": spec.name,
        "nodes": spec.nodes,
        "python": "3.11",
        "env": [f"GPURENT_CHECKPOINT_DIR={spec.checkpoint_dir}"],
        "commands": [pip_install_line(spec), _job_line(spec)],
        "resources": {"gpu": gpu, "disk": f"{spec.storage_gb_per_node:g}GB"},
        "backends": [backend],
        "regions": [spec.region],
        "instance_types": [spec.instance_type],
        "spot_policy": "spot" if spec.spot else "on-demand",
        "max_price": spec.max_price_usd_per_hour(),
        "retry": {"on_events": ["interruption", "error"], "duration": RETRY_DURATION},
        "utilization_policy": {
            "min_gpu_utilization": MIN_GPU_UTILIZATION_PERCENT,
            "time_window": UTILIZATION_WINDOW,
        },
    }
    limit = spec.time_limit_s()
    if limit is not None:
        doc["max_duration"] = _duration(limit)
    return doc


def render_dstack(spec: DeploySpec) -> tuple[RenderedFile, ...]:
    """The dstack task file for the spec, with its price and duration limits noted."""
    note = (
        f"max_price: the plan's ${spec.price_usd_per_hour:g}/h + {PRICE_MARGIN:.0%}; "
        "max_duration: wall time + 25% + 30 min."
    )
    text = comment_block(spec, "dstack task") + f"# {note}\n" + dump_yaml(task_document(spec))
    return (RenderedFile(FILE_NAME, text),)
