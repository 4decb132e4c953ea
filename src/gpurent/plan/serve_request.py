"""The request of a serving plan (`gpurent plan --serve`, `--scenario inference`, and
`POST /api/plan/serve`): the serving flags, the offer filter, the serving workload they name,
the traffic profile, and the plan itself. An edge module: it reads the workload file or the
traffic profile file when the flags name one (the API sends neither as a path)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpurent.errors import InputError, NotFoundError
from gpurent.inputs import files
from gpurent.inputs import values as v

if TYPE_CHECKING:
    from gpurent.catalog.offer import Offer
    from gpurent.plan.scenarios import Scenario
    from gpurent.plan.serving import ServePlan, TrafficProfile
    from gpurent.workload.serving import ServingWorkload

DEFAULT_SERVING_PRESET = "llama3-8b-chat"  # `--scenario inference` with no workload given


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeFlags:
    """The serving flags of `gpurent plan --serve`, as given (None: not given)."""

    preset: str | None = None
    workload_file: Path | None = None
    model: str | None = None
    rate: float | None = None
    prompt_tokens: str | None = None
    output_tokens: str | None = None
    ttft_p50_ms: float | None = None
    ttft_p99_ms: float | None = None
    tpot_ms: float | None = None
    e2e_p99_s: float | None = None
    engine: str | None = None
    quantization: str | None = None
    sets: tuple[str, ...] = ()
    traffic_profile: Path | None = None
    traffic_profile_csv: str | None = None  # the profile's text (the API sends it, not a path)
    spot: bool = False
    headroom: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class OfferFilter:
    """Which offers a plan may use: providers, GPUs, regions, memory and price limits."""

    providers: tuple[str, ...] = ()
    exclude_providers: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    exclude_regions: tuple[str, ...] = ()
    min_gpu_memory_gib: float | None = None
    max_price_usd_per_hour: float | None = None

    def keep(self, o: Offer) -> bool:
        """Whether offer o passes every filter."""
        from gpurent.plan.constraints import region_matches

        price = o.price_usd_per_hour or o.spot_price_usd_per_hour
        return (
            (not self.providers or o.provider in self.providers)
            and o.provider not in self.exclude_providers
            and (not self.gpus or o.gpu_name in self.gpus)
            and (not self.regions or region_matches(o.region, self.regions))
            and not (self.exclude_regions and region_matches(o.region, self.exclude_regions))
            and (self.min_gpu_memory_gib is None or o.gpu_memory_gib >= self.min_gpu_memory_gib)
            and (
                self.max_price_usd_per_hour is None
                or (price is not None and price <= self.max_price_usd_per_hour)
            )
        )


def wants_serving(workload_file: Path | None) -> bool:
    """A workload file with a `[serve]` table (TOML) or a top-level `serve:` mapping (YAML) is
    a serving workload (`plan -w chat.toml`)."""
    suffix = workload_file.suffix.lower() if workload_file is not None else ""
    if workload_file is None or suffix not in (".toml", ".yaml", ".yml"):
        return False
    try:
        text = files.read_text(workload_file, limit_bytes=files.MAX_CONFIG_BYTES, what="file")
    except Exception:  # the training path reports the real error
        return False
    if suffix == ".toml":
        return any(line.strip().replace(" ", "") == "[serve]" for line in text.splitlines())
    return any(line.rstrip().startswith("serve:") for line in text.splitlines())


def resolve_serving(flags: ServeFlags, scenario: Scenario | None) -> ServingWorkload:
    """The serving workload from one of --preset / --workload / --model (the default preset
    for `--scenario inference`), with the flags' fields on top."""
    from gpurent.workload.models import get_model
    from gpurent.workload.presets import list_serving_presets, serving_preset
    from gpurent.workload.serving import ServingWorkload, load_serving, parse_overrides
    from gpurent.workload.serving import serving_from_mapping as from_mapping

    given = [
        f
        for f, x in (
            ("--preset", flags.preset),
            ("--workload", flags.workload_file),
            ("--model", flags.model),
        )
        if x
    ]
    if len(given) > 1:
        raise InputError(f"give one of {', '.join(given)}, not several")
    if flags.workload_file is not None:
        wl = load_serving(flags.workload_file)
    elif flags.model is not None:
        model = get_model(flags.model)
        wl = ServingWorkload(model=model.name, name=model.name)
    elif flags.preset is not None or scenario is not None:
        name = flags.preset or DEFAULT_SERVING_PRESET
        if name.lower() not in list_serving_presets():
            raise NotFoundError("serving preset", name, list_serving_presets())
        wl = serving_preset(name)
    else:
        raise InputError(
            "say what to serve: --preset llama3-8b-chat, --model NAME or --workload FILE "
            "(a [serve] table)"
        )
    fields: tuple[tuple[str, str, Any], ...] = (
        ("--rate", "request_rate", flags.rate),
        ("--prompt-tokens", "prompt_tokens", flags.prompt_tokens),
        ("--output-tokens", "output_tokens", flags.output_tokens),
        ("--ttft-p50-ms", "ttft_p50_ms", flags.ttft_p50_ms),
        ("--ttft-p99-ms", "ttft_p99_ms", flags.ttft_p99_ms),
        ("--tpot-ms", "tpot_ms", flags.tpot_ms),
        ("--e2e-p99-s", "e2e_p99_s", flags.e2e_p99_s),
        ("--engine", "engine", flags.engine),
        ("--quantization", "weights", flags.quantization),
    )
    for flag, key, value in fields:
        if value is not None:  # one at a time, so that an error names its flag
            wl = from_mapping({key: value}, flag, base=wl)
    if flags.sets:
        wl = from_mapping(parse_overrides(list(flags.sets)), "--set", base=wl)
    return wl


