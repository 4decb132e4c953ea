"""The stored spot signals, an edge module shared by the CLI and the server.

The store is one JSON file, `<data home>/spot/signals.json` (see userdata.py), a list of the
signals as `SpotSignal.as_json` writes them, the newest of each series (format, provider,
region, zone, instance, kind) only. `gpurent spot signals import` writes it; `plan`,
`POST /api/plan` and `spot zones` read it through `load_signals` and `signal_rates_for`.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from gpurent.cloud.spot_defaults import SignalRate
from gpurent.errors import DataError, InputError
from gpurent.inputs import files
from gpurent.userdata import data_home

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from gpurent.catalog.offer import Offer
    from gpurent.spot.signals.base import SpotSignal
    from gpurent.spot.signals.select import ZoneRanking

MAX_STORE_BYTES = 256 * 1024 * 1024


def store_path() -> Path:
    """Where imported spot signals are kept: `$GPURENT_HOME/spot/signals.json`."""
    return data_home() / "spot" / "signals.json"


def load_signals() -> list[SpotSignal]:
    """The stored signals ([] when none were imported)."""
    path = store_path()
    if not path.exists():
        return []  # the common case: nothing imported, the signal parsers never loaded
    from gpurent.spot.signals.select import signal_from_json

    where = files.shown(path)
    text = files.read_text(path, limit_bytes=MAX_STORE_BYTES, error=DataError)
    doc = files.parse_json(text, where, error=DataError)
    if not isinstance(doc, list):
        raise DataError(f"{where}: expected a list of signals; delete the file and re-import")
    return [signal_from_json(d, f"{where}: [{i}]") for i, d in enumerate(doc)]


def save_signals(signals: list[SpotSignal]) -> None:
    """Replace the store with `signals` (written to a temporary file, then renamed)."""
    path = store_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    files.write_text(tmp, json.dumps([s.as_json() for s in signals], indent=0))
    os.replace(tmp, path)


def signal_rates_for(
    offers: Iterable[Offer], now: datetime | None = None
) -> tuple[SignalRate, ...]:
    """Interruption rates from the stored signals for the offers' provider/region/instance,
    each with its source, bucket, as-of time and age at `now` (default: the clock)."""
    signals = load_signals()
    if not signals:
        return ()
    from gpurent.spot.signals.base import RATE_RULE
    from gpurent.spot.signals.select import age_text, interruption_rates

    wanted = {(o.provider.lower(), o.region.lower(), o.instance_type.lower()) for o in offers}
    when = now or datetime.now(UTC)
    out = []
    for c in interruption_rates(signals):
        if (c.provider, c.region, c.instance) not in wanted:
            continue
        s = c.signal
        zones = f", worst of {c.zones} zone series" if c.zones > 1 else ""
        out.append(
            SignalRate(
                provider=c.provider,
                region=c.region,
                instance=c.instance,
                interruptions_per_hour=c.interruptions_per_hour,
                source=f"{s.source} '{s.label}' as of {s.as_of:%Y-%m-%d %H:%M} UTC "
                f"({age_text(s.as_of, when)}{zones})",
                rule=RATE_RULE,
            )
        )
    return tuple(out)


def rank_stored_zones(
    instance: str | None,
    offer: str | None,
    provider: str | None,
    regions: Sequence[str],
) -> ZoneRanking:
    """The zones of one instance type (`instance`, or the one of a provider/instance/region
    `offer`) ranked by the stored signals; only `provider`'s and `regions`' when given."""
    from gpurent.spot.signals.select import rank_zones

    if instance is None and offer is not None:
        parts = offer.split("/")
        if len(parts) == 3:
            provider = provider or parts[0]
            instance = parts[1]
    if instance is None:
        raise InputError(
            "give trace files, or --instance NAME (or --offer) to rank zones by stored signals"
        )
    return rank_zones(load_signals(), instance, provider=provider, regions=tuple(regions))
