"""`gpurent plan --serve` (and `--scenario inference`): resolve the serving workload, the
traffic profile and the offers, call `plan.serving.plan_serving`, render; exit 3 with one
line (the closest configuration and its miss) when no configuration meets the SLOs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from gpurent.cli.common import console, err_console, fail, print_json, split_list
from gpurent.inputs import files
from gpurent.plan.serve_request import (
    DEFAULT_SERVING_PRESET,
    OfferFilter,
    ServeFlags,
    read_traffic_profile,
    resolve_serving,
    serve_plan,
    traffic_profile_from_text,
    wants_serving,
)

if TYPE_CHECKING:
    from gpurent.catalog.offer import Offer
    from gpurent.plan.scenarios import Scenario

EXIT_INFEASIBLE = 3

HELP = {
    "serve": "Plan a service instead of a job: the cheapest fleet of replicas meeting the "
    "SLOs at --rate (workload from --preset llama3-8b-chat|llama3-70b-chat, --model, or "
    "--workload FILE with a [serve] table). See docs/serving-plan.md.",
    "rate": "Serving: requests per second to serve (Poisson).",
    "prompt_tokens": "Serving: prompt lengths: 512, 'uniform 128-2048' or 'histogram FILE'.",
    "output_tokens": "Serving: output lengths, as --prompt-tokens.",
    "ttft_p50_ms": "Serving SLO: median time to first token, ms.",
    "ttft_p99_ms": "Serving SLO: 99th percentile time to first token, ms.",
    "tpot_ms": "Serving SLO: 99th percentile time per output token, ms.",
    "e2e_p99_s": "Serving SLO: 99th percentile end-to-end latency, s.",
    "engine": "Serving engine: vllm, sglang, tensorrt-llm, tgi.",
    "quantization": "Serving weights: bf16, fp16, fp8, int8, awq-int4, gptq-int4, nvfp4.",
    "set": "Serving field KEY=VALUE (repeatable), as `gpurent estimate --serve --set`.",
    "traffic_profile": "Serving: a CSV of 24 rows `hour,share` (share of the day's requests; "
    "--rate is the daily mean) or `hour,req_s`: the replica schedule per hour and its cost.",
    "spot": "Serving: also price replicas at spot, with extra replicas for the share of time "
    "interrupted replicas are down (cloud/spot_defaults rates and restart times).",
    "headroom": "Serving: share of each replica's SLO load kept spare (default 0.1).",
}


def run_serve_plan(
    flags: ServeFlags,
    *,
    scenario: Scenario | None,
    offers: tuple[Offer, ...],
    offer_filter: OfferFilter,
    top: int,
    spot_rate: float | None,
    restart_s: float | None,
    as_json: bool,
    as_csv: bool,
    markdown: bool,
    html: Path | None,
) -> None:
    """Plan serving for the flags over the offers and print it as a table, JSON, CSV or Markdown."""
    from gpurent.report import serve_plan_text as txt
    from gpurent.report.serve_plan_json import serve_plan_to_dict
    from gpurent.userdata import now_utc

    plan = serve_plan(
        flags,
        scenario=scenario,
        offers=offers,
        offer_filter=offer_filter,
        top=top,
        spot_rate=spot_rate,
        restart_s=restart_s,
    )
    now = now_utc()
    if html is not None:
        files.write_text(html, txt.render_html(plan))
    if as_json:
        print_json(serve_plan_to_dict(plan, now))
    elif as_csv:
        typer.echo(txt.render_csv(plan), nl=False)
    elif markdown:
        typer.echo(txt.render_markdown(plan))
    else:
        _terminal(plan)
    if html is not None:
        err_console.print(f"wrote {html}", highlight=False)
    if not plan.feasible:
        raise fail(plan.infeasible_line(), EXIT_INFEASIBLE)


def _terminal(plan: Any) -> None:
    from rich.table import Table

    from gpurent.report import serve_plan_text as txt

    console.print(txt.title(plan), style="bold", markup=False, highlight=False)
    if not plan.feasible:
        return
    for line in txt.explanation_lines(plan):
        console.print(line, markup=False, highlight=False)
    table = Table(title="cheapest per month first (80% ranges from the serving model)")
    for h in txt.SHORT_HEADERS:
        table.add_column(h, justify="left" if h in ("offer", "fleet") else "right")
    for c in plan.top:
        table.add_row(*txt.short_row(c))
    console.print(table)
    best = plan.best
    if best is not None and best.schedule is not None:
        sched = Table(title="replica schedule of the pick")
        for h in txt.SCHEDULE_HEADERS:
            sched.add_column(h, justify="right")
        for r in txt.schedule_rows(best):
            sched.add_row(*r)
        console.print(sched)
    console.print("Assumptions", style="bold")
    for a in plan.assumptions:
        console.print(f"- {a}", markup=False, highlight=False)
    if plan.price_as_of:
        console.print(f"- prices dated {', '.join(plan.price_as_of)}", markup=False)


def offer_filter_from(
    *,
    provider: str | None,
    exclude_provider: str | None,
    gpus: tuple[str, ...],
    regions: tuple[str, ...],
    exclude_regions: tuple[str, ...],
    min_gpu_memory_gib: float | None,
    max_price_usd_per_hour: float | None,
) -> OfferFilter:
    """The offer filter from the plan command's provider, GPU, region and limit flags."""
    return OfferFilter(
        providers=tuple(p.lower() for p in split_list(provider)),
        exclude_providers=tuple(p.lower() for p in split_list(exclude_provider)),
        gpus=gpus,
        regions=regions,
        exclude_regions=exclude_regions,
        min_gpu_memory_gib=min_gpu_memory_gib,
        max_price_usd_per_hour=max_price_usd_per_hour,
    )


__all__ = [
    "DEFAULT_SERVING_PRESET",
    "HELP",
    "OfferFilter",
    "ServeFlags",
    "offer_filter_from",
    "read_traffic_profile",
    "resolve_serving",
    "run_serve_plan",
    "serve_plan",
    "traffic_profile_from_text",
    "wants_serving",
]
