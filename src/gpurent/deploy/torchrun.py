"""torchrun: a launch script for a fixed list of hosts (run the same script on each host).

Several hosts: the script sets the torchrun-style variables (`PET_NNODES`, `PET_NODE_RANK`,
`PET_MASTER_ADDR`, `PET_MASTER_PORT`) and execs `gpurent run --nodes auto`, which starts
torchrun and restarts the whole job; the checkpoint directory must be storage every host sees
(the sync directory lies in it), named per run by $GPURENT_JOB_ID (default: the job's name).
"""

from __future__ import annotations

import shlex

from gpurent.deploy.common import (
    RDZV_PORT,
    RenderedFile,
    comment_block,
    multi_node_run_line,
    run_line,
)
from gpurent.deploy.spec import DeploySpec
from gpurent.errors import InputError

FILE_NAME = "launch.sh"


def render_torchrun(spec: DeploySpec) -> tuple[RenderedFile, ...]:
    """`launch.sh`: on each host, `NODE_RANK=i ./launch.sh` (or the host's position in HOSTS).
    Several nodes need the host list (`--hosts`); one node runs on localhost."""
    hosts = spec.hosts
    if (spec.multi_node or hosts) and len(hosts) != spec.nodes:
        raise InputError(
            f"torchrun: the plan's candidate {spec.candidate_index} has {spec.nodes} nodes; a "
            f"fixed-host launch needs their addresses: give --hosts with {spec.nodes} names "
            "(comma list), or use --format skypilot|dstack|slurm|kubernetes, which find them"
        )
    host_list = hosts or ("127.0.0.1",)
    lines = [
        "#!/bin/bash",
        comment_block(spec, "torchrun launch script").rstrip("\n"),
        f"# Hosts: {', '.join(host_list)}; the first is the rendezvous (port {RDZV_PORT}).",
        "set -euo pipefail",
        f"HOSTS=({' '.join(shlex.quote(h) for h in host_list)})",
        'if [ -z "${NODE_RANK:-}" ]; then',
        "  NODE_RANK=0",
        '  for i in "${!HOSTS[@]}"; do',
        '    case " $(hostname) $(hostname -I 2>/dev/null) " in *" ${HOSTS[$i]} "*) NODE_RANK=$i;;'
        " esac",
        "  done",
        "fi",
        f"export GPURENT_CHECKPOINT_DIR={shlex.quote(spec.checkpoint_dir)}",
        f"mkdir -p {shlex.quote(spec.checkpoint_dir)}",
        *_launch(spec),
    ]
    return (RenderedFile(FILE_NAME, "\n".join(lines) + "\n", 0o755),)


def _launch(spec: DeploySpec) -> list[str]:
    if not spec.multi_node:
        line = run_line(
            spec,
            nnodes="1",
            node_rank='"$NODE_RANK"',
            nproc=str(spec.procs_per_node),
            master_addr='"${HOSTS[0]}"',
        )
        return ["exec " + line]
    line = multi_node_run_line(
        spec,
        nproc=str(spec.procs_per_node),
        node_rank='"$NODE_RANK"',
        job_id='"$GPURENT_JOB_ID"',
    )
    return [
        "# gpurent run --nodes auto reads these (its torchrun case); the same GPURENT_JOB_ID on",
        "# every host names this run's sync directory (give a new one for a new run).",
        f'export PET_NNODES={spec.nodes} PET_NODE_RANK="$NODE_RANK"',
        f'export PET_MASTER_ADDR="${{HOSTS[0]}}" PET_MASTER_PORT={RDZV_PORT}',
        f'export GPURENT_JOB_ID="${{GPURENT_JOB_ID:-{spec.name}}}"',
        "exec " + line,
    ]
