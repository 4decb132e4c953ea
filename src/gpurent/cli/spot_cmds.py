"""CLI verbs of the spot room: `gpurent spot simulate` (and, later, interval/zones/history).

One function per command; each parses, calls the core once, renders. Add a command by writing
its function and registering it in `register`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from gpurent.cli.common import checked, cli_errors, console, err_console, print_json
from gpurent.cli.spot_prices import OFFER_HELP, choose_prices, usd
from gpurent.errors import InputError
from gpurent.inputs import values as v

if TYPE_CHECKING:
    from gpurent.spot.sim.job_market import JobSpec, Market
    from gpurent.spot.sim.simulator import SimSummary

# The simulator pulls in numpy; the CLI imports it only when a spot command runs, so every
# other command starts fast. tests/spot checks this help text against the policy registry.
POLICY_HELP = (
    "auto (= lifetime-up, gpurent's own), on-demand, greedy, uniform-progress, lifetime-up, "
    "breakeven-up, proven-up, dp-up, dp-up2, dp-up3, dp-up4, optimal (hindsight) or all."
)

spot_app = typer.Typer(
    help=(
        "Spot instances: replay availability traces and compare policies (simulate), choose a "
        "checkpoint interval (interval), pick zones (zones), read price history (history), "
        "record a trace (probe), import public signals (signals)."
    ),
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the root app."""
    from gpurent.cli.spot_analytics_cmds import register_spot_analytics
    from gpurent.cli.spot_probe_cmds import probe_cmd
    from gpurent.cli.spot_signal_cmds import signals_app

    register_spot_analytics(spot_app)
    spot_app.command("probe")(probe_cmd)
    spot_app.add_typer(signals_app, name="signals")
    app.add_typer(spot_app, name="spot")


