"""`gpurent spot interval|zones|history`: checkpoint interval, zone choice, price history.

Registered into the `spot` group (owned by spot_cmds.py) by `register_spot_analytics`. The spot
modules are imported inside each command, so that registering these commands (at every CLI
start) costs nothing.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from gpurent.cli.common import (
    checked,
    cli_errors,
    console,
    err_console,
    print_json,
)
from gpurent.cli.spot_prices import OFFER_HELP, PRICES_HELP, choose_prices, usd
from gpurent.cloud.spot_defaults import spot_default
from gpurent.errors import DataError, InputError
from gpurent.inputs import values as v
from gpurent.inputs.files import write_text
from gpurent.units import format_duration

if TYPE_CHECKING:
    from gpurent.spot.analytics.zones import ZoneReport
    from gpurent.spot.history_report import HistoryReport
    from gpurent.spot.interval import Overhead
    from gpurent.spot.io.trace import Trace
    from gpurent.spot.sim.dollars import Prices


def register_spot_analytics(spot_app: typer.Typer) -> None:
    """Add `interval`, `zones` and `history` to the given `spot` group."""
    spot_app.command("interval")(interval_cmd)
    spot_app.command("zones")(zones_cmd)
    spot_app.command("history")(history_cmd)


def _load_traces(paths: list[Path], prices: Path | None = None) -> list[Trace]:
    from gpurent.spot.io.trace_io import attach_prices, load_traces

    traces, notes = load_traces(paths)
    for note in notes:
        err_console.print(f"note: {note}", highlight=False)
    return traces if prices is None else attach_prices(traces, prices)


def _pct(x: float) -> str:
    return "inf" if x == float("inf") else f"{x * 100:.2f}%"


def _overhead_row(table: Table, rule: str, o: Overhead) -> None:
    table.add_row(
        rule,
        format_duration(o.interval_s),
        _pct(o.total),
        _pct(o.checkpoint),
        _pct(o.lost_work),
        _pct(o.restart),
    )


@cli_errors
@checked(
    checkpoint_cost_s=v.bounded(v.non_negative, most=v.MAX_SECONDS),
    mtti_hours=v.bounded(v.positive, most=v.MAX_HOURS),
    restart_s=v.bounded(v.non_negative, most=v.MAX_SECONDS),
    nodes=v.bounded(v.positive_int, most=v.MAX_NODES),
)
def interval_cmd(
    *,
    traces: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Availability traces (CSV date,availability or Can't Be Late JSON), pooled.",
            show_default=False,
        ),
    ] = None,
    checkpoint_cost_s: Annotated[
        float, typer.Option(help="Seconds of lost progress per checkpoint.")
    ] = 60.0,
    mtti_hours: Annotated[
        float | None, typer.Option(help="Mean time to interruption, hours (without traces).")
    ] = None,
    provider: Annotated[
        str | None,
        typer.Option(
            help="Use this provider's spot defaults (MTTI without traces, restart seconds), "
            "the ones `plan` and `pricing compare` use.",
            show_default=False,
        ),
    ] = None,
    restart_s: Annotated[
        float | None,
        typer.Option(
            help="Seconds from interruption to resumed work (default: the provider's, 600 s).",
            show_default=False,
        ),
    ] = None,
    nodes: Annotated[int, typer.Option(help="Instances needed at once (all-or-none).")] = 1,
    offer: Annotated[str | None, typer.Option(help=OFFER_HELP, show_default=False)] = None,
    prices: Annotated[str | None, typer.Option(help=PRICES_HELP, show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Checkpoint interval: Young, Daly, the empirical optimum on a trace, and the fixed 15 min.

    Example: gpurent spot interval us-east-1a.csv us-west-2b.csv --checkpoint-cost-s 60

    Example: gpurent spot interval --mtti-hours 6 --checkpoint-cost-s 30
    """
    from gpurent.spot.analytics.survival import lifetimes_from_trace
    from gpurent.spot.interval import (
        GUIDE_FIXED_INTERVAL_S,
        daly_interval_s,
        interval_from_lifetimes_s,
        overhead_exponential,
        young_interval_s,
    )

    pair = choose_prices(offer, prices)
    if provider is None and offer is not None:
        provider = offer.split("/")[0]
    d = spot_default(provider)
    used, why = [], []  # the defaults taken from the table and their sources, for the output
    if mtti_hours is None and not traces and provider is not None:
        mtti_hours = d.mtti_hours
        used.append(f"MTTI {mtti_hours:g} h")
        why.append(d.rate_source)
    if restart_s is None:
        restart_s = d.restart_s
        used.append(f"{restart_s:g} s restart")
        why.append(d.restart_source)
    source = (
        f"gpurent's spot defaults for {provider or d.provider} ({', '.join(used)}): "
        + "; ".join(why)
        if used
        else "given: " + ("--restart-s" if traces else "--mtti-hours, --restart-s")
    )
    table = Table(title="expected overhead per hour of useful work")
    for col in ("rule", "interval", "overhead", "checkpoints", "lost work", "restarts"):
        table.add_column(col, justify="left" if col == "rule" else "right")
    if traces:
        loaded = _load_traces(traces)
        lives = [lt for tr in loaded for lt in lifetimes_from_trace(tr, nodes)]
        if not lives:
            raise DataError(f"the traces never had {nodes} instance(s) available; no lifetimes")
        choice = interval_from_lifetimes_s(
            checkpoint_cost_s,
            [x.duration_h for x in lives],
            censored=[x.censored for x in lives],
            restart_s=restart_s,
        )
        rules = {
            "empirical optimum": choice.best,
            "Daly (MTTI)": choice.daly,
            "Young (MTTI)": choice.young,
            "guide: fixed 15 min": choice.fixed_15min,
        }
        if as_json:
            print_json(
                {**asdict(choice), "source": source, **_interval_dollars(rules, pair, nodes)}
            )
            return
        _overhead_row(table, "empirical optimum", choice.best)
        _overhead_row(table, "Daly (MTTI)", choice.daly)
        _overhead_row(table, "Young (MTTI)", choice.young)
        _overhead_row(table, "guide: fixed 15 min", choice.fixed_15min)
        console.print(table)
        console.print(
            f"{choice.lifetimes} lifetimes ({choice.censored} censored) "
            f"from {len(loaded)} trace(s); "
            f"MTTI {format_duration(choice.mtti_s)}. Overheads are all evaluated on the "
            "empirical (Kaplan-Meier) lifetime distribution."
        )
        console.print(f"assumptions: {source}", highlight=False)
        _print_interval_dollars(rules, pair, nodes)
        return
    if mtti_hours is None:
        raise InputError(
            "give availability trace files, --mtti-hours, or --provider NAME for its default"
        )
    mtti_s = mtti_hours * 3600.0
    young = young_interval_s(checkpoint_cost_s, mtti_s)
    daly = daly_interval_s(checkpoint_cost_s, mtti_s)
    rows = {
        "Daly": overhead_exponential(daly, checkpoint_cost_s, mtti_s, restart_s),
        "Young": overhead_exponential(young, checkpoint_cost_s, mtti_s, restart_s),
        "guide: fixed 15 min": overhead_exponential(
            GUIDE_FIXED_INTERVAL_S, checkpoint_cost_s, mtti_s, restart_s
        ),
    }
    if as_json:
        print_json(
            {
                "mtti_s": mtti_s,
                "checkpoint_cost_s": checkpoint_cost_s,
                "restart_s": restart_s,
                "source": source,
                "overheads": rows,
                **_interval_dollars(rows, pair, nodes),
            }
        )
        return
    for rule, o in rows.items():
        _overhead_row(table, rule, o)
    console.print(table)
    console.print(
        "exponential lifetimes assumed; spot lifetimes are heavy tailed: give a trace "
        "for the empirical optimum."
    )
    console.print(f"assumptions: {source}", highlight=False)
    _print_interval_dollars(rows, pair, nodes)


