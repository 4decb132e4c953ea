"""torchrun: a launch script for a fixed list of hosts (run the same script on each host)."""

from __future__ import annotations

import shlex

from gpurent.deploy.common import RDZV_PORT, RenderedFile, comment_block, run_line
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
        "exec "
        + run_line(
            spec,
            nnodes=str(spec.nodes),
            node_rank='"$NODE_RANK"',
            nproc=str(spec.procs_per_node),
            master_addr='"${HOSTS[0]}"',
        ),
    ]
    return (RenderedFile(FILE_NAME, "\n".join(lines) + "\n", 0o755),)
