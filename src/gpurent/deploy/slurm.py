"""Slurm: one sbatch script that starts `srun` + torchrun under `gpurent run` on every node.

Stable API (used by the multi-node `gpurent run` tests): `render_slurm(spec, options)` returns
the files to write; `SlurmOptions` holds what Slurm needs and a plan does not say.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from gpurent.deploy.common import RenderedFile, comment_block, run_line
from gpurent.deploy.spec import DeploySpec

SCRIPT_NAME = "job.sbatch"


@dataclass(frozen=True, slots=True, kw_only=True)
class SlurmOptions:
    """`partition`: the partition to submit to (None: the cluster's default). `requeue`: None
    follows the plan (spot/preemptible: --requeue). `gpus`: False leaves out --gpus-per-node
    (CPU-only clusters, tests). `extra_directives`: more `#SBATCH` lines, verbatim."""

    partition: str | None = None
    requeue: bool | None = None
    gpus: bool = True
    extra_directives: tuple[str, ...] = ()


def slurm_time(seconds: float) -> str:
    """Slurm's D-HH:MM:SS, whole minutes rounded up."""
    minutes = int(-(-seconds // 60))
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    return f"{days}-{hours:02d}:{mins:02d}:00"


def render_slurm(
    spec: DeploySpec, options: SlurmOptions = SlurmOptions()
) -> tuple[RenderedFile, ...]:
    """The sbatch script for `spec` (`sbatch job.sbatch`)."""
    directives = [
        f"--job-name={spec.name}",
        f"--nodes={spec.nodes}",
        "--ntasks-per-node=1",
    ]
    if options.gpus and spec.gpus_per_node > 0:
        directives.append(f"--gpus-per-node={spec.gpus_per_node}")
    limit = spec.time_limit_s()
    if limit is not None:
        directives.append(f"--time={slurm_time(limit)}")
    if options.partition:
        directives.append(f"--partition={options.partition}")
    requeue = spec.spot if options.requeue is None else options.requeue
    if requeue:
        directives.append("--requeue")
        directives.append("--open-mode=append")
    directives.append("--output=%x-%j.out")
    body = [
        "#!/bin/bash",
        comment_block(spec, "Slurm batch script").rstrip("\n"),
        "# Time limit: the plan's wall time + 25% + 30 min of set-up, whole minutes."
        if limit is not None
        else "# No time limit: the plan has no amount of work (the partition's default applies).",
        *(f"#SBATCH {d}" for d in directives),
        *(f"#SBATCH {d}" for d in options.extra_directives),
        "set -euo pipefail",
        f"export GPURENT_CHECKPOINT_DIR={shlex.quote(spec.checkpoint_dir)}",
        f"mkdir -p {shlex.quote(spec.checkpoint_dir)}",
        "# The first node of the allocation is the torchrun rendezvous.",
        'MASTER_ADDR="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"',
        "export MASTER_ADDR",
        "# One task per node; each runs its node's torchrun under gpurent run.",
        "srun --kill-on-bad-exit=1 bash -c "
        + shlex.quote(
            run_line(
                spec,
                nnodes='"$SLURM_NNODES"',
                node_rank='"$SLURM_NODEID"',
                nproc=str(spec.procs_per_node),
                master_addr='"$MASTER_ADDR"',
            )
        ),
    ]
    return (RenderedFile(SCRIPT_NAME, "\n".join(body) + "\n", 0o755),)