def _interval_dollars(
    rules: dict[str, Overhead], prices: Prices | None, nodes: int
) -> dict[str, object]:
    """{"dollars": per rule, $ per hour of useful work on spot (overhead billed) vs on-demand},
    or {} without prices."""
    from gpurent.spot.sim.dollars import overhead_dollars

    if prices is None:
        return {}
    return {
        "dollars": {
            rule: overhead_dollars(o.total, prices, nodes).as_json()
            for rule, o in rules.items()
            if o.total != float("inf")
        }
    }


def _print_interval_dollars(rules: dict[str, Overhead], prices: Prices | None, nodes: int) -> None:
    from gpurent.spot.sim.dollars import overhead_dollars

    if prices is None:
        return
    parts = []
    for rule, o in rules.items():
        if o.total == float("inf"):
            continue
        h = overhead_dollars(o.total, prices, nodes)
        parts.append(f"{rule} {usd(h.usd_per_hour)} ({h.saving_fraction:.0%} less)")
    console.print(
        f"dollars per hour of useful work on spot ({nodes} node(s), vs "
        f"{usd(prices.on_demand_usd_per_hour * nodes)}/h on-demand): {'; '.join(parts)}; "
        f"prices from {prices.source}",
        highlight=False,
        soft_wrap=True,
    )


