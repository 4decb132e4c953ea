"""The vendors file (TOML or YAML): per provider, the evidence `gpurent vendors score` weighs.

Edge module: it reads the vendors file and the evidence files it names (paths relative to the
vendors file; `gpurent.vendors.evidence` reads those), checks every field once, and returns
frozen values; scoring is pure. Layout
(examples/vendors.toml is a documented example):

    [weights]                 # optional; the guide's 30/25/20/15/10 by default
    hardware = 0.30
    [job]                     # optional reference job of the cost criterion (--job overrides)
    hours = 100               # wall hours
    gpus = 8
    egress_gb = 500
    egress_to = "internet"    # internet | region | zone
    storage_gb = 2000
    public_ips = 1

    [[provider]]
    name = "Example A"
    catalog = "aws"           # catalog provider id: billing rules, egress and storage defaults
    gpu_usd_per_hour = 3.93   # price of one GPU-hour for the reference job
    scale_out_s = [210, 260]  # or scale_out_file = "a/scaleout.txt" (JSON list, or one per line)
    bench = { H100 = ["a/bench-h100.json"] }   # `gpurent bench --json --out` files per GPU type
    [[provider.netcheck]]     # a `vendors netcheck` result file, or inline values
    file = "a/netcheck.json"
    [provider.hidden_costs]   # egress_usd_per_gb = {internet=..}, storage_usd_per_gb_month,
                              # ip_usd_per_hour, minimum_billing_h
    [provider.support]        # always_24x7, gpu_experts, response_time_h
    [[provider.sla.tier]]     # or sla = "a/sla.toml" holding [[tier]] tables
    below_pct = 99.9
    credit_pct = 10
    [provider.contract]       # data_destruction, upgrade_path, exit_terms (free text)

Every problem is one `InputError` line naming the file and the field.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpurent.errors import InputError, closest
from gpurent.inputs import files
from gpurent.inputs import values as v
from gpurent.vendors.evidence import (
    BenchEvidence,
    NetEvidence,
    SlaTier,
    bench_evidence,
    network_evidence,
    sla_terms,
    timings_file,
    timings_list,
)
from gpurent.vendors.fields import as_bool, as_table, as_text, check_known, evidence_path, opt_field

CRITERIA: tuple[str, ...] = ("hardware", "network", "elasticity", "cost", "support")
EGRESS_DESTINATIONS: tuple[str, ...] = ("internet", "region", "zone")

_TOP_KEYS = ("weights", "job", "provider")
_PROVIDER_KEYS = (
    "name",
    "catalog",
    "gpu_usd_per_hour",
    "scale_out_s",
    "scale_out_file",
    "bench",
    "netcheck",
    "hidden_costs",
    "support",
    "sla",
    "contract",
)
_JOB_KEYS = ("hours", "gpus", "egress_gb", "egress_to", "storage_gb", "public_ips")
_HIDDEN_KEYS = (
    "egress_usd_per_gb",
    "storage_usd_per_gb_month",
    "ip_usd_per_hour",
    "minimum_billing_h",
)
_SUPPORT_KEYS = ("always_24x7", "gpu_experts", "response_time_h")
_CONTRACT_KEYS = ("data_destruction", "upgrade_path", "exit_terms")
MAX_PROVIDERS = 100


@dataclass(frozen=True, slots=True, kw_only=True)
class HiddenCosts:
    """What the vendors file states; None: not stated (the catalog's billing row is used)."""

    egress_usd_per_gb: tuple[tuple[str, float], ...]
    storage_usd_per_gb_month: float | None
    ip_usd_per_hour: float | None
    minimum_billing_h: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class SupportTerms:
    """A vendor's support: around the clock, GPU experts, response time in hours."""

    always_24x7: bool
    gpu_experts: bool
    response_time_h: float


@dataclass(frozen=True, slots=True, kw_only=True)
class ContractFacts:
    """A vendor's contract terms on data destruction, upgrades and exit, as stated."""

    data_destruction: str | None
    upgrade_path: str | None
    exit_terms: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Provider:
    """One vendor of a vendors file: price, evidence, hidden costs, support and contract."""

    name: str
    catalog_provider: str | None
    gpu_usd_per_hour: float | None
    bench: tuple[BenchEvidence, ...]
    network: tuple[NetEvidence, ...]
    scale_out_s: tuple[float, ...]
    scale_out_source: str | None  # the timings file, "inline", or None without timings
    hidden: HiddenCosts
    support: SupportTerms | None
    sla_tiers: tuple[SlaTier, ...]
    sla_source: str | None
    contract: ContractFacts


@dataclass(frozen=True, slots=True, kw_only=True)
class ReferenceJob:
    """The job the cost criterion prices at every provider."""

    hours: float
    gpus: int
    egress_gb: float = 0.0
    egress_to: str = "internet"
    storage_gb: float = 0.0
    public_ips: int = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class VendorsFile:
    """A vendors file as read: its providers, weights and reference job."""

    path: str
    providers: tuple[Provider, ...]
    weights: tuple[tuple[str, float], ...] | None  # as the file states them, unnormalised
    job: ReferenceJob | None


# ---------------------------------------------------------------------------- helpers


def weights_table(table: Mapping[str, Any], where: str) -> tuple[tuple[str, float], ...]:
    """Named weights (unknown criteria refused), each a finite number >= 0."""
    out = []
    for key, value in table.items():
        name = str(key).strip().lower()
        if name not in CRITERIA:
            hint = closest(name, CRITERIA)
            more = f"; did you mean {', '.join(hint)}?" if hint else ""
            raise InputError(
                f"{where}: unknown criterion {name!r}{more} (criteria: {', '.join(CRITERIA)})"
            )
        out.append((name, v.non_negative(value, f"{where}.{name}", most=1e6)))
    return tuple(out)


# ---------------------------------------------------------------------------- evidence


def _hidden(value: Any, where: str) -> HiddenCosts:
    table = as_table(value, where)
    check_known(table, _HIDDEN_KEYS, where)
    egress: list[tuple[str, float]] = []
    if "egress_usd_per_gb" in table:
        at = f"{where}.egress_usd_per_gb"
        for dest, rate in as_table(table["egress_usd_per_gb"], at).items():
            if dest not in EGRESS_DESTINATIONS:
                raise InputError(
                    f"{at}: unknown destination {dest!r} (known: {', '.join(EGRESS_DESTINATIONS)})"
                )
            egress.append((str(dest), v.non_negative(rate, f"{at}.{dest}")))
    return HiddenCosts(
        egress_usd_per_gb=tuple(egress),
        storage_usd_per_gb_month=opt_field(
            table, "storage_usd_per_gb_month", v.non_negative, where
        ),
        ip_usd_per_hour=opt_field(table, "ip_usd_per_hour", v.non_negative, where),
        minimum_billing_h=opt_field(table, "minimum_billing_h", v.non_negative, where),
    )


def _support(value: Any, where: str) -> SupportTerms:
    table = as_table(value, where)
    check_known(table, _SUPPORT_KEYS, where)
    for key in _SUPPORT_KEYS:
        if key not in table:
            raise InputError(f"{where}: missing {key} (give all of {', '.join(_SUPPORT_KEYS)})")
    return SupportTerms(
        always_24x7=as_bool(table["always_24x7"], f"{where}.always_24x7"),
        gpu_experts=as_bool(table["gpu_experts"], f"{where}.gpu_experts"),
        response_time_h=v.positive(table["response_time_h"], f"{where}.response_time_h"),
    )


def _contract(value: Any, where: str) -> ContractFacts:
    table = as_table(value, where)
    check_known(table, _CONTRACT_KEYS, where)
    return ContractFacts(
        data_destruction=opt_field(table, "data_destruction", as_text, where),
        upgrade_path=opt_field(table, "upgrade_path", as_text, where),
        exit_terms=opt_field(table, "exit_terms", as_text, where),
    )


# ---------------------------------------------------------------------------- the file


def reference_job(table: Mapping[str, Any], where: str) -> ReferenceJob:
    """The reference job of a vendors file's table; InputError naming where if bad."""
    check_known(table, _JOB_KEYS, where)
    for key in ("hours", "gpus"):
        if key not in table:
            raise InputError(f"{where}: missing {key}")
    egress_to = str(table.get("egress_to", "internet"))
    if egress_to not in EGRESS_DESTINATIONS:
        raise InputError(
            f"{where}.egress_to must be one of {', '.join(EGRESS_DESTINATIONS)}, got {egress_to!r}"
        )
    return ReferenceJob(
        hours=v.positive(table["hours"], f"{where}.hours", most=1e6),
        gpus=v.positive_int(table["gpus"], f"{where}.gpus", most=1_000_000),
        egress_gb=v.non_negative(table.get("egress_gb", 0.0), f"{where}.egress_gb"),
        egress_to=egress_to,
        storage_gb=v.non_negative(table.get("storage_gb", 0.0), f"{where}.storage_gb"),
        public_ips=v.non_negative_int(table.get("public_ips", 1), f"{where}.public_ips"),
    )


def _provider(base: Path, value: Any, where: str) -> Provider:
    table = as_table(value, where)
    if "name" not in table:
        raise InputError(f"{where}: missing name")
    name = as_text(table["name"], f"{where}.name")
    at = f"{where} ({name})"
    check_known(table, _PROVIDER_KEYS, at)
    if "scale_out_s" in table and "scale_out_file" in table:
        raise InputError(f"{at}: give scale_out_s or scale_out_file, not both")
    timings: tuple[float, ...] = ()
    timings_source: str | None = None
    if "scale_out_s" in table:
        timings, timings_source = timings_list(table["scale_out_s"], f"{at}.scale_out_s"), "inline"
    elif "scale_out_file" in table:
        path = evidence_path(base, table["scale_out_file"], f"{at}.scale_out_file")
        timings, timings_source = timings_file(path, f"{at}.scale_out_file"), files.shown(path)
    tiers: tuple[SlaTier, ...] = ()
    sla_source: str | None = None
    if "sla" in table:
        tiers, sla_source = sla_terms(base, table["sla"], f"{at}.sla")
    catalog = opt_field(table, "catalog", as_text, at)
    return Provider(
        name=name,
        catalog_provider=None if catalog is None else catalog.lower(),
        gpu_usd_per_hour=opt_field(table, "gpu_usd_per_hour", v.positive, at),
        bench=bench_evidence(base, table["bench"], f"{at}.bench") if "bench" in table else (),
        network=network_evidence(base, table["netcheck"], f"{at}.netcheck")
        if "netcheck" in table
        else (),
        scale_out_s=timings,
        scale_out_source=timings_source,
        hidden=_hidden(table.get("hidden_costs", {}), f"{at}.hidden_costs"),
        support=_support(table["support"], f"{at}.support") if "support" in table else None,
        sla_tiers=tiers,
        sla_source=sla_source,
        contract=_contract(table.get("contract", {}), f"{at}.contract"),
    )


def parse_vendors(doc: Any, where: str, base: Path) -> VendorsFile:
    """A parsed vendors document (evidence paths relative to `base`) as a `VendorsFile`."""
    table = as_table(doc, where)
    check_known(table, _TOP_KEYS, where)
    providers_raw = table.get("provider")
    if not isinstance(providers_raw, list) or not providers_raw:
        raise InputError(f"{where}: give one or more [[provider]] tables")
    if len(providers_raw) > MAX_PROVIDERS:
        raise InputError(f"{where}: more than {MAX_PROVIDERS} providers")
    providers = tuple(
        _provider(base, p, f"{where}: provider[{i}]") for i, p in enumerate(providers_raw)
    )
    names = [p.name for p in providers]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise InputError(f"{where}: provider name {dupes[0]!r} given twice; names must differ")
    weights = None
    if "weights" in table:
        weights = weights_table(
            as_table(table["weights"], f"{where}: weights"), f"{where}: weights"
        )
    job = None
    if "job" in table:
        job = reference_job(as_table(table["job"], f"{where}: job"), f"{where}: job")
    return VendorsFile(path=where, providers=providers, weights=weights, job=job)


def load_vendors(path: str | os.PathLike[str]) -> VendorsFile:
    """Read a vendors file (TOML, or YAML by its .yaml/.yml suffix) and its evidence files."""
    p = Path(path)
    where = files.shown(p)
    text = files.read_text(p, limit_bytes=files.MAX_CONFIG_BYTES, what="vendors file")
    if p.suffix.lower() in (".yaml", ".yml"):
        doc = files.parse_yaml(text, where)
    elif p.suffix.lower() == ".json":
        doc = files.parse_json(text, where)
    else:
        doc = files.parse_toml(text, where)
    return parse_vendors(doc, where, p.parent)
