"""`gpurent plan`: what to rent for a job, where, how to pay, and what it costs to finish."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.text import Text

from gpurent.catalog.links import Interconnect
from gpurent.cli import deploy_cmds, plan_serve
from gpurent.cli.common import (
    checked,
    cli_errors,
    console,
    err_console,
    given_flags,
    print_json,
    read_duration_s,
    split_list,
)
from gpurent.cloud.billing import EgressTo
from gpurent.errors import InputError, NotFoundError
from gpurent.inputs import files
from gpurent.inputs import values as v
from gpurent.inputs.choices import parse_choices
from gpurent.plan.constraints import (
    DEFAULT_MAX_GPUS,
    DEFAULT_MAX_NODES,
    DEFAULT_TOP_N,
    Constraints,
    Objective,
    PricingModel,
    Risk,
    parse_regions,
)
from gpurent.plan.scenarios import SCENARIOS, Scenario, get_scenario
from gpurent.pricing.costs import (
    DEFAULT_DOWNLOAD_GBPS,
    DEFAULT_IMAGE_GB,
    DEFAULT_STORAGE_GB_PER_NODE,
    CostAssumptions,
)
from gpurent.textsafe import clean
from gpurent.userdata import now_utc

if TYPE_CHECKING:
    from gpurent.catalog.offer import Offer
    from gpurent.plan.layouts import EstimatorFn
    from gpurent.workload.spec import Workload

EXIT_INFEASIBLE = 3

_HELP = """What to rent for a deep-learning job, where, how to pay, and what it costs to finish.

Enumerates every catalog offer x node count x parallel layout that fits in memory x pricing
model (on-demand, spot with its expected overhead, reserved), ranks them by the objective, and
explains the pick: why, memory per GPU, what limits it, what the alternatives trade. Works
offline on the bundled catalog.

Examples:

  gpurent plan --preset llama-lora

  gpurent plan --scenario inference --json

  gpurent plan --preset bert-large-pretrain --deadline 12h --objective deadline --provider aws,gcp

  gpurent plan --workload job.toml --budget 500 --pricing on-demand --html plan.html

