"""Record an availability trace by trying to acquire spot capacity: `gpurent spot probe`.

Every `interval_s` a round tries each zone once through `attempt(zone)` (True = an instance was
created). Rounds are on a fixed grid from the first one (round r starts at t0 + r x interval, or
as soon as the previous round ends if it overran), so the rows fall on the ticks that
`spot simulate` reads back from the probe CSV `time,zone,requested,created`. The run stops after
`max_attempts` rounds or when the next round would start `max_duration_s` or more after the
first, whichever comes first. The clock, the sleep and the attempt are injected: the CLI passes
the real ones and a subprocess, tests pass fakes. Pure logic, no I/O of its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from gpurent.errors import InputError

PROBE_HEADER = "time,zone,requested,created"


@dataclass(frozen=True, slots=True, kw_only=True)
class ProbeLimits:
    """How often and how long to probe: every `interval_s`, at most `max_attempts` rounds and
    `max_duration_s` from the first round."""

    interval_s: float
    max_attempts: int
    max_duration_s: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.interval_s) and self.interval_s > 0):
            raise InputError(f"--interval must be > 0 s, got {self.interval_s}")
        if self.max_attempts < 1:
            raise InputError(f"--max-attempts must be >= 1, got {self.max_attempts}")
        if not (math.isfinite(self.max_duration_s) and self.max_duration_s > 0):
            raise InputError(f"--max-duration must be > 0 s, got {self.max_duration_s}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ProbeRow:
    """One attempt: at `time` (the round's start), in `zone`, 1 requested, `created` 0 or 1."""

    time: datetime
    zone: str
    requested: int
    created: int

    def csv_line(self) -> str:
        """The attempt as one CSV line: time, zone, requested, created."""
        return f"{self.time.isoformat()},{self.zone},{self.requested},{self.created}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ProbeResult:
    """A capacity probe: one row per attempt, the rounds run, and what stopped it."""

    rows: tuple[ProbeRow, ...]
    rounds: int
    stopped_by: str  # "max-attempts" or "max-duration"


def probe_csv(rows: Sequence[ProbeRow]) -> str:
    """The probe CSV `spot simulate --trace` reads."""
    return "\n".join([PROBE_HEADER, *(r.csv_line() for r in rows)]) + "\n"


def _check_zones(zones: Sequence[str]) -> None:
    if not zones:
        raise InputError("give at least one --zone")
    for z in zones:
        if not z.strip() or any(c in z for c in ",\n\r\"'"):
            raise InputError(f"--zone {z!r} must be a non-empty name without commas or quotes")
    if len(set(zones)) != len(zones):
        raise InputError(f"--zone repeats ({', '.join(zones)}); give each zone once")


def run_probe(
    zones: Sequence[str],
    attempt: Callable[[str], bool],
    limits: ProbeLimits,
    *,
    now: Callable[[], datetime],
    sleep: Callable[[float], None],
    on_round: Callable[[Sequence[ProbeRow]], None] | None = None,
) -> ProbeResult:
    """Probe `zones` round by round (module docstring); `on_round(rows so far)` after each."""
    _check_zones(zones)
    rows: list[ProbeRow] = []
    t0 = now()
    rounds = 0
    limit = timedelta(seconds=limits.max_duration_s)
    while True:
        start = now()
        for zone in zones:
            ok = attempt(zone)
            rows.append(ProbeRow(time=start, zone=zone, requested=1, created=1 if ok else 0))
        rounds += 1
        if on_round is not None:
            on_round(rows)
        if rounds >= limits.max_attempts:
            stopped = "max-attempts"
            break
        due = t0 + timedelta(seconds=rounds * limits.interval_s)
        if due - t0 >= limit:
            stopped = "max-duration"
            break
        wait = (due - now()).total_seconds()
        if wait > 0:
            sleep(wait)
        if now() - t0 >= limit:
            stopped = "max-duration"
            break
    return ProbeResult(rows=tuple(rows), rounds=rounds, stopped_by=stopped)
