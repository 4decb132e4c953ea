"""The vendors file (TOML or YAML): per provider, the evidence `gpurent vendors score` weighs.

Edge module: it reads the vendors file and the evidence files it names (paths relative to the
vendors file), checks every field once, and returns frozen values; scoring is pure. Layout
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpurent.bench.result import BenchResult, result_from_dict
from gpurent.catalog.specs import find_gpu
from gpurent.errors import GpurentError, InputError, closest
from gpurent.inputs import files
from gpurent.inputs import values as v

CRITERIA: tuple[str, ...] = ("hardware", "network", "elasticity", "cost", "support")
EGRESS_DESTINATIONS: tuple[str, ...] = ("internet", "region", "zone")
NETCHECK_KIND = "gpurent.vendors.netcheck"
NETCHECK_SCHEMA_VERSION = 1

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
_NET_KEYS = ("file", "latency_us", "compliance", "throughput_gbit_s", "target_gbit_s")
_HIDDEN_KEYS = (
    "egress_usd_per_gb",
    "storage_usd_per_gb_month",
    "ip_usd_per_hour",
    "minimum_billing_h",
)
_SUPPORT_KEYS = ("always_24x7", "gpu_experts", "response_time_h")
_CONTRACT_KEYS = ("data_destruction", "upgrade_path", "exit_terms")
_TIER_KEYS = ("below_pct", "credit_pct")
MAX_PROVIDERS = 100
MAX_TIMINGS = 100_000


@dataclass(frozen=True, slots=True, kw_only=True)
class BenchEvidence:
    gpu: str  # the GPU type as the vendors file names it
    path: str  # as shown in messages and reports
    result: BenchResult


@dataclass(frozen=True, slots=True, kw_only=True)
class NetEvidence:
    source: str  # the netcheck file, or "inline"
    latency_p50_us: float | None
    latency_p99_us: float | None
    compliance: float | None  # share of throughput samples >= the contracted rate, 0..1
    throughput_gbit_s: float | None
    target_gbit_s: float | None
    over_rdma: bool  # the latency is the RDMA one (netcheck's rdma.latency_us)


@dataclass(frozen=True, slots=True, kw_only=True)
class HiddenCosts:
    """What the vendors file states; None: not stated (the catalog's billing row is used)."""

    egress_usd_per_gb: tuple[tuple[str, float], ...]
    storage_usd_per_gb_month: float | None
    ip_usd_per_hour: float | None
    minimum_billing_h: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class SupportTerms:
    always_24x7: bool
    gpu_experts: bool
    response_time_h: float


@dataclass(frozen=True, slots=True, kw_only=True)
class SlaTier:
    below_pct: float  # monthly availability below this ...
    credit_pct: float  # ... earns this share of the month's bill as credit


@dataclass(frozen=True, slots=True, kw_only=True)
class ContractFacts:
    data_destruction: str | None
    upgrade_path: str | None
    exit_terms: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Provider:
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
    path: str
    providers: tuple[Provider, ...]
    weights: tuple[tuple[str, float], ...] | None  # as the file states them, unnormalised
    job: ReferenceJob | None


# ---------------------------------------------------------------------------- helpers


def _table(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError(f"{where} must be a table, got {type(value).__name__}")
    return value


def _known(table: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    for key in table:
        if key not in allowed:
            hint = closest(str(key), allowed)
            more = (
                f"; did you mean {', '.join(hint)}?" if hint else f"; known: {', '.join(allowed)}"
            )
            raise InputError(f"{where}: unknown key {str(key)!r}{more}")


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{where} must be a non-empty string, got {value!r}")
    return value.strip()


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise InputError(f"{where} must be true or false, got {value!r}")
    return value


def _opt(table: Mapping[str, Any], key: str, check: Callable[[Any, str], Any], where: str) -> Any:
    return None if key not in table else check(table[key], f"{where}.{key}")


def _evidence_path(base: Path, value: Any, where: str) -> Path:
    text = _text(value, where)
    path = Path(text)
    return path if path.is_absolute() else base / path


def _read_evidence(path: Path, what: str, where: str) -> str:
    try:
        return files.read_text(path, limit_bytes=files.MAX_TEXT_BYTES, what=what)
    except GpurentError as exc:
        raise InputError(f"{where}: {exc.message}") from None


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


def _bench(base: Path, value: Any, where: str) -> tuple[BenchEvidence, ...]:
    out = []
    for gpu, paths in _table(value, where).items():
        at = f"{where}.{gpu}"
        items = [paths] if isinstance(paths, str) else paths
        if not isinstance(items, list) or not items:
            raise InputError(f"{at} must be a path or a list of paths to bench result files")
        for i, item in enumerate(items):
            path = _evidence_path(base, item, f"{at}[{i}]")
            shown = files.shown(path)
            text = _read_evidence(path, "bench result", at)
            try:
                data = files.parse_json(text, shown)
                if isinstance(data, Mapping) and "kind" in data:
                    raise InputError(
                        f"{shown} is a {data['kind']!r} file, not a `gpurent bench --out` result"
                    )
                result = result_from_dict(data, shown)
            except GpurentError as exc:
                raise InputError(f"{at}: {exc.message}") from None
            out.append(
                BenchEvidence(gpu=_gpu_type(str(gpu), result, at, shown), path=shown, result=result)
            )
    return tuple(out)


def _gpu_type(key: str, result: BenchResult, where: str, shown: str) -> str:
    """The GPU type a bench result counts for: the catalog name it recorded (so "H100" and
    "H100 SXM" compare), else the vendors file's key. A CPU run, or a run on a GPU of another
    architecture than the key names, is refused."""
    hw = result.hardware
    if hw.device != "cuda" or hw.gpu_count < 1:
        raise InputError(f"{where}: {shown} is a CPU run (no GPU found); give a GPU bench result")
    recorded = find_gpu(hw.gpu_catalog_name) if hw.gpu_catalog_name else None
    try:
        named = find_gpu(key)
    except GpurentError:
        named = None
    if recorded is not None and named is not None and named.architecture != recorded.architecture:
        raise InputError(
            f"{where}: {shown} ran on {recorded.name} ({recorded.architecture}), not a {key} "
            f"({named.architecture}); put it under its own GPU type"
        )
    return recorded.name if recorded is not None else key


def _latency(value: Any, where: str) -> tuple[float | None, float | None]:
    table = _table(value, where)
    p50 = _opt(table, "p50", v.non_negative, where)
    p99 = _opt(table, "p99", v.non_negative, where)
    return p50, p99


def _netcheck_file(path: Path, where: str) -> NetEvidence:
    shown = files.shown(path)
    text = _read_evidence(path, "netcheck result", where)
    try:
        data = files.parse_json(text, shown)
    except GpurentError as exc:
        raise InputError(f"{where}: {exc.message}") from None
    if not isinstance(data, Mapping) or data.get("kind") != NETCHECK_KIND:
        kind = data.get("kind") if isinstance(data, Mapping) else type(data).__name__
        raise InputError(
            f"{where}: {shown} is not a `gpurent vendors netcheck` result (kind {kind!r}, "
            f"expected {NETCHECK_KIND!r})"
        )
    if data.get("schema_version") != NETCHECK_SCHEMA_VERSION:
        raise InputError(
            f"{where}: {shown}: netcheck schema_version {data.get('schema_version')!r} is not "
            f"{NETCHECK_SCHEMA_VERSION}"
        )
    at = f"{where}: {shown}"
    if "latency_us" not in data:
        raise InputError(f"{at}: missing field 'latency_us'")
    p50, p99 = _latency(data["latency_us"], f"{at}: latency_us")
    over_rdma = False
    rdma = data.get("rdma")
    if isinstance(rdma, Mapping) and isinstance(rdma.get("latency_us"), Mapping):
        p50, p99 = _latency(rdma["latency_us"], f"{at}: rdma.latency_us")
        over_rdma = True
    compliance = data.get("compliance")
    return NetEvidence(
        source=shown,
        latency_p50_us=p50,
        latency_p99_us=p99,
        compliance=None if compliance is None else v.fraction(compliance, f"{at}: compliance"),
        throughput_gbit_s=_opt(data, "throughput_gbit_s", _opt_non_negative, at),
        target_gbit_s=_opt(data, "target_gbit_s", _opt_non_negative, at),
        over_rdma=over_rdma,
    )


def _opt_non_negative(value: Any, where: str) -> float | None:
    return None if value is None else v.non_negative(value, where)


def _network(base: Path, value: Any, where: str) -> tuple[NetEvidence, ...]:
    items = [value] if isinstance(value, Mapping) else value
    if not isinstance(items, list):
        raise InputError(f"{where} must be a table or a list of tables")
    out = []
    for i, item in enumerate(items):
        at = f"{where}[{i}]"
        table = _table(item, at)
        _known(table, _NET_KEYS, at)
        if "file" in table:
            if len(table) > 1:
                raise InputError(f"{at}: give either file or inline values, not both")
            out.append(_netcheck_file(_evidence_path(base, table["file"], f"{at}.file"), at))
            continue
        p50, p99 = (None, None)
        if "latency_us" in table:
            p50, p99 = _latency(table["latency_us"], f"{at}.latency_us")
        compliance = _opt(table, "compliance", v.fraction, at)
        if p50 is None and p99 is None and compliance is None:
            raise InputError(f"{at}: give file, latency_us = {{p50, p99}} or compliance")
        out.append(
            NetEvidence(
                source="inline",
                latency_p50_us=p50,
                latency_p99_us=p99,
                compliance=compliance,
                throughput_gbit_s=_opt(table, "throughput_gbit_s", v.non_negative, at),
                target_gbit_s=_opt(table, "target_gbit_s", v.non_negative, at),
                over_rdma=False,
            )
        )
    return tuple(out)


def _timings(values: Any, where: str) -> tuple[float, ...]:
    if not isinstance(values, list) or not values:
        raise InputError(f"{where} must be a non-empty list of seconds")
    if len(values) > MAX_TIMINGS:
        raise InputError(f"{where}: more than {MAX_TIMINGS} timings")
    return tuple(v.positive(t, f"{where}[{i}]") for i, t in enumerate(values))


def _timings_file(path: Path, where: str) -> tuple[float, ...]:
    shown = files.shown(path)
    text = _read_evidence(path, "scale-out timings", where)
    if path.suffix.lower() == ".json":
        return _timings(files.parse_json(text, shown), f"{where}: {shown}")
    cells: list[Any] = []
    for line_no, line in enumerate(text.splitlines(), start=1):
        cell = line.split("#", 1)[0].strip().split(",")[0].strip()
        if not cell or (not cells and cell.lower() in ("seconds", "scale_out_s", "s")):
            continue  # blank, comment or a header
        try:
            cells.append(float(cell))
        except ValueError:
            raise InputError(
                f"{where}: {shown}:{line_no}: not a number of seconds: {cell[:40]!r}"
            ) from None
    return _timings(cells, f"{where}: {shown}")


def _hidden(value: Any, where: str) -> HiddenCosts:
    table = _table(value, where)
    _known(table, _HIDDEN_KEYS, where)
    egress: list[tuple[str, float]] = []
    if "egress_usd_per_gb" in table:
        at = f"{where}.egress_usd_per_gb"
        for dest, rate in _table(table["egress_usd_per_gb"], at).items():
            if dest not in EGRESS_DESTINATIONS:
                raise InputError(
                    f"{at}: unknown destination {dest!r} (known: {', '.join(EGRESS_DESTINATIONS)})"
                )
            egress.append((str(dest), v.non_negative(rate, f"{at}.{dest}")))
    return HiddenCosts(
        egress_usd_per_gb=tuple(egress),
        storage_usd_per_gb_month=_opt(table, "storage_usd_per_gb_month", v.non_negative, where),
        ip_usd_per_hour=_opt(table, "ip_usd_per_hour", v.non_negative, where),
        minimum_billing_h=_opt(table, "minimum_billing_h", v.non_negative, where),
    )


def _support(value: Any, where: str) -> SupportTerms:
    table = _table(value, where)
    _known(table, _SUPPORT_KEYS, where)
    for key in _SUPPORT_KEYS:
        if key not in table:
            raise InputError(f"{where}: missing {key} (give all of {', '.join(_SUPPORT_KEYS)})")
    return SupportTerms(
        always_24x7=_bool(table["always_24x7"], f"{where}.always_24x7"),
        gpu_experts=_bool(table["gpu_experts"], f"{where}.gpu_experts"),
        response_time_h=v.positive(table["response_time_h"], f"{where}.response_time_h"),
    )


def sla_tiers(doc: Any, where: str) -> tuple[SlaTier, ...]:
    """`[[tier]] below_pct = 99.9  credit_pct = 10` tables (the `vendors sla` terms format)."""
    table = _table(doc, where)
    _known(table, ("tier",), where)
    tiers = table.get("tier")
    if not isinstance(tiers, list) or not tiers:
        raise InputError(f"{where}: give one or more [[tier]] tables (below_pct, credit_pct)")
    out = []
    for i, tier in enumerate(tiers):
        at = f"{where}.tier[{i}]"
        t = _table(tier, at)
        _known(t, _TIER_KEYS, at)
        for key in _TIER_KEYS:
            if key not in t:
                raise InputError(f"{at}: missing {key}")
        out.append(
            SlaTier(
                below_pct=v.percent(t["below_pct"], f"{at}.below_pct"),
                credit_pct=v.percent(t["credit_pct"], f"{at}.credit_pct"),
            )
        )
    return tuple(out)


def _sla(base: Path, value: Any, where: str) -> tuple[tuple[SlaTier, ...], str]:
    if isinstance(value, str):
        path = _evidence_path(base, value, where)
        shown = files.shown(path)
        text = _read_evidence(path, "SLA terms", where)
        doc = files.parse_toml(text, f"{where}: {shown}")
        return sla_tiers(doc, f"{where}: {shown}"), shown
    return sla_tiers(value, where), "inline"


def _contract(value: Any, where: str) -> ContractFacts:
    table = _table(value, where)
    _known(table, _CONTRACT_KEYS, where)
    return ContractFacts(
        data_destruction=_opt(table, "data_destruction", _text, where),
        upgrade_path=_opt(table, "upgrade_path", _text, where),
        exit_terms=_opt(table, "exit_terms", _text, where),
    )


# ---------------------------------------------------------------------------- the file


def reference_job(table: Mapping[str, Any], where: str) -> ReferenceJob:
    _known(table, _JOB_KEYS, where)
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
    table = _table(value, where)
    if "name" not in table:
        raise InputError(f"{where}: missing name")
    name = _text(table["name"], f"{where}.name")
    at = f"{where} ({name})"
    _known(table, _PROVIDER_KEYS, at)
    if "scale_out_s" in table and "scale_out_file" in table:
        raise InputError(f"{at}: give scale_out_s or scale_out_file, not both")
    timings: tuple[float, ...] = ()
    timings_source: str | None = None
    if "scale_out_s" in table:
        timings, timings_source = _timings(table["scale_out_s"], f"{at}.scale_out_s"), "inline"
    elif "scale_out_file" in table:
        path = _evidence_path(base, table["scale_out_file"], f"{at}.scale_out_file")
        timings, timings_source = _timings_file(path, f"{at}.scale_out_file"), files.shown(path)
    tiers: tuple[SlaTier, ...] = ()
    sla_source: str | None = None
    if "sla" in table:
        tiers, sla_source = _sla(base, table["sla"], f"{at}.sla")
    catalog = _opt(table, "catalog", _text, at)
    return Provider(
        name=name,
        catalog_provider=None if catalog is None else catalog.lower(),
        gpu_usd_per_hour=_opt(table, "gpu_usd_per_hour", v.positive, at),
        bench=_bench(base, table["bench"], f"{at}.bench") if "bench" in table else (),
        network=_network(base, table["netcheck"], f"{at}.netcheck") if "netcheck" in table else (),
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
    table = _table(doc, where)
    _known(table, _TOP_KEYS, where)
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
        weights = weights_table(_table(table["weights"], f"{where}: weights"), f"{where}: weights")
    job = None
    if "job" in table:
        job = reference_job(_table(table["job"], f"{where}: job"), f"{where}: job")
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
