"""`gpurent deploy render`: a plan candidate as the files SkyPilot, dstack, Ansible, Kubernetes,
Slurm or torchrun run. The renderers are pure (`gpurent.deploy`); writing happens here: into a
temporary directory beside the target, then renamed, so a failure leaves nothing half-written.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gpurent.cli.common import checked, cli_errors, print_json, split_list
from gpurent.errors import InputError
from gpurent.inputs import files
from gpurent.inputs import values as v

if TYPE_CHECKING:
    from gpurent.deploy import DeployOptions, DeploySpec, RenderedFile

deploy_app = typer.Typer(
    help="Render a plan for the engines that run it: SkyPilot, dstack, Ansible, Kubernetes, "
    "Slurm, torchrun (docs/deploy.md).",
    no_args_is_help=True,
)

FORMAT_NAMES = ("skypilot", "dstack", "ansible", "kubernetes", "slurm", "torchrun")
FORMAT_HELP = " | ".join(FORMAT_NAMES) + "."
H = {
    "candidate": "Which of the plan's ranked candidates (1-based, as `top` lists them; default "
    "the best).",
    "command": "The job's command, run under `gpurent run` (default: python train.py).",
    "checkpoint_dir": "Where the job checkpoints on each node (default /checkpoints).",
    "requirements": "Python packages the job needs, comma list (installed by the setup step).",
    "storage": "Disk per node, GB (default: the plan's default, 200).",
    "zone": "Availability zone, where the engine takes one.",
    "hosts": "The nodes' addresses, comma list (torchrun and Ansible: one per plan node).",
    "out": "Output directory (created; must not exist or be empty, unless --force).",
    "force": "Write into an existing non-empty directory, replacing the rendered files.",
}


def _write_new_dir(rendered: tuple[RenderedFile, ...], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for f in rendered:
            path = tmp / f.path
            path.parent.mkdir(parents=True, exist_ok=True)
            files.write_text(path, f.text)
            path.chmod(f.mode)
        tmp.chmod(0o755)
        if out.exists():  # an empty directory: replace it
            out.rmdir()
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _replace_files(rendered: tuple[RenderedFile, ...], out: Path) -> None:
    """--force: every file to a temporary name in its directory first, then renamed over."""
    staged: list[tuple[Path, Path]] = []
    try:
        for f in rendered:
            final = out / f.path
            final.parent.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=f".{final.name}.", dir=final.parent)
            os.close(fd)
            tmp = Path(name)
            staged.append((tmp, final))
            files.write_text(tmp, f.text)
            tmp.chmod(f.mode)
        for tmp, final in staged:
            if final.is_dir():
                raise InputError(f"{final} is a directory where a rendered file goes; remove it")
            tmp.replace(final)
    finally:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)


def check_out_dir(out: Path, *, force: bool) -> bool:
    """True when `out` is an existing non-empty directory (allowed only with `force`)."""
    if out.exists() and not out.is_dir():
        raise InputError(f"-o {out}: exists and is not a directory; give a directory")
    full = out.is_dir() and any(out.iterdir())
    if full and not force:
        raise InputError(
            f"-o {out}: the directory exists and is not empty; nothing written (pass "
            "--force to replace the rendered files in it, or give a new directory)"
        )
    return full


def write_rendered(rendered: tuple[RenderedFile, ...], out: Path, *, force: bool) -> None:
    """Write the files under `out`: a new or empty directory at once (temp dir + rename); an
    existing non-empty one only with `force`."""
    if check_out_dir(out, force=force):
        _replace_files(rendered, out)
    else:
        _write_new_dir(rendered, out)


def result_record(
    spec: DeploySpec, fmt: str, out: Path, rendered: tuple[RenderedFile, ...]
) -> dict[str, Any]:
    """The JSON record of a render: format, files written, provenance and the chosen candidate."""
    return {
        "format": fmt,
        "out_dir": str(out),
        "files": [f.path for f in rendered],
        "provenance": spec.provenance(),
        "candidate": {
            "index": spec.candidate_index,
            "source": spec.source,
            "provider": spec.provider,
            "instance_type": spec.instance_type,
            "region": spec.region,
            "gpu_name": spec.gpu_name,
            "gpus_per_node": spec.gpus_per_node,
            "nodes": spec.nodes,
            "pricing": spec.pricing,
            "price_usd_per_hour": spec.price_usd_per_hour,
        },
        "command": spec.command,
        "command_given": spec.command_given,
    }


def summary_line(spec: DeploySpec, fmt: str, out: Path, rendered: tuple[RenderedFile, ...]) -> str:
    """One line saying which files were written where, and from which plan candidate."""
    names = ", ".join(f.path for f in rendered)
    return f"wrote {fmt} to {out}/ ({names}) from {spec.provenance()}"


def emit(
    doc: Any, fmt: str, out: Path, options: DeployOptions, *, force: bool
) -> tuple[DeploySpec, tuple[RenderedFile, ...]]:
    """Parse, render, write: the one function both commands call."""
    from gpurent.deploy import render, spec_from_plan

    spec = spec_from_plan(doc, options)
    rendered = render(spec, fmt)
    write_rendered(rendered, out, force=force)
    return spec, rendered


def make_options(
    *,
    candidate: int | None,
    command: str | None,
    checkpoint_dir: str | None,
    requirements: str | None,
    storage_gb: float | None,
    zone: str | None,
    source: str,
    hosts: str | None = None,
) -> DeployOptions:
    """The deploy options from the command's flags; InputError on an empty --command or dir."""
    from gpurent.deploy import DeployOptions

    if command is not None and not command.strip():
        raise InputError("--command is empty; give the job's command, e.g. 'python train.py'")
    if checkpoint_dir is not None and not checkpoint_dir.strip():
        raise InputError("--checkpoint-dir is empty; give a directory, e.g. /checkpoints")
    return DeployOptions(
        candidate=candidate,
        command=command,
        checkpoint_dir=checkpoint_dir,
        requirements=split_list(requirements),
        storage_gb_per_node=storage_gb,
        zone=zone,
        hosts=split_list(hosts),
        source=source,
    )


