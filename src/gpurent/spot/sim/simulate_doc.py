"""`gpurent spot simulate`'s market and `--json` document, shared by the CLI and the server
(`POST /api/spot/simulate`): the traces read into a market (with the notes the readers raise),
the policies to run, and the document built from their summaries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpurent.errors import InputError

if TYPE_CHECKING:
    from gpurent.spot.sim.dollars import JobDollars, Prices
    from gpurent.spot.sim.job_market import JobSpec, Market
    from gpurent.spot.sim.simulator import SimSummary


def load_market(
    trace_files: Sequence[Path],
    prices_file: Path | None,
    nodes: int,
    price_ratio: float | None,
    on_demand_price: float | None,
    *,
    node_traces: bool = False,
) -> tuple[Market, list[str]]:
    """The aligned market of the trace files, and the readers' and aligner's notes."""
    from gpurent.spot.io.trace import align_zones, combine_nodes
    from gpurent.spot.io.trace_io import attach_prices, load_traces
    from gpurent.spot.sim.job_market import build_market

    traces, notes = load_traces(trace_files)
    if node_traces:
        if len(traces) != nodes:
            raise InputError(
                f"--node-traces: {len(traces)} per-node traces for --nodes {nodes}; "
                "give one trace per node"
            )
        traces = [combine_nodes(traces, name="+".join(tr.name for tr in traces))]
    if prices_file is not None and price_ratio is None:
        traces = attach_prices(traces, prices_file)
    zones = align_zones(traces)
    market = build_market(
        zones, nodes=nodes, price_ratio=price_ratio, on_demand_usd_per_hour=on_demand_price
    )
    return market, [*notes, *zones.notes]


def policy_names(key: str, *, vs_optimal: bool) -> list[str]:
    """The policies to run for the resolved --policy `key`."""
    from gpurent.spot.sim.policies import ONLINE_POLICIES, OPTIMAL

    names = [*ONLINE_POLICIES, OPTIMAL] if key == "all" else [key]
    if vs_optimal and OPTIMAL not in names:
        names.append(OPTIMAL)
    return names


def money_for(pair: Prices | None, market: Market, ratio: float | None) -> tuple[float, str] | None:
    """(on-demand $/h per instance, where from) for dollars, or None with relative prices."""
    if pair is not None:
        return pair.on_demand_usd_per_hour, pair.source
    if ratio is None:
        return market.on_demand_usd_per_hour, "the traces' spot prices and on-demand price"
    return None


def dollars_for(s: SimSummary, money: tuple[float, str] | None, job: JobSpec) -> JobDollars | None:
    """The mean run in dollars, or None with relative prices."""
    from gpurent.spot.sim.dollars import job_dollars

    if money is None:
        return None
    return job_dollars(
        s.mean_cost_normalized,
        on_demand_usd_per_hour=money[0],
        job_hours=job.job_hours,
        nodes=job.nodes,
        price_source=money[1],
    )


def summary_json(
    summary: SimSummary,
    optimal: SimSummary | None,
    money: tuple[float, str] | None = None,
    job: JobSpec | None = None,
) -> dict[str, object]:
    """One policy's row: its summary, the gap to the hindsight optimum, the dollars."""
    from gpurent.spot.sim.evaluate import gap_to_optimal

    out = summary.as_json()
    if optimal is not None:
        out["gap_to_optimal"] = gap_to_optimal(summary, optimal)
    dollars = dollars_for(summary, money, job) if job is not None else None
    if dollars is not None:
        out["dollars"] = dollars.as_json()
    return out


def simulate_document(
    summaries: Mapping[str, SimSummary],
    market: Market,
    job: JobSpec,
    money: tuple[float, str] | None,
    *,
    key: str,
    vs_optimal: bool,
) -> Any:
    """What `spot simulate --json` prints: one row, or the zones and every row."""
    from gpurent.spot.sim.policies import OPTIMAL

    optimal = summaries.get(OPTIMAL)
    out = [summary_json(s, optimal, money, job) for s in summaries.values()]
    if key == "all" or vs_optimal:
        return {"zones": list(market.zone_names), "results": out}
    return out[0]
