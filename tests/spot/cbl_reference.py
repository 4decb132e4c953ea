"""An independent re-implementation of the Can't Be Late simulator's env/strategy loop.

Written from the paper (Wu et al., NSDI'24, sections 3 and 5.2) and the rules of its public
simulator (sky_spot: `Env.observe/step` and `Strategy.step`, and its uniform-progress
strategy), not from gpurent's code, so that the agreement test compares two implementations.
Everything is in seconds, as there:

- The loop runs tick by tick until the task is done. At each tick the strategy first realises
  the last tick: a tick on an instance yields max(gap - remaining overhead, 0) seconds of
  work (capped at the work left) and the overhead falls by the rest; an idle tick yields 0.
- A spot instance whose trace has no spot at this tick is lost before the decision.
- A request for an instance type different from the one held (after a loss: none) sets the
  remaining overhead to the full restart overhead.
- Every tick is billed in full at the requested type's price (the env's accumulated cost sums
  the price of each tick's cluster type), also the tick in which the task ends.

Strategies: on-demand; greedy (spot when there is spot, else none; on-demand once the safety
rule below fires); uniform progress (behind the line t * C / R: spot or on-demand; on
on-demand stay while there is no spot, and while progress is short of (t + 2d) * C / R;
otherwise spot when there is spot, else none). Safety rule (both): with r = floor((R - t) /
gap) * gap, if ceil((work left + 2d) / gap) * gap >= r while not on spot -> on-demand; if
ceil((work left + d) / gap) * gap >= r -> on-demand, unless on spot past its overhead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

NONE, SPOT, OD = "none", "spot", "od"


def run_reference(
    spot: Sequence[bool],
    *,
    gap_s: float,
    task_s: float,
    deadline_s: float,
    overhead_s: float,
    strategy: str,
    od_price: float,
    spot_price: float = 1.0,
) -> tuple[float, bool]:
    """(cost / (od_price x task hours), finished by the deadline) of one run over `spot`."""
    done: list[float] = []
    end_s = 0.0  # when the task ended
    overhead_left = 0.0
    held = NONE
    cost = 0.0
    tick = 0
    while True:
        if tick > 0:  # realise the last tick
            if held == NONE:
                done.append(0.0)
            else:
                work = max(gap_s - overhead_left, 0.0)
                overhead_left -= gap_s - work
                need = task_s - sum(done)
                done.append(min(work, need))
                end_s = (tick - 1) * gap_s + (gap_s - work) + min(work, need)
        if sum(done) >= task_s - 1e-6:
            break
        if tick >= len(spot):
            raise ValueError("trace too short for the run")
        has_spot = spot[tick]
        current = NONE if held == SPOT and not has_spot else held
        elapsed = tick * gap_s
        request = _decide(
            strategy,
            current=current,
            has_spot=has_spot,
            elapsed=elapsed,
            progress=sum(done),
            overhead_left=overhead_left,
            gap_s=gap_s,
            task_s=task_s,
            deadline_s=deadline_s,
            overhead_s=overhead_s,
        )
        if request == SPOT and not has_spot:
            raise ValueError("spot requested where there is none")
        if request != current and request != NONE:
            overhead_left = overhead_s
        cost += {NONE: 0.0, SPOT: spot_price, OD: od_price}[request] * gap_s / 3600
        held = request
        tick += 1
    return cost / (od_price * task_s / 3600), end_s <= deadline_s + 1e-6


def _decide(
    strategy: str,
    *,
    current: str,
    has_spot: bool,
    elapsed: float,
    progress: float,
    overhead_left: float,
    gap_s: float,
    task_s: float,
    deadline_s: float,
    overhead_s: float,
) -> str:
    if strategy == "on-demand":
        return OD
    request = SPOT if has_spot else NONE
    if strategy == "uniform-progress":
        rate = task_s / deadline_s
        if progress < elapsed * rate:
            request = SPOT if has_spot else OD
        if current == OD and not has_spot:
            request = OD
        if current == OD and progress < (elapsed + 2 * overhead_s) * rate:
            request = OD
    elif strategy != "greedy":
        raise ValueError(strategy)
    left = task_s - progress
    room = math.floor((deadline_s - elapsed) / gap_s + 1e-9) * gap_s
    with_2d = math.ceil((left + 2 * overhead_s) / gap_s - 1e-9) * gap_s
    with_1d = math.ceil((left + overhead_s) / gap_s - 1e-9) * gap_s
    if with_2d >= room and current in (NONE, OD):
        request = OD
    if with_1d >= room:
        request = SPOT if current == SPOT and overhead_left < 1e-3 else OD
        if overhead_s == 0 and has_spot:
            request = SPOT
    return request
