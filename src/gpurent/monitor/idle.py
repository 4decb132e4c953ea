"""Idle action: run a configured shell command once the GPUs have been idle for N minutes.

`IdleWatcher.observe(sample)` is pure state (the time comes from the sample); the command runs
through an injected runner (default: `subprocess.run` with a shell), so tests use a harmless
command writing a file and a scripted clock. Idle means every live GPU at or below the idle
activity threshold; a host without GPUs is never idle (nothing to save).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass

from gpurent.monitor.rules import Thresholds, is_idle
from gpurent.monitor.sample import Sample


@dataclass(frozen=True, slots=True, kw_only=True)
class IdleEvent:
    """An idle action that fired: since when the GPUs were idle, when it fired, the command run."""

    idle_since_s: float
    fired_at_s: float
    command: str
    returncode: int | None
    error: str = ""


def _run_shell(command: str) -> int:
    return subprocess.run(command, shell=True, check=False, timeout=300).returncode


class IdleWatcher:
    """Runs a command once the GPUs have been idle for `idle_minutes` (`monitor --idle-action`)."""

    def __init__(
        self,
        command: str,
        idle_minutes: float,
        *,
        thresholds: Thresholds | None = None,
        runner: Callable[[str], int] = _run_shell,
    ) -> None:
        self.command = command
        self.idle_s = idle_minutes * 60.0
        self._t = thresholds or Thresholds()
        self._runner = runner
        self._since: float | None = None
        self._fired = False

    def observe(self, sample: Sample) -> IdleEvent | None:
        """Feed one sample; returns an event when the command ran (once per idle stretch)."""
        live = [g for g in sample.gpus if not g.lost]
        idle = bool(live) and all(is_idle(g, self._t) for g in live)
        if not idle:
            self._since, self._fired = None, False
            return None
        if self._since is None:
            self._since = sample.timestamp_s
        if self._fired or sample.timestamp_s - self._since < self.idle_s:
            return None
        self._fired = True
        try:
            code: int | None = self._runner(self.command)
            error = ""
        except (OSError, subprocess.SubprocessError) as exc:
            code, error = None, str(exc)
        return IdleEvent(
            idle_since_s=self._since,
            fired_at_s=sample.timestamp_s,
            command=self.command,
            returncode=code,
            error=error,
        )
