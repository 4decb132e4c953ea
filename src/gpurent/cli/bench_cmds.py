"""`gpurent bench`: check that a rented machine delivers, and compare two machines.

Start-up stays light: rich.progress, torch and the bench modules are imported inside the
command functions.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from gpurent.cli.common import checked, cli_errors, console, err_console, print_json, split_list
from gpurent.errors import InputError, require
from gpurent.inputs import values as v

bench_app = typer.Typer(
    help=(
        "Benchmark this machine and judge it against the catalog and the estimator.\n\n"
        "Runs dense matmul per precision, device memory bandwidth, host-device (PCIe) "
        "bandwidth, all-reduce bus bandwidth, disk, data-loading, and training steps of "
        "resnet50 / bert-large / a GPT decoder, then flags every figure below its stated "
        "fraction with the likely cause.\n\n"
        "Examples:\n\n"
        "  gpurent bench --quick                      # every benchmark, small, < 60 s\n\n"
        "  gpurent bench --only matmul,membw --json   # two benchmarks, JSON on stdout\n\n"
        "  gpurent bench --path /mnt/ckpt --out a.json\n\n"
        "  gpurent bench compare a.json b.json\n\n"
        "  gpurent bench results --json             # what bench has saved\n\n"
        "  gpurent bench serve --url http://127.0.0.1:8000   # a live LLM endpoint"
    ),
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _require_bench_extra() -> None:
    """Fail early, in one line through `cli_errors`, when the bench extra (numpy, torch) is
    missing."""
    for module in ("numpy", "torch"):
        require(module, "bench")


def _output_mode(json_: bool, markdown_: bool) -> str:
    if json_ and markdown_:
        raise InputError("--json and --markdown: choose one")
    return "json" if json_ else "markdown" if markdown_ else "table"


def _allreduce_across_nodes(
    *, allreduce: bool, only: str, address: str | None, json_: bool
) -> None:
    """`bench --allreduce --nodes`: the cross-node all-reduce of `gpurent fleet allreduce`."""
    if not allreduce or only:
        raise InputError("--nodes measures the all-reduce across nodes: give it with --allreduce")
    if address is None:
        raise InputError(
            "--nodes needs the Ray cluster: pass --address HOST:PORT (or set $RAY_ADDRESS)"
        )
    from gpurent.cli.fleet_cmds import allreduce_cmd

    allreduce_cmd(address=address, json_=json_)


@bench_app.callback(invoke_without_command=True)
@cli_errors
@checked(
    steps=v.bounded(v.positive_int, most=100_000),
    warmup=v.bounded(v.non_negative_int, most=100_000),
)
def bench(
    ctx: typer.Context,
    *,
    quick: Annotated[
        bool, typer.Option("--quick", help="Every benchmark at small sizes, 5 timed steps.")
    ] = False,
    only: Annotated[
        str,
        typer.Option(
            "--only",
            help="Comma-separated subset: matmul,membw,hostdev,allreduce,disk,dataload,"
            "models,scaling.",
            show_default=False,
        ),
    ] = "",
    path: Annotated[
        Path, typer.Option("--path", help="Directory for the disk benchmark (your checkpoints).")
    ] = Path("."),
    device: Annotated[str, typer.Option("--device", help="auto, cpu or cuda.")] = "auto",
    steps: Annotated[
        int, typer.Option("--steps", help="Timed training steps per model (--quick: at most 5).")
    ] = 100,
    warmup: Annotated[
        int, typer.Option("--warmup", help="Untimed warm-up steps (--quick: at most 2).")
    ] = 10,
    max_seconds: Annotated[
        float | None,
        typer.Option(
            "--max-seconds",
            help="Time bound of the run; each benchmark gets a share and stops at its end "
            "(default: 40 with --quick, 900 otherwise).",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Where to save the result JSON (default: $GPURENT_HOME/bench/bench-TIME.json).",
        ),
    ] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    markdown_: Annotated[
        bool, typer.Option("--markdown", help="Print the result as Markdown.")
    ] = False,
    allreduce: Annotated[
        bool, typer.Option("--allreduce", help="Only the all-reduce benchmark (--only allreduce).")
    ] = False,
    nodes: Annotated[
        bool,
        typer.Option(
            "--nodes",
            help="With --allreduce: across the nodes of a Ray cluster (--address), one process "
            "per node, as `gpurent fleet allreduce` does.",
        ),
    ] = False,
    address: Annotated[
        str | None,
        typer.Option(
            "--address",
            envvar="RAY_ADDRESS",
            help="With --nodes: the Ray head as HOST:PORT (what `ray start --head` printed).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Benchmark this machine (see `gpurent bench --help`)."""
    if ctx.invoked_subcommand is not None:
        return
    if nodes:
        _allreduce_across_nodes(allreduce=allreduce, only=only, address=address, json_=json_)
        return
    if allreduce:
        if only and tuple(split_list(only)) != ("allreduce",):
            raise InputError(f"--allreduce with --only {only}: give one of them")
        only = "allreduce"
    mode = _output_mode(json_, markdown_)
    _require_bench_extra()
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from gpurent.bench import BenchConfig, estimator_expectations, run_bench
    from gpurent.bench.result import result_to_dict, save_result
    from gpurent.bench.runner import BENCHMARKS
    from gpurent.estimate.calibration_file import load_estimator
    from gpurent.report.bench import markdown, tables
    from gpurent.userdata import data_home

    selected = split_list(only) if only else BENCHMARKS
    cfg = BenchConfig(
        quick=quick,
        only=selected,
        disk_path=path,
        device=device,
        steps=steps,
        warmup=warmup,
        max_seconds=max_seconds if max_seconds is not None else (40.0 if quick else 900.0),
    )
    cfg.validate()
    now = datetime.now(UTC)
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    ) as bar:
        task = bar.add_task("bench", total=len(selected))

        def progress(label: str, done: int, total: int) -> None:
            bar.update(task, description=f"bench: {label}", completed=done, total=total)

        result = run_bench(
            cfg,
            created_at=now.isoformat(timespec="seconds"),
            progress=progress,
            model_expect=estimator_expectations(load_estimator().estimate),
        )
    target = out or data_home() / "bench" / f"bench-{now.strftime('%Y%m%dT%H%M%SZ')}.json"
    save_result(result, target)
    if mode == "json":
        print_json(result_to_dict(result))
    elif mode == "markdown":
        typer.echo(markdown(result), nl=False)
    else:
        for item in tables(result):
            console.print(item)
    err_console.print(f"saved {target}", highlight=False)