Exit codes: 0 a plan; 1 an unusable --catalog file; 2 bad input; 3 nothing meets the request
(the reasons and the closest alternatives are printed).
"""


def parse_duration_s(text: str, flag: str = "--deadline") -> float:
    """'3d', '72h', '90min', '1.5w', '3600s'; a bare number is hours."""
    value = read_duration_s(text)
    if value is None:
        raise InputError(f"{flag}: cannot read {text!r} as a duration; use e.g. 3d, 72h, 90min")
    if value <= 0:
        raise InputError(f"{flag} must be positive, got {text!r}")
    return value


E = TypeVar("E", Objective, PricingModel, Interconnect, Risk, EgressTo)


def _enum_list(kind: type[E], text: str, flag: str) -> tuple[E, ...]:
    return parse_choices(kind, text, what=flag.removeprefix("--"), where=flag)


def _enum_one(kind: type[E], text: str, flag: str) -> E:
    chosen = _enum_list(kind, text, flag)
    if len(chosen) != 1:
        raise InputError(f"{flag} takes one value")
    return chosen[0]


def load_offers(catalog: Path | None) -> tuple[Offer, ...]:
    """The offers to plan over: `--catalog FILE` (any format `gpurent catalog` reads), else the
    catalogs fetched with `gpurent catalog update` plus the bundled snapshot for the rest.
    Skipped rows are reported on stderr, never guessed."""
    from gpurent.catalog.sources import load_offers as load

    table = load(catalog)
    if catalog is not None and table.skipped:  # the bundled snapshot's skips are documented
        first = table.skipped[0]
        err_console.print(
            f"warning: skipped {len(table.skipped)} unusable row(s) of {table.source} "
            f"(first: {first.file}:{first.line}: {first.reason})",
            highlight=False,
            soft_wrap=True,
        )
    return table.offers


def resolve_workload(
    preset: str | None,
    workload_file: Path | None,
    model: str | None,
    scenario: Scenario | None,
    changes: Mapping[str, Any],
) -> Workload:
    """The workload from exactly one of --preset, --workload, --model (or the scenario's), with
    the workload flags given (`changes`: typed fields, `gpurent.workload.fields`) applied."""
    from gpurent import workload as wl

    given = [
        flag
        for flag, v in (("--preset", preset), ("--workload", workload_file), ("--model", model))
        if v
    ]
    if len(given) > 1:
        raise InputError(f"give one of {', '.join(given)}, not several")
    if workload_file is not None:
        base = wl.load_workload(workload_file)
    elif model is not None:
        from gpurent.workload.models import default_precision

        base = wl.Workload(
            model=model, name=model, precision=default_precision(wl.get_model(model))
        )
    else:
        name = preset or (scenario.default_preset if scenario else None)
        if name is None:
            raise InputError(
                "say what to run: --preset NAME (e.g. llama-lora), --workload FILE, "
                "--model NAME or --scenario training|inference|cost-sensitive"
            )
        base = wl.preset(name)
    return replace(base, **changes)


def _term_hours(text: str) -> float:
    """--commit-term in hours (`gpurent.pricing.payment_options.parse_term_hours`, imported
    only when the flag is given)."""
    from gpurent.pricing.payment_options import parse_term_hours

    return parse_term_hours(text)


def _estimator() -> EstimatorFn:
    """The command's one estimator, with the user's calibration (as `gpurent estimate`)."""
    from gpurent.estimate.calibration_file import load_estimator

    return load_estimator()


_H = {
    "preset": "A workload preset: llama-lora, resnet50-imagenet, bert-large-pretrain, "
    "llm-inference.",
    "workload": "A workload file (TOML/YAML).",
    "model": "A model-zoo name, run with the workload defaults.",
    "task": "training | finetune-full | finetune-lora | finetune-qlora | inference.",
    "tokens": "Amount of work in tokens (LLMs), e.g. 2e9.",
    "epochs": "Epochs over the dataset.",
    "precision": "fp32, strict-fp32, tf32, amp, fp16, bf16, fp8 and its recipes, mxfp8, "
    "nvfp4 (GPUs that cannot run it are skipped; aliases as `gpurent "
    "estimate`). Default: the preset's or file's; for --model, the rule `estimate` uses "
    "(bf16 for LLMs, amp for the rest).",
    "batch": "Micro-batch per GPU (lowered automatically when it does not fit).",
    "scenario": "The guide's scenario matrix: training | inference | cost-sensitive. Sets the "
    "memory floor, interconnect, storage, objective and a default workload.",
    "deadline": "Finish within, e.g. 3d, 72h, 90min (a bare number is hours).",
    "budget": "Most USD to spend on the whole job.",
    "provider": "Only these providers, comma list, e.g. aws,gcp,lambda.",
    "exclude_provider": "Never these providers, comma list, e.g. vast,tensordock.",
    "region": "Only these regions: a name or prefix, case-insensitive (us- matches us-east-1). "
    "Repeat the option or give a comma list (us-,europe-west4); a value that is exactly one "
    "region's whole name is kept whole, commas and all (--region 'Alberta, CA, NA').",
    "exclude_region": "Never these regions; names and prefixes as for --region.",
    "max_price": "Most USD per hour for one instance, on the price paid for its pricing model "
    "(the spot price for spot rows); a hard cap.",
    "max_cluster_price": "Most USD per hour for all the nodes of a candidate together.",
    "gpu": "Only these GPUs, comma list, e.g. H100,A100-80GB.",
    "max_gpus": "Most GPUs in total.",
    "max_nodes": "Most instances (nodes) for one job.",
    "min_mem": "Least memory per GPU, in GiB as the catalog lists it (an 80GB H100 is 80); "
    "--min-vram is the same option.",
    "interconnect": "Between a node's GPUs: nvlink | pcie | infinity-fabric | any (the "
    "catalog's link names: NVLink2-5, PCIe, Infinity Fabric; single-GPU offers always pass).",
    "pricing": "Pricing models to consider, comma list of on-demand, spot, reserved.",
    "objective": "cheapest | fastest | deadline | throughput-per-dollar. Default: deadline "
    "with --deadline, else cheapest (throughput-per-dollar when the workload has no amount).",
    "top": "Rows in the ranked table.",
    "risk": "median | p90: rank by each estimate (median) or by the pessimistic end of its 80% "
    "range (p90 time and cost, the low throughput bound).",
    "storage": f"Block storage per node, GB (default {DEFAULT_STORAGE_GB_PER_NODE:g}; "
    "scenarios set their own).",
    "storage_price": "Storage price, USD per GB-month (default: per provider, stated).",
    "egress": "Data moved out of the cloud, GB (e.g. downloading the trained model).",
    "egress_price": "Egress price, USD per GB (default: per provider, stated).",
    "spot_rate": "Expected spot interruptions per instance-hour (default: per provider, stated).",
    "checkpoint": "Seconds to write one checkpoint (default: from the state size at 1 GiB/s).",
    "restart": "Seconds lost per spot interruption to get a new instance and resume "
    "(default: per provider, stated).",
    "commit": "Price 'reserved' as this fraction off on-demand, e.g. 0.35.",
    "commit_term": "Length of one commitment term, billed whole: 1d, 1w, 1mo, 1y, 3y (default: "
    "the provider's shortest term, e.g. a 1-day AWS Capacity Block; 12 months where none is "
    "recorded). `pricing compare --commit-term` bills the same way.",
    "dataset_gb": "Dataset downloaded to every node before the job starts, GB.",
    "model_gb": "Model weights downloaded to every node before the job starts, GB.",
    "image_gb": "Container image pulled on every node, GB (default 10, stated).",
    "download_gbps": "Most a download reaches per instance, Gbit/s (less where the offer's "
    "network is slower).",
    "egress_to": "Where --egress-gb goes: internet | region (another region) | zone.",
    "csv": "Print the ranked candidates as CSV (one row each, the cost and time breakdown in "
    "columns).",
    "min_availability": "Drop spot and marketplace candidates whose availability confidence "
    "(0-1: the price against the provider's on-demand and the market's usual ratio) is below "
    "this; candidates without such data pass.",
    "catalog": "An offers file: gpurent's CSV or a SkyPilot vms.csv (default: the catalogs "
    "fetched with `gpurent catalog update`, the bundled snapshot for the rest).",
    "json": "Print the plan as JSON (stable format: docs/plan-json-schema.md).",
    "markdown": "Print the plan as Markdown.",
    "html": "Also write a self-contained HTML report with a cost-vs-time chart to this file.",
    "emit": "Also render the plan for an engine: skypilot | dstack | ansible | kubernetes | "
    "slurm | torchrun, into -o DIR (as `gpurent deploy render`; docs/deploy.md).",
    "out": "The directory --emit writes (must not exist or be empty, unless --force).",
}


@cli_errors
@checked(
    candidate=v.bounded(v.positive_int, most=v.MAX_TOP),
    budget=v.positive,
    max_price=v.positive,
    max_cluster_price=v.positive,
    max_gpus=v.bounded(v.positive_int, most=v.MAX_GPUS),
    max_nodes=v.bounded(v.positive_int, most=v.MAX_NODES),
    min_gpu_memory=v.non_negative,
    top=v.bounded(v.positive_int, most=v.MAX_TOP),
    storage_gb=v.non_negative,
    storage_price=v.non_negative,
    egress_gb=v.non_negative,
    egress_price=v.non_negative,
    spot_rate=v.non_negative,
    checkpoint_s=v.bounded(v.non_negative, most=v.MAX_SECONDS),
    restart_s=v.bounded(v.non_negative, most=v.MAX_SECONDS),
    commit_discount=v.fraction,
    dataset_gb=v.non_negative,
    model_gb=v.non_negative,
    image_gb=v.non_negative,
    download_gbps=v.positive,
    min_availability=v.fraction,
    rate=v.positive,
    ttft_p50_ms=v.positive,
    ttft_p99_ms=v.positive,
    tpot_ms=v.positive,
    e2e_p99_s=v.positive,
    headroom=v.fraction,
)
def plan_command(  # noqa: PLR0917 (typer maps each option to a parameter)
    preset: Annotated[str | None, typer.Option("--preset", "-p", help=_H["preset"])] = None,
    workload_file: Annotated[
        Path | None, typer.Option("--workload", "-w", help=_H["workload"], dir_okay=False)
    ] = None,
    model: Annotated[str | None, typer.Option("--model", "-m", help=_H["model"])] = None,
    task: Annotated[str | None, typer.Option("--task", help=_H["task"])] = None,
    tokens: Annotated[float | None, typer.Option("--tokens", help=_H["tokens"])] = None,
    epochs: Annotated[float | None, typer.Option("--epochs", help=_H["epochs"])] = None,
    batch_size: Annotated[int | None, typer.Option("--batch-size", help=_H["batch"])] = None,
    precision: Annotated[str | None, typer.Option("--precision", help=_H["precision"])] = None,
    scenario_name: Annotated[
        str | None, typer.Option("--scenario", "-s", help=_H["scenario"])
    ] = None,
    deadline: Annotated[str | None, typer.Option("--deadline", help=_H["deadline"])] = None,
    budget: Annotated[float | None, typer.Option("--budget", help=_H["budget"])] = None,
    provider: Annotated[str | None, typer.Option("--provider", help=_H["provider"])] = None,
    exclude_provider: Annotated[
        str | None, typer.Option("--exclude-provider", help=_H["exclude_provider"])
    ] = None,
    region: Annotated[
        list[str] | None, typer.Option("--region", help=_H["region"], metavar="REGION")
    ] = None,
    exclude_region: Annotated[
        list[str] | None,
        typer.Option("--exclude-region", help=_H["exclude_region"], metavar="REGION"),
    ] = None,
    max_price: Annotated[
        float | None, typer.Option("--max-price-per-hour", help=_H["max_price"])
    ] = None,
    max_cluster_price: Annotated[
        float | None,
        typer.Option("--max-cluster-price-per-hour", help=_H["max_cluster_price"]),
    ] = None,
    gpu: Annotated[str | None, typer.Option("--gpu", help=_H["gpu"])] = None,
    max_gpus: Annotated[int, typer.Option("--max-gpus", help=_H["max_gpus"])] = DEFAULT_MAX_GPUS,
    max_nodes: Annotated[
        int, typer.Option("--max-nodes", help=_H["max_nodes"])
    ] = DEFAULT_MAX_NODES,
    min_gpu_memory: Annotated[
        float | None, typer.Option("--min-gpu-memory", "--min-vram", help=_H["min_mem"])
    ] = None,
    interconnect: Annotated[
        str | None, typer.Option("--interconnect", help=_H["interconnect"])
    ] = None,
    pricing: Annotated[str, typer.Option("--pricing", help=_H["pricing"])] = "on-demand,spot",
    objective: Annotated[str | None, typer.Option("--objective", help=_H["objective"])] = None,
    top: Annotated[int, typer.Option("--top", "-n", help=_H["top"])] = DEFAULT_TOP_N,
    risk: Annotated[str, typer.Option("--risk", help=_H["risk"])] = "median",
    storage_gb: Annotated[float | None, typer.Option("--storage-gb", help=_H["storage"])] = None,
    storage_price: Annotated[
        float | None, typer.Option("--storage-usd-per-gb-month", help=_H["storage_price"])
    ] = None,
    egress_gb: Annotated[float, typer.Option("--egress-gb", help=_H["egress"])] = 0.0,
    egress_price: Annotated[
        float | None, typer.Option("--egress-usd-per-gb", help=_H["egress_price"])
    ] = None,
    spot_rate: Annotated[
        float | None, typer.Option("--spot-interruptions-per-hour", help=_H["spot_rate"])
    ] = None,
    checkpoint_s: Annotated[
        float | None, typer.Option("--checkpoint-s", help=_H["checkpoint"])
    ] = None,
    restart_s: Annotated[float | None, typer.Option("--restart-s", help=_H["restart"])] = None,
    commit_discount: Annotated[
        float | None, typer.Option("--commit-discount", help=_H["commit"])
    ] = None,
    commit_term: Annotated[
        str | None, typer.Option("--commit-term", help=_H["commit_term"], show_default=False)
    ] = None,
    dataset_gb: Annotated[float, typer.Option("--dataset-gb", help=_H["dataset_gb"])] = 0.0,
    model_gb: Annotated[float, typer.Option("--model-gb", help=_H["model_gb"])] = 0.0,
    image_gb: Annotated[float, typer.Option("--image-gb", help=_H["image_gb"])] = DEFAULT_IMAGE_GB,
    download_gbps: Annotated[
        float, typer.Option("--download-gbps", help=_H["download_gbps"])
    ] = DEFAULT_DOWNLOAD_GBPS,
    egress_to: Annotated[str, typer.Option("--egress-to", help=_H["egress_to"])] = "internet",
    min_availability: Annotated[
        float | None, typer.Option("--min-availability", help=_H["min_availability"])
    ] = None,
    catalog: Annotated[
        Path | None, typer.Option("--catalog", help=_H["catalog"], dir_okay=False)
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help=_H["json"])] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help=_H["csv"])] = False,
    markdown: Annotated[bool, typer.Option("--markdown", help=_H["markdown"])] = False,
    html: Annotated[Path | None, typer.Option("--html", help=_H["html"], dir_okay=False)] = None,
    emit: Annotated[str | None, typer.Option("--emit", help=_H["emit"])] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help=_H["out"], file_okay=False)
    ] = None,
    candidate: Annotated[
        int | None, typer.Option("--candidate", help=deploy_cmds.H["candidate"])
    ] = None,
    command: Annotated[str | None, typer.Option("--command", help=deploy_cmds.H["command"])] = None,
    checkpoint_dir: Annotated[
        str | None, typer.Option("--checkpoint-dir", help=deploy_cmds.H["checkpoint_dir"])
    ] = None,
    requirements: Annotated[
        str | None, typer.Option("--requirements", help=deploy_cmds.H["requirements"])
    ] = None,
    hosts: Annotated[str | None, typer.Option("--hosts", help=deploy_cmds.H["hosts"])] = None,
    force: Annotated[bool, typer.Option("--force", help=deploy_cmds.H["force"])] = False,
    serve: Annotated[bool, typer.Option("--serve", help=plan_serve.HELP["serve"])] = False,
    rate: Annotated[float | None, typer.Option("--rate", help=plan_serve.HELP["rate"])] = None,
    prompt_tokens: Annotated[
        str | None, typer.Option("--prompt-tokens", help=plan_serve.HELP["prompt_tokens"])
    ] = None,
    output_tokens: Annotated[
        str | None, typer.Option("--output-tokens", help=plan_serve.HELP["output_tokens"])
    ] = None,
    ttft_p50_ms: Annotated[
        float | None, typer.Option("--ttft-p50-ms", help=plan_serve.HELP["ttft_p50_ms"])
    ] = None,
    ttft_p99_ms: Annotated[
        float | None, typer.Option("--ttft-p99-ms", help=plan_serve.HELP["ttft_p99_ms"])
    ] = None,
    tpot_ms: Annotated[
        float | None, typer.Option("--tpot-ms", help=plan_serve.HELP["tpot_ms"])
    ] = None,
    e2e_p99_s: Annotated[
        float | None, typer.Option("--e2e-p99-s", help=plan_serve.HELP["e2e_p99_s"])
    ] = None,
    engine: Annotated[str | None, typer.Option("--engine", help=plan_serve.HELP["engine"])] = None,
    quantization: Annotated[
        str | None, typer.Option("--quantization", help=plan_serve.HELP["quantization"])
    ] = None,
    serve_set: Annotated[
        list[str] | None, typer.Option("--set", help=plan_serve.HELP["set"], metavar="KEY=VALUE")
    ] = None,
    traffic_profile: Annotated[
        Path | None,
        typer.Option("--traffic-profile", help=plan_serve.HELP["traffic_profile"], dir_okay=False),
    ] = None,
    spot: Annotated[bool, typer.Option("--spot", help=plan_serve.HELP["spot"])] = False,
    headroom: Annotated[
        float | None, typer.Option("--headroom", help=plan_serve.HELP["headroom"])
    ] = None,
) -> None:
    """Run `gpurent plan` (its help text is _HELP, given to Typer in register)."""
    if (emit is None) != (out is None):
        raise InputError(
            "--emit FORMAT and -o DIR go together: gpurent plan ... --emit skypilot -o job/"
        )
    if emit is not None and emit.lower() not in deploy_cmds.FORMAT_NAMES:
        raise NotFoundError("format", emit, deploy_cmds.FORMAT_NAMES)
    if out is not None:
        deploy_cmds.check_out_dir(out, force=force)  # before planning: fail fast, write nothing
    scenario = get_scenario(scenario_name) if scenario_name else None
    if (
        serve
        or (scenario and scenario.name == "inference")
        or plan_serve.wants_serving(workload_file)
    ):
        if emit is not None:
            raise InputError("--emit renders job plans; a serving plan (--serve) has none yet")
        offers = load_offers(catalog)
        names = {o.gpu_name for o in offers}
        from gpurent.catalog import get_gpu

        known = {o.region for o in offers}
        plan_serve.run_serve_plan(
            plan_serve.ServeFlags(
                preset=preset, workload_file=workload_file, model=model, rate=rate,
                prompt_tokens=prompt_tokens, output_tokens=output_tokens,
                ttft_p50_ms=ttft_p50_ms, ttft_p99_ms=ttft_p99_ms, tpot_ms=tpot_ms,
                e2e_p99_s=e2e_p99_s, engine=engine, quantization=quantization,
                sets=tuple(serve_set or ()), traffic_profile=traffic_profile, spot=spot,
                headroom=headroom,
            ),
            scenario=scenario,
            offers=offers,
            offer_filter=plan_serve.offer_filter_from(
                provider=provider, exclude_provider=exclude_provider,
                gpus=tuple(get_gpu(n, names).name for n in split_list(gpu)),
                regions=parse_regions(region, known),
                exclude_regions=parse_regions(exclude_region, known),
                min_gpu_memory_gib=min_gpu_memory if min_gpu_memory is not None
                else (scenario.min_gpu_memory_gib if scenario else None),
                max_price_usd_per_hour=max_price,
            ),
            top=top, spot_rate=spot_rate, restart_s=restart_s,
            as_json=as_json, as_csv=as_csv, markdown=markdown, html=html,
        )  # fmt: skip
        return
    from gpurent.plan.planner import make_plan
    from gpurent.workload.fields import workload_fields

    raw, flags = given_flags(
        {  # Workload field: (parameter, value given)
            "task": ("task", task),
            "token_budget": ("tokens", tokens),
            "epochs": ("epochs", epochs),
            "batch_size_per_gpu": ("batch_size", batch_size),
            "precision": ("precision", precision or None),
        }
    )
    changes = workload_fields(raw, "flags", flags=flags)
    workload = resolve_workload(preset, workload_file, model, scenario, changes)
    deadline_s = parse_duration_s(deadline) if deadline else None
    if objective:
        goal = _enum_one(Objective, objective, "--objective")
    elif deadline_s is not None:
        goal = Objective.DEADLINE
    elif scenario is not None:
        goal = scenario.objective
    elif not (workload.token_budget or workload.dataset_samples):
        goal = Objective.THROUGHPUT_PER_DOLLAR
    else:
        goal = Objective.CHEAPEST
    link = (
        _enum_one(Interconnect, interconnect, "--interconnect")
        if interconnect
        else (scenario.interconnect if scenario else Interconnect.ANY)
    )
    offers = load_offers(catalog)
    gpus: tuple[str, ...] = ()
    if gpu:  # a GPU with offers but no spec says so, not "did you mean" another GPU
        from gpurent.catalog import get_gpu

        names = {o.gpu_name for o in offers}
        gpus = tuple(get_gpu(name, names).name for name in split_list(gpu))
    constraints = Constraints(
        deadline_s=deadline_s,
        budget_usd=budget,
        providers=tuple(p.lower() for p in split_list(provider)),
        exclude_providers=tuple(p.lower() for p in split_list(exclude_provider)),
        gpus=gpus,
        max_gpus=max_gpus,
        max_nodes=max_nodes,
        min_gpu_memory_gib=(
            min_gpu_memory
            if min_gpu_memory is not None
            else (scenario.min_gpu_memory_gib if scenario else None)
        ),
        interconnect=link,
        pricing=_enum_list(PricingModel, pricing, "--pricing"),
        objective=goal,
        top_n=top,
        risk=_enum_one(Risk, risk, "--risk"),
        max_price_usd_per_hour=max_price,
        max_cluster_price_usd_per_hour=max_cluster_price,
        min_availability=min_availability,
    )
    assumptions = CostAssumptions(
        storage_gb_per_node=(
            storage_gb
            if storage_gb is not None
            else (scenario.storage_gb_per_node if scenario else DEFAULT_STORAGE_GB_PER_NODE)
        ),
        storage_usd_per_gb_month=storage_price,
        egress_gb=egress_gb,
        egress_usd_per_gb=egress_price,
        spot_interruptions_per_hour=spot_rate,
        restart_s=restart_s,
        checkpoint_s=checkpoint_s,
        commit_discount=commit_discount,
        commit_term_hours=_term_hours(commit_term) if commit_term else None,
        dataset_gb=dataset_gb,
        model_gb=model_gb,
        image_gb=image_gb,
        download_gbps=download_gbps,
        egress_to=_enum_one(EgressTo, egress_to, "--egress-to"),
    )
    if spot_rate is None:
        from gpurent.plan.signal_store import signal_rates_for

        assumptions = replace(assumptions, signal_rates=signal_rates_for(offers))
    missing = set(constraints.exclude_providers) - {o.provider for o in offers}
    if missing:  # a typo would otherwise exclude nothing, silently
        err_console.print(
            f"warning: --exclude-provider: no offer from {', '.join(sorted(missing))} in the "
            "catalog; nothing excluded for it",
            highlight=False,
            soft_wrap=True,
        )
    if region or exclude_region:
        known = {o.region for o in offers}
        constraints = replace(
            constraints,
            regions=parse_regions(region, known),
            exclude_regions=parse_regions(exclude_region, known),
        )
    result = make_plan(workload, offers, constraints, assumptions, _estimator(), scenario=scenario)
    from gpurent.report.plan_json import plan_document, price_warnings

    stale = price_warnings(result, now_utc())  # raw in JSON; `clean` for the terminal
    if html is not None:
        from gpurent.report.html import plan_page

        files.write_text(html, plan_page(result))
    if as_json:
        print_json(plan_document(result, assumptions.storage_gb_per_node, stale))
    elif as_csv:
        from gpurent.report.plan_csv import render_csv

        typer.echo(render_csv(result), nl=False)
    elif markdown:
        from gpurent.report.plan_markdown import render_markdown

        typer.echo(render_markdown(result))
        for line in stale:
            typer.echo(f"> warning: {clean(line)}")
    else:
        from gpurent.report.plan_terminal import render_terminal

        render_terminal(result, console)
        for line in stale:
            console.print(Text.assemble(("warning: ", "yellow"), clean(line)))
    if html is not None:
        err_console.print(f"wrote {html}", highlight=False)
    if emit is not None and out is not None:
        from gpurent.report.plan_json import plan_to_dict

        options = deploy_cmds.make_options(
            candidate=candidate,
            command=command,
            checkpoint_dir=checkpoint_dir,
            requirements=requirements,
            storage_gb=None,  # the document's storage_gb_per_node
            zone=None,
            hosts=hosts,
            source="plan",
        )
        spec, rendered = deploy_cmds.emit(
            plan_to_dict(result, storage_gb_per_node=assumptions.storage_gb_per_node),
            emit.lower(),
            out,
            options,
            force=force,
        )
        line = deploy_cmds.summary_line(spec, emit.lower(), out, rendered)
        if as_json:  # stdout holds the plan document alone
            err_console.print(line, highlight=False, soft_wrap=True, markup=False)
        else:
            typer.echo(line)
    if not result.feasible:
        raise typer.Exit(EXIT_INFEASIBLE)


def register(app: typer.Typer) -> None:
    """Attach `gpurent plan` to the root app."""
    app.command("plan", help=_HELP, no_args_is_help=False)(plan_command)


__all__ = ["SCENARIOS", "parse_duration_s", "plan_command", "register"]