def read_traffic_profile(path: Path, mean_rate_per_s: float | None) -> TrafficProfile:
    """24 rows `hour,share` (scaled to the daily mean `mean_rate_per_s`) or `hour,req_s`."""
    text = files.read_text(path, limit_bytes=files.MAX_CONFIG_BYTES, what="traffic profile")
    return traffic_profile_from_text(text, files.shown(path), mean_rate_per_s)


def traffic_profile_from_text(
    text: str, where: str, mean_rate_per_s: float | None
) -> TrafficProfile:
    """A traffic profile CSV's text (`where` names it in errors), as `read_traffic_profile`."""
    from gpurent.plan.serving import TrafficProfile, profile_from_shares

    rows = [r for r in csv.reader(io.StringIO(text)) if r and not r[0].lstrip().startswith("#")]
    if not rows:
        raise InputError(f"{where}: empty; write a header `hour,share` or `hour,req_s`")
    header = [h.strip().lower() for h in rows[0]]
    kinds = {"share": "share", "req_s": "rate", "req/s": "rate", "rate": "rate", "rps": "rate"}
    if len(header) != 2 or header[0] != "hour" or header[1] not in kinds:
        raise InputError(f"{where}:1: the header must be `hour,share` or `hour,req_s`")
    kind = kinds[header[1]]
    values: dict[int, float] = {}
    for n, r in enumerate(rows[1:], start=2):
        if len(r) != 2:
            raise InputError(f"{where}:{n}: want 2 cells (hour,{header[1]}), got {len(r)}")
        hour = v.non_negative_int(r[0].strip(), f"{where}:{n}: hour", most=23)
        if hour in values:
            raise InputError(f"{where}:{n}: hour {hour} given twice")
        values[hour] = v.non_negative(r[1].strip(), f"{where}:{n}: {header[1]}")
    missing = [h for h in range(24) if h not in values]
    if missing:
        raise InputError(f"{where}: hours {missing[:5]} missing; give one row per hour 0-23")
    series = [values[h] for h in range(24)]
    if sum(series) <= 0:
        raise InputError(f"{where}: every hour is 0; give the traffic of at least one hour")
    if kind == "share":
        if mean_rate_per_s is None:
            raise InputError(f"{where} gives shares: say the daily mean rate with --rate")
        rates = profile_from_shares(series, mean_rate_per_s)
    else:
        rates = tuple(series)
    return TrafficProfile(rates_per_s=tuple(rates), source=where)


def serve_plan(
    flags: ServeFlags,
    *,
    scenario: Scenario | None,
    offers: tuple[Offer, ...],
    offer_filter: OfferFilter,
    top: int,
    spot_rate: float | None,
    restart_s: float | None,
) -> ServePlan:
    """The serving plan for the flags over the offers that pass the filter."""
    from gpurent.plan.serving import DEFAULT_HEADROOM, ServeOptions, plan_serving

    wl = resolve_serving(flags, scenario)
    profile = None
    if flags.traffic_profile is not None:
        profile = read_traffic_profile(flags.traffic_profile, wl.request_rate_per_s)
    elif flags.traffic_profile_csv is not None:
        profile = traffic_profile_from_text(
            flags.traffic_profile_csv, "traffic_profile", wl.request_rate_per_s
        )
    elif wl.request_rate_per_s is None:
        raise InputError(
            f"{wl.name or wl.model}: a serving plan needs a request rate: --rate 20 (req/s), "
            "request_rate in [serve], or --traffic-profile FILE"
        )
    headroom = flags.headroom if flags.headroom is not None else DEFAULT_HEADROOM
    if not 0 <= headroom < 1:
        raise InputError(f"--headroom must be in [0, 1), got {headroom:g}")
    opts = ServeOptions(
        headroom=headroom,
        spot=flags.spot,
        spot_interruptions_per_hour=spot_rate,
        restart_s=restart_s,
        profile=profile,
        top_n=top,
        scenario_gpus=scenario.matrix_gpus if scenario is not None else (),
        scenario_text=scenario.matrix_gpu_text if scenario is not None else "",
    )
    kept = tuple(o for o in offers if offer_filter.keep(o))
    if not kept:
        raise InputError("no catalog offer passes the filters (--provider, --gpu, --region, ...)")
    return plan_serving(wl, kept, opts)
