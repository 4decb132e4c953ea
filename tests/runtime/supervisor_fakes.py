"""Stand-ins for the supervisor tests: a clock that moves only when slept on, a job process
that ends after a set time on that clock (or hangs) and records the signals it is sent, and a
supervisor wired to them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gpurent.runtime.supervisor import EventLog, Supervisor, SupervisorConfig


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


def fake_supervisor(
    clock: FakeClock,
    spawner: Callable[[Sequence[str], Mapping[str, str]], Any],
    **options: Any,
) -> tuple[Supervisor, list[str]]:
    """A supervisor of `train` on `clock` (1 s polls, 10 s base back-off) that spawns through
    `spawner`; `options` are SupervisorConfig fields or the Supervisor's `checks`,
    `poll_notices` and `lock`. Returns it and the shell commands it ran (each answered 0)."""
    wiring = {k: options.pop(k) for k in ("checks", "poll_notices", "lock") if k in options}
    shell: list[str] = []
    cfg = SupervisorConfig(command=("train",), poll_s=1.0, backoff_base_s=10.0, **options)
    sup = Supervisor(
        cfg,
        log=EventLog(wall_clock=clock),
        spawner=spawner,
        clock=clock,
        sleep=clock.sleep,
        base_env={},
        run_shell=lambda cmd: shell.append(cmd) or 0,
        **wiring,
    )
    return sup, shell