@deploy_app.command("render")
@cli_errors
@checked(candidate=v.bounded(v.positive_int, most=v.MAX_TOP), storage_gb=v.positive)
def render_command(  # noqa: PLR0917 (typer: one parameter per option)
    plan_file: Annotated[
        Path, typer.Argument(help="A `gpurent plan --json` file.", dir_okay=False)
    ],
    fmt: Annotated[str, typer.Option("--format", "-f", help=FORMAT_HELP)],
    out: Annotated[Path, typer.Option("--out", "-o", help=H["out"], file_okay=False)],
    candidate: Annotated[int | None, typer.Option("--candidate", help=H["candidate"])] = None,
    command: Annotated[str | None, typer.Option("--command", help=H["command"])] = None,
    checkpoint_dir: Annotated[
        str | None, typer.Option("--checkpoint-dir", help=H["checkpoint_dir"])
    ] = None,
    requirements: Annotated[
        str | None, typer.Option("--requirements", help=H["requirements"])
    ] = None,
    storage_gb: Annotated[float | None, typer.Option("--storage-gb", help=H["storage"])] = None,
    zone: Annotated[str | None, typer.Option("--zone", help=H["zone"])] = None,
    hosts: Annotated[str | None, typer.Option("--hosts", help=H["hosts"])] = None,
    force: Annotated[bool, typer.Option("--force", help=H["force"])] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Render a plan candidate for an engine: gpurent deploy render plan.json --format skypilot
    -o job/. Exit 2 for bad input (another schema version, a format the plan cannot express,
    a non-empty -o without --force); nothing is written then."""
    text = files.read_text(plan_file, limit_bytes=files.MAX_TEXT_BYTES, what="plan file")
    doc = files.parse_json(text, files.shown(plan_file))
    options = make_options(
        candidate=candidate,
        command=command,
        checkpoint_dir=checkpoint_dir,
        requirements=requirements,
        storage_gb=storage_gb,
        zone=zone,
        hosts=hosts,
        source=plan_file.name,
    )
    spec, rendered = emit(doc, fmt.lower(), out, options, force=force)
    if as_json:
        print_json(result_record(spec, fmt.lower(), out, rendered))
    else:
        typer.echo(summary_line(spec, fmt.lower(), out, rendered))


def register(app: typer.Typer) -> None:
    """Attach `gpurent deploy` to the root app."""
    app.add_typer(deploy_app, name="deploy")
