"""Slurm: one sbatch script that starts the job under `gpurent run` through `srun`.

Several nodes: one Slurm task per node, each `gpurent run --nodes auto`, which takes its rank
from `$SLURM_PROCID`, the rendezvous from the node list and the job id, and restarts the whole
job (every task) from the newest checkpoint all nodes can load. One node: `gpurent run` starts
torchrun (or the command) itself.

Stable API (used by the multi-node `gpurent run` tests): `render_slurm(spec, options)` returns
the files to write; `SlurmOptions` holds what Slurm needs and a plan does not say.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from gpurent.deploy.common import RenderedFile, comment_block, multi_node_run_line, run_line
from gpurent.deploy.spec import DeploySpec
from gpurent.errors import InputError

SCRIPT_NAME = "job.sbatch"


@dataclass(frozen=True, slots=True, kw_only=True)
class SlurmOptions:
    """`partition`: the partition to submit to (None: the cluster's default). `requeue`: None
    follows the plan (spot/preemptible: --requeue). `gpus`: False leaves out --gpus-per-node
    (CPU-only clusters, tests). `extra_directives`: more `#SBATCH` lines, verbatim.
    `tasks_per_host`: the job's nodes per Slurm host; 1 (real clusters) is one host per node,
    more packs several nodes' tasks onto one host (a single-host cluster, tests).
    `run_options`: more `gpurent run` options for a multi-node job, as argv words (e.g.
    `("--health-interval", "60")`)."""

    partition: str | None = None
    requeue: bool | None = None
    gpus: bool = True
    extra_directives: tuple[str, ...] = ()
    tasks_per_host: int = 1
    run_options: tuple[str, ...] = ()


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
    per_host = options.tasks_per_host
    if not 1 <= per_host <= max(spec.nodes, 1):
        raise InputError(
            f"slurm: tasks_per_host={per_host} must be between 1 and the job's {spec.nodes} nodes"
        )
    hosts = -(-spec.nodes // per_host)
    directives = [f"--job-name={spec.name}", f"--nodes={hosts}"]
    if per_host == 1:
        directives.append("--ntasks-per-node=1")
    else:
        directives += [f"--ntasks={spec.nodes}", f"--ntasks-per-node={per_host}"]
    if options.gpus and spec.gpus_per_node > 0:
        gpus = "node" if per_host == 1 else "task"
        directives.append(f"--gpus-per-{gpus}={spec.gpus_per_node}")
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
        *_launch(spec, options),
    ]
    return (RenderedFile(SCRIPT_NAME, "\n".join(body) + "\n", 0o755),)


def _launch(spec: DeploySpec, options: SlurmOptions) -> list[str]:
    if spec.multi_node:
        line = multi_node_run_line(
            spec,
            nproc=str(spec.procs_per_node),
            node_rank='"$SLURM_PROCID"',
            job_id='slurm-"$SLURM_JOB_ID"',
            extra=options.run_options,
        )
        return [
            "# One task per node of the job, each `gpurent run --nodes auto`: its rank is",
            "# $SLURM_PROCID, the rendezvous the first host of the node list (port from the job",
            "# id); a failure on any node restarts every task from the newest checkpoint all",
            "# nodes can load, agreed in the sync directory (storage every node sees).",
            "srun --kill-on-bad-exit=1 bash -c " + shlex.quote(line),
        ]
    line = run_line(
        spec,
        nnodes="1",
        node_rank="0",
        nproc=str(spec.procs_per_node),
        master_addr="127.0.0.1",
    )
    return ["# One node: gpurent run starts the job on it.", "srun bash -c " + shlex.quote(line)]
