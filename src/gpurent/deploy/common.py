"""What every renderer shares: the rendered file, the provenance header, the launch lines."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

import yaml

from gpurent import __version__
from gpurent.deploy.spec import DeploySpec, one_line

RDZV_PORT = 29500
EXPORTER_PORT = 9400


@dataclass(frozen=True, slots=True)
class RenderedFile:
    """One output file: a path relative to the output directory, its text, its mode."""

    path: str
    text: str
    mode: int = 0o644


def header_lines(spec: DeploySpec, what: str) -> list[str]:
    """The comment lines that open every file: what it is and which candidate it came from."""
    lines = [
        f"{what}, rendered by gpurent {__version__} (`gpurent deploy render`).",
        f"From {spec.provenance()}.",
    ]
    if spec.wall_time_s is not None:
        lines.append(
            f"Expected wall time {spec.wall_time_s / 3600:.2f} h (the plan's time_s); "
            "limits add the margin stated in docs/deploy.md."
        )
    if not spec.command_given:
        lines.append(f"Job command: {spec.command!r} (the default; set it with --command).")
    return [one_line(line) for line in lines]


def comment_block(spec: DeploySpec, what: str, prefix: str = "# ") -> str:
    """The header lines as a comment block, each line starting with prefix."""
    return "".join(f"{prefix}{line}\n" for line in header_lines(spec, what))


class _BlockDumper(yaml.SafeDumper):
    """Multi-line strings (shell steps) as `|` blocks, and list items indented under their key,
    as people write them (and as yamllint's default, which ansible-lint applies, wants)."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)

    def ignore_aliases(self, data: Any) -> bool:  # every value written out, no &id001 anchors
        return True


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str)


def dump_yaml(doc: Any) -> str:
    """The document as block-style YAML, keys in insertion order."""
    return yaml.dump(
        doc, Dumper=_BlockDumper, sort_keys=False, default_flow_style=False, width=1000
    )


def gpurent_run_prefix(spec: DeploySpec) -> list[str]:
    """`gpurent run` with the checkpoint directory and its event log (argv words)."""
    return [
        "gpurent",
        "run",
        "--checkpoint-dir",
        spec.checkpoint_dir,
        "--log",
        f"{spec.checkpoint_dir.rstrip('/')}/gpurent-run.jsonl",
    ]


def torchrun_words(
    spec: DeploySpec, *, nnodes: str, node_rank: str, nproc: str, master_addr: str
) -> str:
    """`torchrun ... COMMAND` as shell text; the shell expressions are left unquoted so that
    the engine's environment variables expand on each node."""
    return " ".join(
        torchrun_list(
            spec, nnodes=nnodes, node_rank=node_rank, nproc=nproc, master_addr=master_addr
        )
    )


def torchrun_list(
    spec: DeploySpec, *, nnodes: str, node_rank: str, nproc: str, master_addr: str
) -> list[str]:
    """The shell words of `torchrun_words`."""
    argv = shlex.split(spec.command)
    launch = [
        "torchrun",
        f"--nnodes={nnodes}",
        f"--node-rank={node_rank}",
        f"--nproc-per-node={nproc}",
        f"--master-addr={master_addr}",
        f"--master-port={RDZV_PORT}",
        "--max-restarts=0",
    ]
    if argv and argv[0].split("/")[-1].startswith("python"):
        rest = argv[1:]
    else:
        launch.append("--no-python")
        rest = argv
    return [*launch, *(shlex.quote(a) for a in rest)]


def run_line(spec: DeploySpec, *, nnodes: str, node_rank: str, nproc: str, master_addr: str) -> str:
    """The one shell line that runs a single-node job under `gpurent run`: the command itself on
    one process, torchrun for several processes (several nodes: `multi_node_run_line`)."""
    prefix = " ".join(shlex.quote(w) for w in gpurent_run_prefix(spec))
    if spec.nodes == 1 and spec.procs_per_node <= 1:
        return f"{prefix} -- {spec.command}"
    launch = torchrun_words(
        spec, nnodes=nnodes, node_rank=node_rank, nproc=nproc, master_addr=master_addr
    )
    return f"{prefix} -- {launch}"


SYNC_FOLDER = ".gpurent-job"


def multi_node_words(
    spec: DeploySpec, *, nproc: str, node_rank: str, job_id: str, extra: tuple[str, ...] = ()
) -> list[str]:
    """`gpurent run --nodes auto` for every node of a multi-node job, as shell words: it finds
    the node's rank and the rendezvous from the engine's variables, starts torchrun, and
    restarts the whole job through the sync directory. `node_rank` and `job_id` are shell text
    (the engine's variables, left to expand on each node): the node's own event log, and the
    sync directory of this run of the job (the same on every node, new for a new run). `extra`:
    more `gpurent run` options, quoted here."""
    ckpt = spec.checkpoint_dir.rstrip("/") or "/"
    return [
        "gpurent",
        "run",
        "--nodes",
        "auto",
        "--nproc-per-node",
        nproc,
        "--checkpoint-dir",
        shlex.quote(spec.checkpoint_dir),
        "--sync-dir",
        shlex.quote(f"{ckpt}/{SYNC_FOLDER}/") + job_id,
        "--log",
        shlex.quote(f"{ckpt}/gpurent-run-node-") + node_rank + ".jsonl",
        *(shlex.quote(w) for w in extra),
        "--",
    ]


def multi_node_run_line(
    spec: DeploySpec, *, nproc: str, node_rank: str, job_id: str, extra: tuple[str, ...] = ()
) -> str:
    """`multi_node_words` and the job's command, as one shell line."""
    words = multi_node_words(spec, nproc=nproc, node_rank=node_rank, job_id=job_id, extra=extra)
    return " ".join(words) + " " + spec.command


def pip_install_line(spec: DeploySpec) -> str:
    """The shell line installing gpurent (runtime, monitor extras) and the job's requirements."""
    pkgs = ["gpurent[runtime,monitor]", *spec.requirements]
    return "python3 -m pip install --upgrade " + " ".join(shlex.quote(p) for p in pkgs)


def exporter_argv(spec: DeploySpec) -> list[str]:
    """The gpurent monitor exporter for one node, priced at the plan's per-instance price."""
    return [
        "gpurent",
        "monitor",
        "--exporter",
        "--port",
        str(EXPORTER_PORT),
        "--price-usd-per-hour",
        f"{spec.price_usd_per_hour:g}",
    ]