@spot_app.command("simulate")
@cli_errors
@checked(
    job_hours=v.bounded(v.positive, most=v.MAX_HOURS),
    deadline_hours=v.bounded(v.positive, most=v.MAX_HOURS),
    changeover_hours=v.bounded(v.non_negative, most=v.MAX_HOURS),
    price_ratio=v.bounded(v.positive, most=1e6),
    on_demand_price=v.positive,
    nodes=v.bounded(v.positive_int, most=v.MAX_NODES),
    starts=v.bounded(v.positive_int, most=v.MAX_STARTS),
)
def simulate_cmd(
    *,
    trace: Annotated[
        list[Path],
        typer.Option(
            "--trace",
            help="Trace file (CBL JSON, date,availability CSV, probe CSV); "
            "repeat for several zones.",
        ),
    ],
    job_hours: Annotated[
        float, typer.Option("--job-hours", help="Compute hours the job needs (C).")
    ],
    deadline_hours: Annotated[
        float, typer.Option("--deadline-hours", help="Hours from start to deadline (R).")
    ],
    changeover_hours: Annotated[
        float, typer.Option("--changeover-hours", help="Hours lost per instance switch (d).")
    ] = 0.1,
    policy: Annotated[
        str,
        typer.Option(
            "--policy",
            help=POLICY_HELP,
        ),
    ] = "auto",
    price_ratio: Annotated[
        float | None,
        typer.Option("--price-ratio", help="On-demand / spot price k (spot 1, on-demand k)."),
    ] = None,
    on_demand_price: Annotated[
        float | None,
        typer.Option("--on-demand-price", help="On-demand $/h when spot prices come from traces."),
    ] = None,
    prices: Annotated[
        str | None,
        typer.Option(
            "--prices",
            help="spot=USD,ondemand=USD ($/h per instance), or a JSON file {zone: [spot $/h per "
            "tick]} matched by zone name.",
        ),
    ] = None,
    offer: Annotated[str | None, typer.Option("--offer", help=OFFER_HELP)] = None,
    nodes: Annotated[
        int, typer.Option("--nodes", help="Instances the job needs (all-or-none).")
    ] = 1,
    node_traces: Annotated[
        bool,
        typer.Option(
            "--node-traces",
            help="The --trace files are one zone's per-node traces (one per node of --nodes); "
            "the job runs only while every node has spot.",
        ),
    ] = False,
    starts: Annotated[int, typer.Option("--starts", help="Runs, spread over the trace.")] = 100,
    vs_optimal: Annotated[
        bool, typer.Option("--vs-optimal", help="Also compute the hindsight optimum and the gap.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Replay traces with a deadline policy; cost normalised by all-on-demand (k x C)."""
    from gpurent.spot.sim.job_market import JobSpec, run_starts, tick_plan
    from gpurent.spot.sim.policies import OPTIMAL, resolve
    from gpurent.spot.sim.simulate_doc import (
        load_market,
        money_for,
        policy_names,
        simulate_document,
    )

    key = resolve(policy)
    job = JobSpec(
        job_hours=job_hours,
        deadline_hours=deadline_hours,
        changeover_hours=changeover_hours,
        nodes=nodes,
    )
    pair = choose_prices(offer, prices)
    if pair is not None and price_ratio is not None:
        raise InputError(f"give --price-ratio or {pair.source}, not both")
    prices_file = Path(prices) if prices is not None and pair is None else None
    ratio = pair.ratio if pair is not None else price_ratio
    market, notes = load_market(
        trace, prices_file, nodes, ratio, on_demand_price, node_traces=node_traces
    )
    for note in notes:
        err_console.print(f"[yellow]warning:[/] {note}", highlight=False, soft_wrap=True)
    money = money_for(pair, market, ratio)
    plan = tick_plan(job, market.gap_hours)
    if not plan.feasible_on_demand:
        err_console.print(
            "[yellow]warning:[/] the deadline cannot be met even on on-demand "
            f"({job.changeover_hours:g} h changeover + {job.job_hours:g} h work > "
            f"{job.deadline_hours:g} h); runs will miss it",
            highlight=False,
            soft_wrap=True,
        )
    start_ticks = run_starts(market, job, starts)
    summaries = _run_all(policy_names(key, vs_optimal=vs_optimal), market, job, start_ticks)
    optimal = summaries.get(OPTIMAL)
    if as_json:
        print_json(simulate_document(summaries, market, job, money, key=key, vs_optimal=vs_optimal))
        return
    _render(summaries, optimal, market, job, money)


def _run_all(
    names: list[str], market: Market, job: JobSpec, start_ticks: list[int]
) -> dict[str, SimSummary]:
    """Every policy's summary; on a terminal, a progress bar on stderr counts the runs."""
    from gpurent.spot.sim.evaluate import run_policy

    if not err_console.is_terminal:
        return {name: run_policy(name, market, job, start_ticks) for name in names}
    from rich.progress import Progress

    with Progress(console=err_console, transient=True) as bar:
        task = bar.add_task("simulating", total=len(names) * len(start_ticks))
        out = {}
        for name in names:
            bar.update(task, description=f"simulating {name}")
            out[name] = run_policy(name, market, job, start_ticks, lambda n: bar.advance(task, n))
    return out


def _render(
    summaries: dict[str, SimSummary],
    optimal: SimSummary | None,
    market: Market,
    job: JobSpec,
    money: tuple[float, str] | None = None,
) -> None:
    from gpurent.spot.sim.evaluate import gap_to_optimal
    from gpurent.spot.sim.simulate_doc import dollars_for

    title = (
        f"{len(market.zone_names)} zone(s): {', '.join(market.zone_names)}; C={job.job_hours:g} h, "
        f"R={job.deadline_hours:g} h, d={job.changeover_hours:g} h"
    )
    table = Table(title=title)
    for col in ("policy", "runs", "mean cost", "p90 cost", "misses", "spot"):
        table.add_column(col, justify="left" if col == "policy" else "right", no_wrap=True)
    if optimal is not None:
        table.add_column("vs optimal", justify="right", no_wrap=True)
    for s in summaries.values():
        cells = [
            s.policy,
            str(s.runs),
            f"{s.mean_cost_normalized:.3f}",
            f"{s.p90_cost_normalized:.3f}",
            str(s.deadline_misses),
            f"{s.mean_spot_fraction:.0%}",
        ]
        if optimal is not None:
            cells.append(f"{gap_to_optimal(s, optimal):+.1%}")
        table.add_row(*cells)
    console.print(table)
    if money is not None:
        money_table = Table(title=f"the job in dollars ({job.nodes} node(s))")
        for col in ("policy", "mean cost $", "saves vs on-demand"):
            money_table.add_column(col, justify="left" if col == "policy" else "right")
        for s in summaries.values():
            d = dollars_for(s, money, job)
            assert d is not None
            money_table.add_row(
                s.policy, usd(d.cost_usd), f"{usd(d.saving_usd)} ({d.saving_fraction:.0%})"
            )
        console.print(money_table)
    console.print("cost normalised by on-demand for the whole job (k x C); 1.0 = all on-demand")
    if money is None:
        console.print(
            "no dollars: relative prices only; pass --offer or --prices spot=..,ondemand=.."
        )
    else:
        od_total = money[0] * job.job_hours * job.nodes
        console.print(
            f"dollars: {job.nodes} x {job.job_hours:g} h at ${money[0]:g}/h on-demand = "
            f"{usd(od_total)} all on-demand; prices from {money[1]}",
            highlight=False,
            soft_wrap=True,
        )
    if job.nodes > 1:
        first = next(iter(summaries.values()))
        console.print(
            f"{job.nodes} nodes, all billed: {first.policy} costs {first.mean_cost_all_nodes:.2f} "
            "per run for all nodes (the normalised cost is the same per node)"
        )
