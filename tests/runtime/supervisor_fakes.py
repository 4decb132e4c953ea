"""Stand-ins for the supervisor tests: a clock that moves only when slept on, and a job process
that ends after a set time on that clock (or hangs) and records the signals it is sent."""

from __future__ import annotations


class FakeClock:
    """`clock()` is the fake time in seconds; `sleep(s)` moves it on."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class FakeProc:
    """Exits with `code` after `runtime_s` of fake time, unless it hangs (runtime None)."""

    def __init__(self, clock: FakeClock, code: int, runtime_s: float | None, pid: int) -> None:
        self.clock, self.code, self.pid = clock, code, pid
        self.end = None if runtime_s is None else clock.now + runtime_s
        self.signals: list[str] = []

    def poll(self) -> int | None:
        if self.end is not None and self.clock.now >= self.end:
            return self.code
        return None

    def terminate(self) -> None:
        self.signals.append("TERM")
        self.end, self.code = self.clock.now, -15

    def kill(self) -> None:
        self.signals.append("KILL")
        self.end, self.code = self.clock.now, -9
