"""SkyPilot: one task YAML (`sky launch task.yaml`, or `sky jobs launch` for managed spot jobs).

`resources.ordered` lists the chosen candidate first, then the plan's other top candidates with
the same node count on clouds SkyPilot knows (SkyPilot tries them in that order); the run step
reads the GPUs per node from SkyPilot's environment, so every entry runs the same command.
Several nodes: every node runs `gpurent run --nodes auto` ($SKYPILOT_NODE_RANK, the first of
$SKYPILOT_NODE_IPS), which restarts the whole job; the sync directory is named after
$SKYPILOT_TASK_ID, which a managed job keeps across its recoveries.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gpurent.deploy.common import (
    RenderedFile,
    comment_block,
    dump_yaml,
    multi_node_run_line,
    pip_install_line,
    run_line,
)
from gpurent.deploy.spec import DeploySpec, Placement
from gpurent.errors import InputError

FILE_NAME = "task.yaml"
MAX_ORDERED = 5
AUTOSTOP_IDLE_MINUTES = 10
MAX_RESTARTS_ON_ERRORS = 3

# gpurent provider -> SkyPilot cloud name (sky/clouds in skypilot 0.14).
CLOUDS = {
    "aws": "aws",
    "gcp": "gcp",
    "azure": "azure",
    "lambda": "lambda",
    "nebius": "nebius",
    "oci": "oci",
    "runpod": "runpod",
    "vast": "vast",
    "verda": "verda",
    "datacrunch": "verda",
    "shadeform": "shadeform",
    "fluidstack": "fluidstack",
    "cudo": "cudo",
    "paperspace": "paperspace",
    "hyperbolic": "hyperbolic",
    "digitalocean": "do",
    "ibm": "ibm",
    "scp": "scp",
}


def _entry(p: Placement, zone: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "cloud": CLOUDS[p.provider],
        "region": p.region,
        "instance_type": p.instance_type,
        "use_spot": p.spot,
    }
    if zone:
        entry["zone"] = zone
    return entry


def task_document(spec: DeploySpec) -> dict[str, Any]:
    """The SkyPilot task as a mapping; InputError if SkyPilot has no cloud for the provider."""
    if spec.provider not in CLOUDS:
        raise InputError(
            f"skypilot: SkyPilot has no cloud for provider {spec.provider!r} (candidate "
            f"{spec.candidate_index}); choose a candidate on {', '.join(sorted(set(CLOUDS)))} "
            "with --candidate, or another --format"
        )
    ordered = [_entry(spec.placement, spec.zone)]
    for p in spec.fallbacks:
        if len(ordered) >= MAX_ORDERED:
            break
        if p.provider in CLOUDS and p.spot == spec.spot:
            ordered.append(_entry(p))
    resources: dict[str, Any] = {
        "disk_size": round(spec.storage_gb_per_node),
        "autostop": {"idle_minutes": AUTOSTOP_IDLE_MINUTES, "down": True},
    }
    if spec.spot:
        resources["job_recovery"] = {
            "strategy": "EAGER_NEXT_REGION",
            "max_restarts_on_errors": MAX_RESTARTS_ON_ERRORS,
        }
    if spec.multi_node:
        resources["network_tier"] = "best"
    resources["ordered"] = ordered
    mount = spec.checkpoint_dir
    most_gpus = max(
        [spec.gpus_per_node] + [p.gpus_per_node for p in spec.fallbacks if p.provider in CLOUDS]
    )
    if spec.multi_node:
        run = multi_node_run_line(
            spec,
            nproc="auto",  # $SKYPILOT_NUM_GPUS_PER_NODE, which differs between ordered entries
            node_rank='"$SKYPILOT_NODE_RANK"',
            job_id='"$SKYPILOT_TASK_ID"',
        )
    else:
        run = run_line(
            replace(spec, procs_per_node=max(spec.procs_per_node, most_gpus)),
            nnodes="$SKYPILOT_NUM_NODES",
            node_rank="$SKYPILOT_NODE_RANK",
            nproc="$SKYPILOT_NUM_GPUS_PER_NODE",
            master_addr='"$(echo "$SKYPILOT_NODE_IPS" | head -n 1)"',
        )
    return {
        "name": spec.name,
        "num_nodes": spec.nodes,
        "resources": resources,
        "envs": {"GPURENT_CHECKPOINT_DIR": mount},
        "file_mounts": {mount: {"name": f"{spec.name}-checkpoints", "mode": "MOUNT_CACHED"}},
        "setup": pip_install_line(spec) + "\n",
        "run": "set -euo pipefail\n" + run + "\n",
    }


def render_skypilot(spec: DeploySpec) -> tuple[RenderedFile, ...]:
    """The SkyPilot task file for the spec."""
    text = comment_block(spec, "SkyPilot task") + dump_yaml(task_document(spec))
    return (RenderedFile(FILE_NAME, text),)