@cli_errors
@checked(
    size=v.bounded(v.positive_int, most=64),
    nodes=v.bounded(v.positive_int, most=v.MAX_NODES),
    top=v.bounded(v.positive_int, most=v.MAX_TOP),
)
def zones_cmd(
    *,
    traces: Annotated[
        list[Path] | None,
        typer.Argument(
            help="One availability trace per zone (or a file with several zones); without "
            "traces, zones are ranked by the stored spot signals (`spot signals import`).",
            show_default=False,
        ),
    ] = None,
    size: Annotated[
        int | None,
        typer.Option(help="How many zones to spread over  [default: min(3, zones given)]"),
    ] = None,
    nodes: Annotated[int, typer.Option(help="Instances needed at once (all-or-none).")] = 1,
    top: Annotated[int, typer.Option(help="How many best subsets to list.")] = 5,
    instance: Annotated[
        str | None,
        typer.Option(
            help="Without traces: the instance type to rank zones for.", show_default=False
        ),
    ] = None,
    provider: Annotated[
        str | None,
        typer.Option(help="Without traces: only this provider's signals.", show_default=False),
    ] = None,
    region: Annotated[
        list[str] | None,
        typer.Option(
            help="Without traces: only these regions (repeat or comma-separate).",
            show_default=False,
        ),
    ] = None,
    offer: Annotated[str | None, typer.Option(help=OFFER_HELP, show_default=False)] = None,
    prices: Annotated[str | None, typer.Option(help=PRICES_HELP, show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Zones: availability, lifetimes, correlation, and the set least likely to be dry at once.

    Example: gpurent spot zones data/spot/*_v100_1.csv --size 3

    Example: gpurent spot zones --instance p5.48xlarge   (ranked by stored signals)
    """
    from gpurent.cli.spot_zone_signals import render_signal_zones
    from gpurent.report.spot_zones import zone_money, zones_document
    from gpurent.spot.analytics.zones import analyse_zones

    pair = choose_prices(offer, prices)
    if not traces:
        render_signal_zones(instance, offer, provider, region, pair, as_json=as_json)
        return
    report = analyse_zones(_load_traces(traces), set_size=size, nodes=nodes, top=max(top, 1))
    if as_json:
        print_json(zones_document(report, pair))
        return
    order, money = zone_money(report, pair)
    _render_zones(report)
    console.print(f"try in this order: {', '.join(order)} (most available first)", highlight=False)
    if money is not None:
        console.print(
            f"dollars: {usd(money.usd_per_hour)}/h on this set vs "
            f"{usd(money.on_demand_usd_per_hour)}/h on-demand ({money.saving_fraction:.0%} less; "
            f"{money.rule}); prices from {money.price_source}",
            highlight=False,
            soft_wrap=True,
        )


def _hours(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _render_zones(report: ZoneReport) -> None:
    for note in report.notes:
        err_console.print(f"note: {note}", highlight=False)
    table = Table(
        title=f"{len(report.zones)} zones, {report.ticks} aligned ticks every "
        f"{report.gap_hours * 3600:.0f} s"
    )
    for col in ("zone", "available", "runs", "median h", "mean h", "p90 h"):
        table.add_column(col, justify="left" if col == "zone" else "right")
    for z in report.zones:
        lt = z.lifetimes
        table.add_row(
            z.name,
            f"{z.availability * 100:.1f}%",
            str(lt.runs if lt else 0),
            _hours(lt.median_h if lt else None),
            _hours(lt.restricted_mean_h if lt else None),
            _hours(lt.p90_h if lt else None),
        )
    console.print(table)
    phis = [p.phi for p in report.pairs if p.phi is not None]
    if phis:
        console.print(
            f"phi of unavailability across {len(phis)} pairs: min {min(phis):.2f}, "
            f"median {sorted(phis)[len(phis) // 2]:.2f}, max {max(phis):.2f}"
        )
    best = Table(title=f"best sets of {report.set_size} (of {report.subsets_searched} searched)")
    for col in ("zones", "P(all dry) measured", "if independent"):
        best.add_column(col, justify="left" if col == "zones" else "right")
    for s in report.ranked:
        best.add_row(
            ", ".join(s.zones),
            f"{s.p_all_unavailable * 100:.3f}%",
            f"{s.p_all_unavailable_if_independent * 100:.3f}%",
        )
    console.print(best)
    r = report.recommended
    console.print(
        f"recommended: {', '.join(r.zones)}: all unavailable at once "
        f"{r.p_all_unavailable * 100:.2f}% of the time (measured; "
        f"{r.p_all_unavailable_if_independent * 100:.2f}% if zones were independent)"
    )


@cli_errors
@checked(
    utc_offset=v.bounded(v.integer, least=-12, most=14),
    horizon=v.bounded(v.positive_int, most=24 * 365),
)
def history_cmd(
    *,
    files: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Price history: AWS describe-spot-price-history JSON, or archive .tsv / .tsv.zst.",
            show_default=False,
        ),
    ] = None,
    trace: Annotated[
        list[Path] | None,
        typer.Option(help="Availability trace (repeatable): adds the availability profile."),
    ] = None,
    prices: Annotated[
        Path | None, typer.Option(help="JSON zone -> per-tick spot prices for the --trace files.")
    ] = None,
    zone: Annotated[
        list[str] | None, typer.Option(help="Keep only these zones (repeatable).")
    ] = None,
    instance_type: Annotated[
        list[str] | None, typer.Option(help="Keep only these instance types.")
    ] = None,
    product: Annotated[
        str, typer.Option(help="Product description to keep, or 'all'.")
    ] = "Linux/UNIX",
    utc_offset: Annotated[
        int, typer.Option(help="Local time = UTC + this many hours (US East: -5).")
    ] = 0,
    evening: Annotated[str, typer.Option(help="Evening hours START-END, local time.")] = "17-22",
    horizon: Annotated[int, typer.Option(help="Forecast horizon, hours.")] = 1,
    html_out: Annotated[
        Path | None, typer.Option("--html", help="Write an HTML report with plots.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Price history: hour-of-week profiles, forecast back-test, "cheapest on weekday evenings?".

    Example: gpurent spot history 2022-05.tsv.zst --instance-type p3.2xlarge --html out.html

    Example: gpurent spot history --trace us-east-1a_v100_1.csv --prices v100_spot_prices.json
    --utc-offset -5
    """
    from gpurent.report.html import spot_history_page
    from gpurent.spot.history_report import history_from_files

    report = history_from_files(
        files or [],
        _load_traces(trace, prices) if trace else [],
        zones=zone or (),
        instance_types=instance_type or (),
        product=product,
        utc_offset_hours=utc_offset,
        evening=evening,
        horizon_h=horizon,
    )
    if html_out is not None:
        write_text(html_out, spot_history_page(report))
    if as_json:
        print_json(report)
        return
    _render_history(report, html_out)


def _render_history(report: HistoryReport, html_out: Path | None) -> None:
    console.print(
        f"{report.series} series, {report.start:%Y-%m-%d %H:%M} to "
        f"{report.end:%Y-%m-%d %H:%M} UTC ({report.days_of_data:.2f} days), "
        f"{report.price_profile.covered_bins} of 168 hour-of-week bins covered"
    )
    table = Table(title="hour groups vs the other hours (bin means, permutation test, seed 0)")
    for col in ("quantity", "group", "group mean", "others", "difference", "p"):
        table.add_column(col, justify="left" if col in ("quantity", "group") else "right")
    tests = [report.price_evening, report.availability_evening, report.availability_business_hours]
    for t in tests:
        if t is None:
            continue
        table.add_row(
            t.quantity,
            t.group,
            _num(t.group_mean),
            _num(t.other_mean),
            "-" if t.relative_difference is None else f"{t.relative_difference * 100:+.2f}%",
            "-" if t.p_value is None else f"{t.p_value:.3f}",
        )
    console.print(table)
    bt = report.backtest
    fc = Table(title=f"forecast back-test, {bt.horizon_h} h ahead (rolling origin)")
    for col in ("method", "MAE $/h", "mean rel. error", "forecasts"):
        fc.add_column(col, justify="left" if col == "method" else "right")
    for s in bt.scores:
        fc.add_row(
            s.method,
            "-" if s.mae_usd_per_hour is None else f"{s.mae_usd_per_hour:.5f}",
            "-" if s.mean_relative_error is None else f"{s.mean_relative_error * 100:.3f}%",
            str(s.forecasts),
        )
    console.print(fc)
    console.print(
        f"best method: {bt.best_method}"
        + (
            ""
            if bt.best_method == "last"
            else f" ({(bt.improvement_over_last or 0) * 100:.1f}% lower MAE than the last value)"
        )
    )
    console.print(report.answer)
    if html_out is not None:
        console.print(f"wrote {html_out}")


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"
