"""Choose among stored signals: the newest per series, the rate for one instance, zone order.

Pure; ages are computed against a `now` the caller passes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from gpurent.errors import InputError
from gpurent.inputs.times import parse_time
from gpurent.spot.signals.base import SignalKind, SpotSignal, field_error, need_number, need_str

SeriesKey = tuple[str, str, str, str | None, str, SignalKind]


def _key(s: SpotSignal) -> SeriesKey:
    return (s.source.split(":", 1)[0], s.provider, s.region, s.zone, s.instance, s.kind)


def newest(signals: Iterable[SpotSignal]) -> list[SpotSignal]:
    """The newest signal of each series (format, provider, region, zone, instance, kind)."""
    best: dict[SeriesKey, SpotSignal] = {}
    for s in signals:
        k = _key(s)
        if k not in best or s.as_of > best[k].as_of:
            best[k] = s
    return list(best.values())


def merge(old: Sequence[SpotSignal], new: Sequence[SpotSignal]) -> list[SpotSignal]:
    """Old and new signals, a repeated (series, as-of) kept once (the new one)."""
    seen = {(_key(s), s.as_of) for s in new}
    return [s for s in old if (_key(s), s.as_of) not in seen] + list(new)


def signal_from_json(d: object, where: str) -> SpotSignal:
    """A signal as `SpotSignal.as_json` wrote it."""
    kind_name = need_str(d, "kind", where)
    try:
        kind = SignalKind(kind_name)
    except ValueError:
        raise field_error(where, "kind", f"unknown kind {kind_name!r}") from None
    zone = d.get("zone") if isinstance(d, dict) else None
    return SpotSignal(
        source=need_str(d, "source", where),
        as_of=parse_time(need_str(d, "as_of", where), f"{where}: field 'as_of'"),
        provider=need_str(d, "provider", where),
        region=need_str(d, "region", where),
        zone=zone if isinstance(zone, str) and zone else None,
        instance=need_str(d, "instance", where),
        kind=kind,
        value=need_number(d, "value", where, low=0, high=1e6),
        label=need_str(d, "label", where),
    )


def age_text(as_of: datetime, now: datetime) -> str:
    """'3 d old', '5 h old', 'from the future' for a clock that disagrees."""
    s = (now - as_of).total_seconds()
    if s < 0:
        return "dated in the future"
    if s < 3600:
        return f"{s / 60:.0f} min old"
    if s < 2 * 86400:
        return f"{s / 3600:.0f} h old"
    return f"{s / 86400:.0f} d old"


@dataclass(frozen=True, slots=True, kw_only=True)
class ChosenRate:
    """The interruption rate one instance in one region gets from signals, and from which."""

    provider: str
    region: str
    instance: str
    interruptions_per_hour: float
    signal: SpotSignal
    zones: int  # how many zone/region series were combined (the worst is taken)


def _same(a: str, b: str) -> bool:
    return a.strip().lower() == b.strip().lower()


def interruption_rates(signals: Iterable[SpotSignal]) -> list[ChosenRate]:
    """One rate per (provider, region, instance): the newest interruption signal of each series,
    the worst (highest) over the zones and sources of that region."""
    groups: dict[tuple[str, str, str], list[SpotSignal]] = {}
    for s in newest(signals):
        if s.kind is SignalKind.INTERRUPTION_PCT:
            k = (s.provider.lower(), s.region.lower(), s.instance.lower())
            groups.setdefault(k, []).append(s)
    out = []
    for (provider, region, instance), group in sorted(groups.items()):
        worst = max(group, key=lambda s: (s.value, s.as_of))
        rate = worst.interruptions_per_hour
        assert rate is not None
        out.append(
            ChosenRate(
                provider=provider,
                region=region,
                instance=instance,
                interruptions_per_hour=rate,
                signal=worst,
                zones=len(group),
            )
        )
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class ZoneSignal:
    """One zone (or region, where the source has no zones) by its newest signals."""

    provider: str
    region: str
    zone: str | None
    placement_score: SpotSignal | None
    interruption: SpotSignal | None
    spot_price: SpotSignal | None

    @property
    def name(self) -> str:
        """The zone's name, or the region's where the source has no zones."""
        return self.zone or self.region

    @property
    def oldest(self) -> datetime:
        """When the oldest of the zone's signals was published."""
        return min(s.as_of for s in (self.placement_score, self.interruption, self.spot_price) if s)


@dataclass(frozen=True, slots=True, kw_only=True)
class ZoneRanking:
    """Zones for one instance type, best first: the order to try them in."""

    instance: str
    zones: tuple[ZoneSignal, ...]
    rule: str

    @property
    def order(self) -> tuple[str, ...]:
        """The zone names in the order to try them."""
        return tuple(z.name for z in self.zones)


RANK_RULE = (
    "higher placement score first, then lower interruption frequency, then lower spot price; "
    "a zone without a signal of a kind ranks after those with one; a per-region signal applies "
    "to every zone of the region"
)


def rank_zones(
    signals: Iterable[SpotSignal],
    instance: str,
    *,
    provider: str | None = None,
    regions: Sequence[str] = (),
) -> ZoneRanking:
    """Rank the zones (or regions) that have signals for `instance`."""
    picked: dict[tuple[str, str, str | None], dict[SignalKind, SpotSignal]] = {}
    for s in newest(signals):
        if not _same(s.instance, instance):
            continue
        if provider is not None and not _same(s.provider, provider):
            continue
        if regions and not any(_same(s.region, r) for r in regions):
            continue
        slot = picked.setdefault((s.provider, s.region, s.zone), {})
        if s.kind not in slot or s.as_of > slot[s.kind].as_of:
            slot[s.kind] = s
    if not picked:
        where = f" from {provider}" if provider else ""
        where += f" in {', '.join(regions)}" if regions else ""
        raise InputError(
            f"no stored spot signal for {instance!r}{where}; import one with "
            "`gpurent spot signals import FILE` or pass trace files"
        )
    # a per-region signal (the advisor's, Azure's) applies to the zones of that region, which
    # then stand in for the region's own row
    for (p, r, z), kinds in picked.items():
        regional = picked.get((p, r, None))
        if z is not None and regional is not None:
            for kind, sig in regional.items():
                kinds.setdefault(kind, sig)
    zoned = {(p, r) for (p, r, z) in picked if z is not None}
    picked = {k: v for k, v in picked.items() if k[2] is not None or k[:2] not in zoned}
    zones = [
        ZoneSignal(
            provider=p,
            region=r,
            zone=z,
            placement_score=kinds.get(SignalKind.PLACEMENT_SCORE),
            interruption=kinds.get(SignalKind.INTERRUPTION_PCT),
            spot_price=kinds.get(SignalKind.SPOT_PRICE),
        )
        for (p, r, z), kinds in picked.items()
    ]
    inf = float("inf")

    def order(z: ZoneSignal) -> tuple[float, float, float, str]:
        return (
            -z.placement_score.value if z.placement_score else inf,
            z.interruption.value if z.interruption else inf,
            z.spot_price.value if z.spot_price else inf,
            z.name,
        )

    zones.sort(key=order)
    return ZoneRanking(instance=instance, zones=tuple(zones), rule=RANK_RULE)
