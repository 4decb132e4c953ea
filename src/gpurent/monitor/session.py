"""The monitor loop: probes -> sample -> window -> rules, cost, recorder, exporter, idle action.

Clock, wall time and sleep are injected, so a whole session runs deterministically in tests.
Nothing here stops on a read or write failure: every problem becomes a note (printed once by
the front end) and the loop goes on.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gpurent.monitor.cost import CostMeter, CostReport, InstancePrice
from gpurent.monitor.idle import IdleEvent, IdleWatcher
from gpurent.monitor.probes.host import HostProbe
from gpurent.monitor.probes.nvml import NvmlProbe
from gpurent.monitor.rules import Diagnosis, Thresholds, diagnose
from gpurent.monitor.sample import Sample


@dataclass(slots=True)
class SessionState:
    """What a monitor session did so far: samples taken, notes and idle events."""

    samples_taken: int = 0
    notes: list[str] = field(default_factory=list)
    idle_events: list[IdleEvent] = field(default_factory=list)
    last_sample: Sample | None = None


class MonitorSession:
    """The monitor loop: polls the probes into samples, then rules, cost, recorder, exporter
    and the idle action on each."""

    def __init__(
        self,
        *,
        nvml: NvmlProbe | None,
        host: HostProbe,
        thresholds: Thresholds | None = None,
        price: InstancePrice | None = None,
        recorder: Any = None,
        exporter: Any = None,
        hostname: str = "localhost",
        idle_watcher: IdleWatcher | None = None,
        window_s: float = 300.0,
        wall_clock: Callable[[], float] = time.time,
        flush_every_s: float = 5.0,
        pusher: Any = None,
        push_every_s: float = 2.0,
        cost_labels: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.nvml = nvml
        self.host = host
        self.thresholds = thresholds or Thresholds()
        self.price = price
        self.recorder = recorder
        self.exporter = exporter
        self.hostname = hostname
        self.idle_watcher = idle_watcher
        self.window_s = window_s
        self._wall = wall_clock
        self._flush_every_s = flush_every_s
        self._last_flush_s = 0.0
        self.pusher = pusher  # monitor.push.Pusher: rows to a `gpurent serve`
        self._push_every_s = push_every_s
        self._last_push_s = 0.0
        self.cost_labels = cost_labels  # labels of the exporter's cost metrics
        self.window: deque[Sample] = deque()
        self.state = SessionState()
        self._meter = CostMeter(price, self.thresholds) if price is not None else None
        self._noted: set[str] = set()

    def _note(self, notes: list[str]) -> list[str]:
        fresh = [n for n in notes if n not in self._noted]
        self._noted.update(fresh)
        self.state.notes.extend(fresh)
        return fresh

    def open(self) -> list[str]:
        """Open the GPU probe; return notes on what could not be opened."""
        return self._note(self.nvml.open() if self.nvml is not None else [])

    def step(self) -> tuple[Sample, list[str]]:
        """Take one sample and feed every consumer. Returns it with the new notes."""
        notes: list[str] = []
        gpus: tuple[Any, ...] = ()
        if self.nvml is not None and self.nvml.available:
            gpus, gpu_notes = self.nvml.read()
            notes += gpu_notes
        host, host_notes = self.host.read()
        notes += host_notes
        now = self._wall()
        sample = Sample(timestamp_s=now, host=host, gpus=gpus, notes=tuple(notes))
        self.window.append(sample)
        while self.window and now - self.window[0].timestamp_s > self.window_s:
            self.window.popleft()
        self.state.samples_taken += 1
        self.state.last_sample = sample
        if self._meter is not None:
            self._meter.add(sample)
        if self.idle_watcher is not None:
            event = self.idle_watcher.observe(sample)
            if event is not None:
                self.state.idle_events.append(event)
                notes.append(
                    f"idle action ran: {event.command!r} -> "
                    + (f"exit {event.returncode}" if event.error == "" else event.error)
                )
        if self.recorder is not None:
            self.recorder.add(sample)
            if now - self._last_flush_s >= self._flush_every_s:
                self._last_flush_s = now
                note = self.recorder.flush(now)
                if note:
                    notes.append(note)
        if self.pusher is not None:
            self.pusher.add(sample)
            if now - self._last_push_s >= self._push_every_s:
                self._last_push_s = now
                note = self.pusher.flush(now)
                if note:
                    notes.append(note)
        if self.exporter is not None:
            from gpurent.monitor.exporter import render_metrics

            self.exporter.update(
                render_metrics(
                    sample,
                    hostname=self.hostname,
                    cost=self.cost(),
                    findings=self.diagnosis().findings,
                    cost_labels=self.cost_labels,
                )
            )
        return sample, self._note(notes)

    def diagnosis(self) -> Diagnosis:
        """The diagnosis of the samples in the rolling window."""
        return diagnose(list(self.window), self.thresholds)

    def cost(self) -> CostReport | None:
        """The session's money so far (every sample since the start), None without a price."""
        return self._meter.report() if self._meter is not None else None

    def close(self) -> list[str]:
        """Close the recorder and the GPU probe; return notes (e.g. a failed last write)."""
        notes: list[str] = []
        for sink in (self.recorder, self.pusher):
            if sink is not None:
                note = sink.close()
                if note:
                    notes.append(note)
        if self.nvml is not None:
            self.nvml.close()
        return self._note(notes)

    def run(
        self,
        *,
        interval_s: float,
        duration_s: float | None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        on_sample: Callable[[Sample, list[str]], None] | None = None,
    ) -> None:
        """Sample every `interval_s` until `duration_s` passed (forever when None)."""
        start = clock()
        next_t = start
        while True:
            sample, notes = self.step()
            if on_sample is not None:
                on_sample(sample, notes)
            next_t += interval_s
            if duration_s is not None and next_t - start > duration_s + 1e-9:
                return
            delay = next_t - clock()
            if delay > 0:
                sleep(delay)
            else:
                next_t = clock()  # fell behind: do not burst to catch up
