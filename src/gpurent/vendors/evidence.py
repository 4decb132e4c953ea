"""Evidence files a vendors file names, read and checked: `gpurent bench --out` results (by GPU
type), `gpurent vendors netcheck` results or inline network values, scale-out timings (inline or
a file) and SLA terms (`[[tier]]`, the `vendors sla` format). Paths are relative to the vendors
file; each problem is one InputError line naming the field and the file."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpurent.bench.result import BenchResult, result_from_dict
from gpurent.catalog.specs import find_gpu
from gpurent.errors import GpurentError, InputError
from gpurent.inputs import files
from gpurent.inputs import values as v
from gpurent.vendors.fields import (
    as_table,
    check_known,
    evidence_path,
    opt_field,
    read_evidence,
)

NETCHECK_KIND = "gpurent.vendors.netcheck"
NETCHECK_SCHEMA_VERSION = 1
_NET_KEYS = ("file", "latency_us", "compliance", "throughput_gbit_s", "target_gbit_s")
_TIER_KEYS = ("below_pct", "credit_pct")
MAX_TIMINGS = 100_000


@dataclass(frozen=True, slots=True, kw_only=True)
class BenchEvidence:
    """One bench result file given as evidence for a GPU type."""

    gpu: str  # the GPU type as the vendors file names it
    path: str  # as shown in messages and reports
    result: BenchResult


@dataclass(frozen=True, slots=True, kw_only=True)
class NetEvidence:
    """Network evidence: latency percentiles, throughput against the contracted rate."""

    source: str  # the netcheck file, or "inline"
    latency_p50_us: float | None
    latency_p99_us: float | None
    compliance: float | None  # share of throughput samples >= the contracted rate, 0..1
    throughput_gbit_s: float | None
    target_gbit_s: float | None
    over_rdma: bool  # the latency is the RDMA one (netcheck's rdma.latency_us)


@dataclass(frozen=True, slots=True, kw_only=True)
class SlaTier:
    """One SLA credit tier: availability below below_pct earns credit_pct of the bill."""

    below_pct: float  # monthly availability below this ...
    credit_pct: float  # ... earns this share of the month's bill as credit


def bench_evidence(base: Path, value: Any, where: str) -> tuple[BenchEvidence, ...]:
    """The bench result files of a vendor, by GPU type; InputError naming where if bad."""
    out = []
    for gpu, paths in as_table(value, where).items():
        at = f"{where}.{gpu}"
        items = [paths] if isinstance(paths, str) else paths
        if not isinstance(items, list) or not items:
            raise InputError(f"{at} must be a path or a list of paths to bench result files")
        for i, item in enumerate(items):
            path = evidence_path(base, item, f"{at}[{i}]")
            shown = files.shown(path)
            text = read_evidence(path, "bench result", at)
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
    table = as_table(value, where)
    p50 = opt_field(table, "p50", v.non_negative, where)
    p99 = opt_field(table, "p99", v.non_negative, where)
    return p50, p99


def _netcheck_file(path: Path, where: str) -> NetEvidence:
    shown = files.shown(path)
    text = read_evidence(path, "netcheck result", where)
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
        throughput_gbit_s=opt_field(data, "throughput_gbit_s", _opt_non_negative, at),
        target_gbit_s=opt_field(data, "target_gbit_s", _opt_non_negative, at),
        over_rdma=over_rdma,
    )


def _opt_non_negative(value: Any, where: str) -> float | None:
    return None if value is None else v.non_negative(value, where)


def network_evidence(base: Path, value: Any, where: str) -> tuple[NetEvidence, ...]:
    """The network evidence tables (or netcheck files) of a vendor; InputError naming where."""
    items = [value] if isinstance(value, Mapping) else value
    if not isinstance(items, list):
        raise InputError(f"{where} must be a table or a list of tables")
    out = []
    for i, item in enumerate(items):
        at = f"{where}[{i}]"
        table = as_table(item, at)
        check_known(table, _NET_KEYS, at)
        if "file" in table:
            if len(table) > 1:
                raise InputError(f"{at}: give either file or inline values, not both")
            out.append(_netcheck_file(evidence_path(base, table["file"], f"{at}.file"), at))
            continue
        p50, p99 = (None, None)
        if "latency_us" in table:
            p50, p99 = _latency(table["latency_us"], f"{at}.latency_us")
        compliance = opt_field(table, "compliance", v.fraction, at)
        if p50 is None and p99 is None and compliance is None:
            raise InputError(f"{at}: give file, latency_us = {{p50, p99}} or compliance")
        out.append(
            NetEvidence(
                source="inline",
                latency_p50_us=p50,
                latency_p99_us=p99,
                compliance=compliance,
                throughput_gbit_s=opt_field(table, "throughput_gbit_s", v.non_negative, at),
                target_gbit_s=opt_field(table, "target_gbit_s", v.non_negative, at),
                over_rdma=False,
            )
        )
    return tuple(out)


def timings_list(values: Any, where: str) -> tuple[float, ...]:
    """Scale-out timings in seconds from a list; InputError naming where if empty or bad."""
    if not isinstance(values, list) or not values:
        raise InputError(f"{where} must be a non-empty list of seconds")
    if len(values) > MAX_TIMINGS:
        raise InputError(f"{where}: more than {MAX_TIMINGS} timings")
    return tuple(v.positive(t, f"{where}[{i}]") for i, t in enumerate(values))


def timings_file(path: Path, where: str) -> tuple[float, ...]:
    """Scale-out timings in seconds from a JSON or one-column CSV file."""
    shown = files.shown(path)
    text = read_evidence(path, "scale-out timings", where)
    if path.suffix.lower() == ".json":
        return timings_list(files.parse_json(text, shown), f"{where}: {shown}")
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
    return timings_list(cells, f"{where}: {shown}")


def sla_tiers(doc: Any, where: str) -> tuple[SlaTier, ...]:
    """`[[tier]] below_pct = 99.9  credit_pct = 10` tables (the `vendors sla` terms format)."""
    table = as_table(doc, where)
    check_known(table, ("tier",), where)
    tiers = table.get("tier")
    if not isinstance(tiers, list) or not tiers:
        raise InputError(f"{where}: give one or more [[tier]] tables (below_pct, credit_pct)")
    out = []
    for i, tier in enumerate(tiers):
        at = f"{where}.tier[{i}]"
        t = as_table(tier, at)
        check_known(t, _TIER_KEYS, at)
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


def sla_terms(base: Path, value: Any, where: str) -> tuple[tuple[SlaTier, ...], str]:
    """The SLA tiers, inline or from a TOML file, and where they came from."""
    if isinstance(value, str):
        path = evidence_path(base, value, where)
        shown = files.shown(path)
        text = read_evidence(path, "SLA terms", where)
        doc = files.parse_toml(text, f"{where}: {shown}")
        return sla_tiers(doc, f"{where}: {shown}"), shown
    return sla_tiers(value, where), "inline"
