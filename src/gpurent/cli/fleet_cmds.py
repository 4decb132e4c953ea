"""`gpurent fleet`: bench and health-check every node of a Ray cluster, and all-reduce across
its nodes. Ray and the fleet room are imported inside the commands (the `fleet` extra)."""

from __future__ import annotations

from typing import Annotated

import typer

from gpurent.cli.common import checked, cli_errors, console, err_console, print_json, split_list
from gpurent.errors import GpurentError, InputError
from gpurent.inputs import values as v

fleet_app = typer.Typer(
    help=(
        "Run gpurent on every node of a Ray cluster: bench them, rank them, name the node to "
        "replace; health-check them; measure all-reduce bandwidth between them.\n\n"
        "Every node needs gpurent installed (`pip install 'gpurent[bench,fleet]'`).\n\n"
        "Examples:\n\n"
        "  gpurent fleet bench --address 10.0.0.1:6379\n\n"
        "  gpurent fleet health --address auto --endpoint s3.amazonaws.com:443\n\n"
        "  gpurent fleet allreduce --address 10.0.0.1:6379 --sizes-mib 64,256 --json"
    ),
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

AddressOpt = Annotated[
    str,
    typer.Option(
        "--address",
        envvar="RAY_ADDRESS",
        help="The Ray head as HOST:PORT (what `ray start --head` printed), ray://HOST:PORT, "
        "or auto (the cluster this machine is part of).",
        show_default=False,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]


def _sizes(text: str) -> list[float] | None:
    if text == "auto":
        return None
    items = split_list(text)
    if not items:
        raise InputError("--sizes-mib: give at least one size in MiB, or auto")
    return [v.positive(item, f"--sizes-mib {item}", most=16_384) for item in items]


class _FleetReplaceError(GpurentError):
    """Nodes were found to replace: the run worked, the fleet did not (exit 1)."""


@fleet_app.command("bench")
@cli_errors
@checked(
    max_seconds=v.bounded(v.positive, most=v.MAX_SECONDS),
    timeout=v.bounded(v.positive, most=v.MAX_SECONDS),
    repeats=v.bounded(v.integer, least=2, most=10_000),
    min_free_gib=v.bounded(v.non_negative, most=1e6),
)
def bench_cmd(
    *,
    address: AddressOpt,
    only: Annotated[
        str,
        typer.Option(
            "--only",
            help="Benchmarks to run on each node (as `gpurent bench --only`).",
            show_default=False,
        ),
    ] = "",
    max_seconds: Annotated[
        float, typer.Option("--max-seconds", help="Time bound of each node's bench.")
    ] = 40.0,
    allreduce: Annotated[
        bool,
        typer.Option(
            "--allreduce/--no-allreduce",
            help="Also all-reduce between neighbouring nodes (a ring of pairs): a slow link.",
        ),
    ] = True,
    sizes_mib: Annotated[
        str,
        typer.Option(
            "--sizes-mib",
            help="Pair all-reduce message sizes, MiB (auto: 64,256 on GPUs, 8,64 on CPUs).",
        ),
    ] = "auto",
    repeats: Annotated[int, typer.Option("--repeats", help="Timed all-reduces per size.")] = 5,
    min_free_gib: Annotated[
        float, typer.Option("--min-free-gib", help="Disk check: fail below this much free space.")
    ] = 1.0,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait for each node's answer.")
    ] = 300.0,
    one_at_a_time: Annotated[
        bool,
        typer.Option(
            "--one-at-a-time",
            help="Bench the nodes one after another instead of all at once: a fair comparison "
            "when nodes share hosts, storage or a network (slower by the node count).",
        ),
    ] = False,
    json_: JsonOpt = False,
) -> None:
    """Run `gpurent bench --quick` on every node, rank the nodes, flag the one to replace.

    Exit code 1 (after the table) when a node is to be replaced; the rule is in docs/fleet.md.

    Example: gpurent fleet bench --address 10.0.0.1:6379 --only matmul,membw
    """
    from gpurent.fleet.service import fleet_bench
    from gpurent.report import fleet as report

    bench_args = ["--max-seconds", f"{max_seconds:g}"]
    if only:
        bench_args += ["--only", ",".join(split_list(only))]
    result = fleet_bench(
        address,
        bench_args=bench_args,
        timeout_s=timeout,
        min_free_gib=min_free_gib,
        pairs=allreduce,
        pair_sizes_mib=_sizes(sizes_mib),
        pair_repeats=repeats,
        one_at_a_time=one_at_a_time,
    )
    if json_:
        print_json(report.bench_json(result))
    else:
        console.print(report.bench_table(result))
        for line in report.bench_lines(result):
            console.print(line, highlight=False, markup=False)
    bad = result.ranking.to_replace
    if bad:
        raise _FleetReplaceError(
            f"{len(bad)} of {len(result.nodes)} nodes to replace: "
            + "; ".join(f"{r.node} ({r.reasons[0]})" for r in bad)
        )


@fleet_app.command("health")
@cli_errors
@checked(
    timeout=v.bounded(v.positive, most=v.MAX_SECONDS),
    min_free_gib=v.bounded(v.non_negative, most=1e6),
)
def health_cmd(
    *,
    address: AddressOpt,
    path: Annotated[
        str,
        typer.Option(
            "--path",
            help="Where each node keeps checkpoints, for the free-space check "
            "(default: its temporary directory).",
            show_default=False,
        ),
    ] = "",
    min_free_gib: Annotated[
        float, typer.Option("--min-free-gib", help="Fail a node with less free space at --path.")
    ] = 1.0,
    endpoint: Annotated[
        list[str] | None,
        typer.Option(
            "--endpoint",
            help="host:port or URL every node must reach (repeatable; storage, W&B, ...).",
        ),
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait for each node's answer.")
    ] = 60.0,
    json_: JsonOpt = False,
) -> None:
    """Run the runtime's health checks (GPUs: count, uncorrected ECC, temperature, throttling,
    Xid; disk; network) on every node. Exit code 1 when a node fails one.

    Example: gpurent fleet health --address auto --path /mnt/ckpt --endpoint s3.amazonaws.com:443
    """
    from gpurent.fleet.service import fleet_health
    from gpurent.report import fleet as report

    result = fleet_health(
        address,
        path=path,
        min_free_gib=min_free_gib,
        endpoints=list(split_list(endpoint)),
        timeout_s=timeout,
    )
    if json_:
        print_json(report.health_json(result))
    else:
        console.print(report.health_table(result))
    if result.failed:
        raise _FleetReplaceError(
            f"{len(result.failed)} of {len(result.nodes)} nodes failed a health check: "
            + ", ".join(n.node.short for n in result.failed)
        )


@fleet_app.command("allreduce")
@cli_errors
@checked(
    repeats=v.bounded(v.integer, least=2, most=10_000),
    timeout=v.bounded(v.positive, most=v.MAX_SECONDS),
)
def allreduce_cmd(
    *,
    address: AddressOpt,
    sizes_mib: Annotated[
        str,
        typer.Option(
            "--sizes-mib",
            help="Message sizes, MiB (auto: 16,64,256 on GPUs, 1,8,64 on CPUs).",
        ),
    ] = "auto",
    repeats: Annotated[int, typer.Option("--repeats", help="Timed all-reduces per size.")] = 5,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait for the processes.")
    ] = 300.0,
    json_: JsonOpt = False,
) -> None:
    """All-reduce across the nodes, one process per node (NCCL on GPUs, gloo on CPUs):
    algbw and busbw per message size (nccl-tests definitions).

    Example: gpurent fleet allreduce --address 10.0.0.1:6379 --sizes-mib 64,256
    """
    from gpurent.fleet.service import fleet_allreduce
    from gpurent.report import fleet as report

    result = fleet_allreduce(
        address, sizes_mib=_sizes(sizes_mib), repeats=repeats, timeout_s=timeout
    )
    if json_:
        print_json(report.allreduce_json(result))
    else:
        console.print(report.allreduce_table(result))
    err_console.print(
        "busbw = algbw x 2(n-1)/n; the slowest rank's median time sets each figure",
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    """Attach `gpurent fleet` to the root app."""
    app.add_typer(fleet_app, name="fleet")
