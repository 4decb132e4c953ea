"""The dashboard's data pages: GET /offers (the catalog with filters and price ages), /spot
(availability heat map, zone advice, simulated policies), /bench (results against the
expectations) and /vendors (scorecard and sensitivity map). Each calls the core
functions its CLI command calls (`offers`, `spot zones`/`history`/`simulate`, `bench`, `vendors
score`); filters are GET forms (they change nothing, so they carry no CSRF token); bad input is
the page again with one line and a 4xx."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from gpurent.catalog.offers import OfferTable
from gpurent.errors import GpurentError, InputError
from gpurent.inputs import values as v
from gpurent.report.pages import PageInfo, message_page
from gpurent.report.pages_data import (
    BenchView,
    OffersView,
    SpotView,
    bench_page,
    offers_page,
    spot_page,
    vendors_dashboard,
)
from gpurent.server.page_common import BodyCache, html_reply, page_info
from gpurent.server.replies import one_line, status_for
from gpurent.userdata import data_home, now_utc

router = APIRouter(include_in_schema=False)
OFFER_ROWS = 100
"""Rows shown (the count of all matching is on the page): rendering is most of the page's time."""
SPOT_STARTS = 30
SPOT_POLICIES = ("on-demand", "greedy", "uniform-progress", "lifetime-up")
"""`spot simulate --policy all` without the hindsight optimum (seconds where these take ms)."""
SPOT_DEFAULTS = {
    "job_hours": "24",
    "deadline_hours": "48",
    "changeover_hours": "0.1",
    "price_ratio": "3",
}


def _query(request: Request, names: Sequence[str], defaults: dict[str, str]) -> dict[str, str]:
    return {n: request.query_params.get(n, defaults.get(n, "")).strip()[:200] for n in names}


def _number(form: dict[str, str], name: str) -> float | None:
    text = form[name]
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{name}: {text!r} is not a number") from None


# -- offers -------------------------------------------------------------------------------------


def offers_view(filters: dict[str, str], table: OfferTable | None = None) -> OffersView:
    """The offers the filters select, as `gpurent offers` selects them (cheapest first)."""
    from gpurent.catalog.query import OfferQuery, OfferSort, resolve_gpu_filter, select_offers
    from gpurent.catalog.sources import load_offers
    from gpurent.server.params import items

    now = now_utc()
    table = load_offers(None, now=now) if table is None else table
    pricing = filters["pricing"]
    if pricing not in {"", "on-demand", "spot"}:
        raise InputError(f"pricing: {pricing!r} is not one of on-demand, spot")
    max_price = _number(filters, "max_price")
    query = OfferQuery(
        # resolving names costs a pass over every offer: only when there are names to resolve
        gpus=resolve_gpu_filter(items([filters["gpu"]]), table.offers) if filters["gpu"] else (),
        providers=tuple(p.lower() for p in items([filters["provider"]])),
        region=filters["region"] or None,
        max_price_usd_per_hour=None if max_price is None else v.positive(max_price, "max_price"),
        spot_only=pricing == "spot",
    )
    matching = select_offers(table.offers, query, sort=OfferSort.PRICE)
    if pricing == "on-demand":
        matching = tuple(o for o in matching if o.price_usd_per_hour is not None)
    return OffersView(
        filters=filters,
        providers=sorted({o.provider for o in table.offers}),
        shown=matching[:OFFER_ROWS],
        matching=len(matching),
        source=table.source,
        age=table.age,
        now=now,
    )


_OFFERS = BodyCache()