@bench_app.command("compare")
@cli_errors
def compare_cmd(
    a: Annotated[Path, typer.Argument(help="First result JSON (from `gpurent bench --out`).")],
    b: Annotated[Path, typer.Argument(help="Second result JSON.")],
    *,
    json_: Annotated[bool, typer.Option("--json", help="Print rows as JSON.")] = False,
    markdown_: Annotated[bool, typer.Option("--markdown", help="Print a Markdown table.")] = False,
) -> None:
    """Show two machines' bench results side by side, with B / A for every figure.

    Example: gpurent bench compare vendor1.json vendor2.json --markdown
    """
    from gpurent.bench import compare, load_result
    from gpurent.report.bench import compare_markdown, compare_table

    mode = _output_mode(json_, markdown_)
    rows = compare(load_result(a), load_result(b))
    if mode == "json":
        print_json({"a": str(a), "b": str(b), "rows": rows})
    elif mode == "markdown":
        typer.echo(compare_markdown(rows, str(a), str(b)), nl=False)
    else:
        console.print(compare_table(rows, str(a), str(b)))


@bench_app.command("results")
@cli_errors
@checked(limit=v.bounded(v.positive_int, most=10_000))
def results_cmd(
    *,
    folder: Annotated[
        Path | None,
        typer.Option(
            "--dir",
            help="The folder of saved results (default: $GPURENT_HOME/bench, where `gpurent "
            "bench` saves them).",
            show_default=False,
        ),
    ] = None,
    limit: Annotated[int, typer.Option(help="The newest this many results.")] = 50,
    json_: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
) -> None:
    """List the saved bench results, newest first, each with its verdict (measured vs expected).

    Example: gpurent bench results --json
    """
    from rich.table import Table

    from gpurent.bench.saved import read_saved, results_dir, saved_document, verdict_counts

    saved = read_saved(folder if folder is not None else results_dir(), limit)
    if json_:
        print_json(saved_document(saved))
        return
    table = Table(title=f"{saved.total} saved bench result(s), newest first")
    for col in ("file", "run at", "GPU", "ok", "warn", "fail", "below expectation"):
        table.add_column(col, justify="right" if col in ("ok", "warn", "fail") else "left")
    for s in saved.results:
        counts = verdict_counts(s.result)
        hw = s.result.hardware
        low = [r.check for r in s.result.verdict if r.status in ("warn", "fail")]
        table.add_row(
            s.file,
            s.result.created_at,
            f"{hw.gpu_count}x {hw.gpu_catalog_name or hw.gpu_name}" if hw.gpu_count else "cpu",
            str(counts["ok"]),
            str(counts["warn"]),
            str(counts["fail"]),
            ", ".join(low) or "-",
        )
    console.print(table)
    for u in saved.unreadable:
        err_console.print(f"skipped {u.file}: {u.error}", highlight=False, markup=False)


def _attach_serve() -> None:
    from gpurent.cli.bench_serve_cmds import EXAMPLES, serve_cmd

    bench_app.command("serve", epilog=EXAMPLES)(serve_cmd)


_attach_serve()


def register(app: typer.Typer) -> None:
    """Attach `gpurent bench` (and `gpurent bench compare`) to the root app."""
    app.add_typer(bench_app, name="bench")
