"""Two policies run in lockstep: one decides, the other is asked the same question every tick
(the same inputs, so the same safety-net state); the ticks where they differ are recorded."""

from __future__ import annotations

from gpurent.spot.sim.policies.base import Policy, RunView


class Lockstep:
    """`ours` deciding, `other` shadowing it; `differ` holds (our action, theirs, the instance
    held, whether a zone is up, the market tick) wherever the two disagree."""

    def __init__(self, ours: Policy, other: Policy) -> None:
        self.name = ours.name
        self.ours = ours
        self.other = other
        self.differ: list[tuple[int, int, int, bool, int]] = []
        self._start = 0

    def start(self, run: RunView) -> None:
        self._start = run.start_tick
        self.ours.start(run)
        self.other.start(run)

    def decide(self, t: int, progress_ticks: float, current: int, row: tuple[bool, ...]) -> int:
        act = self.ours.decide(t, progress_ticks, current, row)
        theirs = self.other.decide(t, progress_ticks, current, row)
        if act != theirs:
            self.differ.append((act, theirs, current, any(row), self._start + t))
        return act


def assert_shadows_no_parameter(cls: type, own: set[str], base: type, methods: set[str]) -> None:
    """`cls` defines only its `own` parameters (and `methods`), and none of them is also a
    parameter of `base` or its ancestors: a knob named like an inherited one would silently
    change the parent policy's decisions (round 11's `reserve_factor`)."""
    dunder = {
        "__module__",
        "__doc__",
        "__annotations__",
        "__firstlineno__",
        "__static_attributes__",
    }
    assert own >= set(vars(cls)) - dunder - methods
    for ancestor in base.__mro__:
        for attr in vars(ancestor):
            if attr in own and attr != "name":
                raise AssertionError(f"{attr} shadows {ancestor.__name__}.{attr}")
