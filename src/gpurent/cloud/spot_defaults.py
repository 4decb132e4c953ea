"""Spot interruption defaults per provider: the one table that plan, pricing and spot share.

Used where the user gives no measured rate (`plan --spot-interruptions-per-hour`, `pricing compare
--mtti-hours`, `spot interval --mtti-hours`) or restart time (`--restart-s`). Each row says where
its figures come from, and each command prints that source in its assumptions. Measured traces
beat these: `gpurent spot interval TRACE...` reports the MTTI of one's own zones.

Pure data, standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass

SECONDS_PER_HOUR = 3600.0

DEFAULT_RESTART_S = 600.0
"""Seconds from interruption to resumed work: provision + set-up + reload (assumed)."""

RESTART_SOURCE = "600 s restart assumed (provision, set-up, reload; no public data)"


@dataclass(frozen=True, slots=True, kw_only=True)
class SpotDefault:
    """One provider's spot defaults: interruptions per instance-hour, restart seconds, sources."""

    provider: str  # "others" for the row used by every provider without its own
    interruptions_per_hour: float
    restart_s: float
    rate_source: str
    restart_source: str = RESTART_SOURCE

    @property
    def source(self) -> str:
        """Where both figures come from, as one phrase."""
        return f"{self.rate_source}; {self.restart_source}"

    @property
    def mtti_hours(self) -> float:
        """Mean time to interruption, hours, for exponential lifetimes at this rate."""
        return 1.0 / self.interruptions_per_hour

    @property
    def mtti_s(self) -> float:
        """Mean time to interruption in seconds."""
        return self.mtti_hours * SECONDS_PER_HOUR


OTHERS = SpotDefault(
    provider="others",
    interruptions_per_hour=0.2,
    restart_s=DEFAULT_RESTART_S,
    rate_source="no public lifetime data: a conservative 0.2/h (MTTI 5 h), twice the AWS figure",
)

SPOT_DEFAULTS: dict[str, SpotDefault] = {
    "aws": SpotDefault(
        provider="aws",
        interruptions_per_hour=0.1,
        restart_s=DEFAULT_RESTART_S,
        rate_source="a 10.4 h mean spot lifetime in the 2023 p3.2xlarge trace "
        "(RESEARCH.md section 3), rounded to 0.1/h (MTTI 10 h)",
    ),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class SignalRate:
    """An interruption rate for one provider/region/instance taken from a published signal
    (`gpurent spot signals import`), used instead of the provider's default row. `source` says
    which signal, its bucket, as-of time and age, and the bucket -> rate rule."""

    provider: str
    region: str
    instance: str
    interruptions_per_hour: float
    source: str
    rule: str = ""  # how the signal became a rate (e.g. bucket midpoint per month)

    def matches(self, provider: str, region: str | None, instance: str | None) -> bool:
        """Whether this rate is for provider, region and instance (names compared case-blind)."""
        return (
            region is not None
            and instance is not None
            and self.provider == provider.strip().lower()
            and self.region == region.strip().lower()
            and self.instance == instance.strip().lower()
        )


def spot_default(provider: str | None) -> SpotDefault:
    """The defaults for `provider` (case-insensitive); the `OTHERS` row when it has none or is
    None."""
    if provider is None:
        return OTHERS
    return SPOT_DEFAULTS.get(provider.strip().lower(), OTHERS)


def describe_default(d: SpotDefault) -> str:
    """'aws: 0.1 interruptions/h per instance (MTTI 10 h), 600 s restart; from ...'."""
    return (
        f"{d.provider}: {d.interruptions_per_hour:g} interruptions/h per instance "
        f"(MTTI {d.mtti_hours:g} h), {d.restart_s:g} s restart; from {d.source}"
    )


def spot_sources(providers: tuple[str, ...]) -> str:
    """Where the defaults of these providers come from: 'aws: a 10.4 h ...; gcp, azure: no ...'."""
    groups: dict[SpotDefault, list[str]] = {}
    for p in providers or (OTHERS.provider,):
        groups.setdefault(spot_default(p), []).append(p)
    return "; ".join(f"{', '.join(names)}: {d.source}" for d, names in groups.items())
