"""What slack is worth to the rest of a spot run: a coarse dynamic programme over (slack, work
left), for `dp-up` (round 8 of issue 16).

Units: ticks, and cost in spot-price ticks (spot 1, on-demand k). The run is cut into chunks
of dw = W / rows work ticks; before each chunk the job picks
- on-demand for the chunk: cost k dw, slack unchanged; or
- spot for the chunk: it is preempted n times (Poisson, mean dw x h, h the zone's preemptions
  per usable tick; n capped at 4), each preemption costing the lost tick, a changeover and the
  mean outage u in slack (1 + D + u) and the changeover D in cost; cost dw + n D.
Below the safety floor 3D + 1 the job is on on-demand to the end (cost k w). Everything comes
from the arguments: the policy estimates h and u from the zone's spells that ended before now,
so the table sees no future. Solved backward over the work rows, vectorised over the slack
columns (a 48 h job's 24 x 24 table: 0.8-1.0 ms a solve on the loaded 2-core VM,
`benchmarks/bench_slack_value.py`; docs/benchmarks.md, "Spot policy round 9").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpurent.errors import InputError

FloatArr = npt.NDArray[np.float64]
_MAX_PREEMPTIONS = 4


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class SlackValueTable:
    """Expected cost to finish (spot-price ticks) on a grid of slack x work left."""

    work_step_ticks: float
    slack_step_ticks: float
    floor_slack_ticks: float
    price_ratio: float
    cost: FloatArr
    """cost[i, j]: work left i x work_step, slack j x slack_step."""

    def cost_at(self, slack_ticks: FloatArr, work_ticks: FloatArr) -> FloatArr:
        """Expected cost to finish from each (slack, work left), bilinear on the grid; below the
        safety floor, on-demand to the end."""
        rows, cols = self.cost.shape
        w = np.clip(work_ticks, 0.0, None)
        fi = np.clip(w / self.work_step_ticks, 0.0, rows - 1.0)
        fj = np.clip(slack_ticks / self.slack_step_ticks, 0.0, cols - 1.0)
        i0 = np.minimum(np.floor(fi).astype(np.int64), rows - 2)
        j0 = np.minimum(np.floor(fj).astype(np.int64), cols - 2)
        a, b = fi - i0, fj - j0
        c = self.cost
        low = c[i0, j0] * (1 - b) + c[i0, j0 + 1] * b
        high = c[i0 + 1, j0] * (1 - b) + c[i0 + 1, j0 + 1] * b
        out = low * (1 - a) + high * a
        return np.where(slack_ticks < self.floor_slack_ticks, self.price_ratio * w, out)


def solve_slack_value(
    *,
    work_ticks: float,
    slack_ticks: float,
    changeover_ticks: float,
    price_ratio: float,
    preemptions_per_tick: float,
    outage_ticks: float,
    rows: int = 24,
    cols: int = 24,
) -> SlackValueTable:
    """The table for a job of `work_ticks` with at most `slack_ticks` of slack (see module)."""
    if rows < 2 or cols < 2:
        raise InputError(f"slack-value grid {rows} x {cols} too small: use at least 2 x 2")
    values = (work_ticks, slack_ticks, changeover_ticks, preemptions_per_tick, outage_ticks)
    if not all(math.isfinite(v) and v >= 0 for v in values) or price_ratio <= 0:
        raise InputError("slack-value inputs must be finite and >= 0 (price ratio > 0)")
    d, k = changeover_ticks, price_ratio
    dw = max(work_ticks, 1e-9) / rows
    ds = max(slack_ticks, 1e-9) / cols
    floor = 3 * d + 1
    s = np.arange(cols + 1) * ds
    lam = dw * preemptions_per_tick
    n = np.arange(_MAX_PREEMPTIONS + 1)
    p = np.array([math.exp(-lam) * lam**i / math.factorial(i) for i in n])
    p[-1] = max(0.0, 1.0 - p[:-1].sum())
    loss = 1 + d + outage_ticks
    cost = np.zeros((rows + 1, cols + 1))
    # What does not depend on the row, once: slack after n preemptions, where that is below
    # the floor, and a spot chunk's cost before its continuation.
    s_after = s[:, None] - n[None, :] * loss
    below = s_after < floor
    chunk = dw + n[None, :] * d
    low = s < floor
    for i in range(1, rows + 1):
        prev = cost[i - 1]
        on_demand = k * dw + prev
        cont = np.interp(s_after, s, prev)
        forced = k * i * dw
        each = np.where(below, forced, chunk + cont)
        spot = each @ p
        row = np.minimum(on_demand, spot)
        cost[i] = np.where(low, forced, row)
    return SlackValueTable(
        work_step_ticks=dw,
        slack_step_ticks=ds,
        floor_slack_ticks=floor,
        price_ratio=k,
        cost=cost,
    )