@router.get("/offers", response_class=HTMLResponse)
def offers(request: Request) -> HTMLResponse:
    """The offers browser (a body is reused while the catalog object, the filters and the date,
    which the price ages count from, are the same)."""
    from gpurent.catalog.sources import load_offers

    info = page_info(request)
    filters = _query(request, ("gpu", "provider", "region", "pricing", "max_price"), {})
    table = load_offers(None, now=now_utc())
    key = (id(table), tuple(filters.items()), now_utc().date(), info.plotly_version)
    body = _OFFERS.get(key, pinned=table)
    if body is not None:
        return html_reply(body, info)
    try:
        view = offers_view(filters, table)
    except GpurentError as exc:
        empty = {**filters, "gpu": "", "provider": "", "region": "", "pricing": "", "max_price": ""}
        view = replace(offers_view(empty, table), filters=filters)  # the form keeps the typed
        body = offers_page(info, view, error=one_line(exc.message))
        return html_reply(body, info, status=status_for(exc))
    return html_reply(_OFFERS.put(key, offers_page(info, view), pinned=table), info)


# -- spot ---------------------------------------------------------------------------------------


def spot_traces() -> tuple[tuple[Path, ...], str]:
    """The user's traces (`<gpurent home>/spot/traces/*.csv|json`), else the shipped example."""
    folder = data_home() / "spot" / "traces"
    own = tuple(sorted(p for p in folder.glob("*") if p.suffix in {".csv", ".json"}))
    if own:
        return own, f"{len(own)} trace file(s) in {folder}"
    example = resources.files("gpurent.server") / "data" / "spot"
    paths = tuple(sorted(Path(str(p)) for p in example.iterdir() if p.name.endswith(".csv")))
    return paths, (
        "the shipped example (AWS p3.2xlarge spot availability, 3 zones, 14 days of the "
        f"Can't Be Late NSDI'24 traces); put your own in {folder}"
    )


def _signature(paths: Sequence[Path]) -> tuple[tuple[str, int, int], ...]:
    stats = [p.stat() for p in paths]
    return tuple((str(p), s.st_mtime_ns, s.st_size) for p, s in zip(paths, stats, strict=True))


@lru_cache(maxsize=32)
def _spot_analysis(
    files: tuple[tuple[str, int, int], ...], job: tuple[float, float, float, float]
) -> tuple[Any, Any, tuple[Any, ...]]:
    """Zone report, availability profile, policy summaries: cached by the files (path, mtime,
    size) and the job, since each is a pure function of them."""
    from gpurent.spot.analytics.history import availability_profile
    from gpurent.spot.analytics.zones import analyse_zones
    from gpurent.spot.io.trace_io import load_traces
    from gpurent.spot.sim.evaluate import run_policy
    from gpurent.spot.sim.job_market import JobSpec, run_starts
    from gpurent.spot.sim.simulate_doc import load_market

    paths = [Path(name) for name, _, _ in files]
    traces, _ = load_traces(paths)
    zones = analyse_zones(traces)
    profile = availability_profile(traces)
    job_hours, deadline_hours, changeover_hours, ratio = job
    spec = JobSpec(
        job_hours=job_hours,
        deadline_hours=deadline_hours,
        changeover_hours=changeover_hours,
        nodes=1,
    )
    market, _ = load_market(paths, None, 1, ratio, None)
    starts = run_starts(market, spec, SPOT_STARTS)
    summaries = tuple(run_policy(name, market, spec, starts) for name in SPOT_POLICIES)
    return zones, profile, summaries


def spot_view(job: dict[str, str]) -> SpotView:
    """The spot page's analysis of the traces for the job the form describes."""
    hours = v.bounded(v.positive, most=v.MAX_HOURS)
    numbers = (
        hours(_number(job, "job_hours"), "job_hours"),
        hours(_number(job, "deadline_hours"), "deadline_hours"),
        v.bounded(v.non_negative, most=v.MAX_HOURS)(
            _number(job, "changeover_hours"), "changeover_hours"
        ),
        v.bounded(v.positive, most=1e6)(_number(job, "price_ratio"), "price_ratio"),
    )
    paths, source = spot_traces()
    zones, profile, summaries = _spot_analysis(_signature(paths), numbers)
    return SpotView(source=source, zones=zones, profile=profile, job=job, summaries=summaries)


_SPOT = BodyCache()


@router.get("/spot", response_class=HTMLResponse)
def spot(request: Request) -> HTMLResponse:
    """Availability heat map, zone advice, simulated policies."""
    info = page_info(request)
    job = _query(request, tuple(SPOT_DEFAULTS), SPOT_DEFAULTS)
    paths, _ = spot_traces()
    key = (_signature(paths), tuple(job.items()), info.plotly_version)
    body = _SPOT.get(key)
    if body is not None:
        return html_reply(body, info)
    try:
        view = spot_view(job)
    except GpurentError as exc:
        try:
            body = spot_page(info, spot_view(SPOT_DEFAULTS), error=one_line(exc.message))
        except GpurentError as again:  # the traces themselves are unusable
            body = message_page(info, active="spot", title="Spot", error=one_line(again.message))
        return html_reply(body, info, status=status_for(exc))
    return html_reply(_SPOT.put(key, spot_page(info, view)), info)


# -- bench --------------------------------------------------------------------------------------


def bench_view(name: str) -> BenchView:
    """The newest result in `<gpurent home>/bench/` (where `gpurent bench` saves), or `name`."""
    from gpurent.bench.result import load_result

    folder = data_home() / "bench"
    found = sorted(folder.glob("*.json"), key=lambda p: p.name, reverse=True)
    names = [p.name for p in found]
    if not found:
        return BenchView(result=None, shown="", files=(), folder=str(folder))
    chosen = name or names[0]
    if chosen not in names:
        raise InputError(f"file: no bench result {chosen!r} in {folder}")
    return BenchView(
        result=load_result(folder / chosen), shown=chosen, files=names, folder=str(folder)
    )


@router.get("/bench", response_class=HTMLResponse)
def bench(request: Request) -> HTMLResponse:
    """A bench result against the expectations."""
    info = page_info(request)
    try:
        view = bench_view(request.query_params.get("file", "").strip())
    except GpurentError as exc:
        empty = BenchView(result=None, shown="", files=(), folder=str(data_home() / "bench"))
        body = bench_page(info, empty, error=one_line(exc.message))
        return html_reply(body, info, status=status_for(exc))
    return html_reply(bench_page(info, view), info)


# -- vendors ------------------------------------------------------------------------------------


def vendors_file() -> Path:
    """`<gpurent home>/vendors.toml`, else examples/vendors.toml of a source checkout (the
    repository this package runs from), else the home's path (the page says to write one)."""
    own = data_home() / "vendors.toml"
    if own.exists():
        return own
    example = Path(__file__).resolve().parents[3] / "examples" / "vendors.toml"
    return example if example.exists() else own


@lru_cache(maxsize=8)
def _evaluation(path: str, mtime_ns: int, size: int, period: int) -> Any:
    """The file's evaluation with its own weights, cached by (path, mtime, size) for one
    period of VENDORS_FRESH_S seconds (its evidence files are read again after it)."""
    from gpurent.vendors.evaluation import evaluate
    from gpurent.vendors.file import load_vendors

    return evaluate(load_vendors(path))


_VENDORS = BodyCache(size=8)
VENDORS_FRESH_S = 5.0


def _vendors_body(info: PageInfo) -> str:
    path = vendors_file()
    if not path.exists():
        return vendors_dashboard(info, None, str(path))
    stat = path.stat()
    # the evidence files the vendors file names may change too: a body lives at most
    # VENDORS_FRESH_S seconds (the file's own stat is in the key)
    period = int(time.monotonic() // VENDORS_FRESH_S)
    key = (str(path), stat.st_mtime_ns, stat.st_size, period, info.plotly_version)
    body = _VENDORS.get(key)
    if body is None:
        ev = _evaluation(str(path), stat.st_mtime_ns, stat.st_size, period)
        body = _VENDORS.put(key, vendors_dashboard(info, ev, str(path)))
    return body


@router.get("/vendors", response_class=HTMLResponse)
def vendors(request: Request) -> HTMLResponse:
    """The vendors scorecard and its sensitivity map."""
    info = page_info(request)
    try:
        body = _vendors_body(info)
    except GpurentError as exc:
        body = message_page(info, active="vendors", title="Vendors", error=one_line(exc.message))
        return html_reply(body, info, status=status_for(exc))
    return html_reply(body, info)
