"""How firm the top choice is: the smallest weight change that overturns it, the regions of a
2-D weight slice where each vendor wins, and TOPSIS as a second opinion (pure).

The linear model: vendor v's total is sum_c w_c s_vc with weights on the simplex (w >= 0,
sum w = 1). A missing score is held at the vendor's own total at the base weights (its
renormalised total), so the base ranking is the scorecard's and each total is linear in w.

"Changes the top choice" means another vendor's total reaches the top vendor's (a tie is where
the choice stops being clear). The distance between weight vectors is either
- L1: sum_c |w'_c - w_c| (moving 0.05 of weight from one criterion to another costs 0.10), or
- max-norm: max_c |w'_c - w_c| (no single weight moves by more than this).
Both minima are exact: for L1 the optimum moves weight from the criteria that favour the top
vendor most to the one that favours the challenger most (a fractional knapsack); for the
max-norm the best gain at a bound eps is a sorted two-pointer transfer, concave in eps, and eps
is found by bisection to 1e-9.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

TIE_EPS = 1e-12
BISECT_TOL = 1e-9


@dataclass(frozen=True, slots=True, kw_only=True)
class WeightChange:
    """The smallest weight change (L1 or max norm) that would change the top choice."""

    norm: str  # "L1" | "max"
    distance: float | None  # None: no weights on the simplex change the top choice
    challenger: str | None
    weights: tuple[tuple[str, float], ...]  # the changed weights where the challenger ties


@dataclass(frozen=True, slots=True, kw_only=True)
class RegionGrid:
    """Winners on a 2-D slice: x = weight of `x_criterion`, y = weight of `y_criterion`, the other
    criteria share the rest in proportion to their base weights. cells[j][i] is the winner's
    index in `vendors` at x = i x step, y = j x step (None where x + y > 1)."""

    x_criterion: str
    y_criterion: str
    step: float
    vendors: tuple[str, ...]
    cells: tuple[tuple[int | None, ...], ...]
    base_x: float
    base_y: float

    def share(self) -> tuple[tuple[str, float], ...]:
        """Each vendor's share of the slice's cells."""
        counts = [0] * len(self.vendors)
        total = 0
        for row in self.cells:
            for cell in row:
                if cell is not None:
                    counts[cell] += 1
                    total += 1
        return tuple(
            (n, c / total if total else 0.0) for n, c in zip(self.vendors, counts, strict=True)
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class TopsisResult:
    """TOPSIS closeness of each vendor, its order, and where it disagrees with the weighted sum."""

    vendors: tuple[str, ...]  # in input order
    closeness: tuple[float, ...]  # 0..1, higher is better
    order: tuple[str, ...]  # best first
    disagreements: tuple[str, ...]  # notes where TOPSIS and the weighted sum rank differently


def complete(
    scores: Sequence[Sequence[float | None]], weights: Sequence[float]
) -> list[list[float]]:
    """Missing scores held at the vendor's renormalised total at `weights`."""
    out = []
    for row in scores:
        covered = sum(w for w, s in zip(weights, row, strict=True) if s is not None)
        points = sum(w * s for w, s in zip(weights, row, strict=True) if s is not None)
        fill = points / covered if covered > 0 else 0.0
        out.append([fill if s is None else s for s in row])
    return out


def totals(matrix: Sequence[Sequence[float]], weights: Sequence[float]) -> list[float]:
    """Weighted total of each vendor's row of scores."""
    return [sum(w * s for w, s in zip(weights, row, strict=True)) for row in matrix]


def winner(matrix: Sequence[Sequence[float]], weights: Sequence[float]) -> int:
    """Index of the highest total; ties go to the earlier vendor."""
    t = totals(matrix, weights)
    return max(range(len(t)), key=lambda i: (t[i], -i))


def _l1_move(
    d: Sequence[float], w: Sequence[float], gap: float
) -> tuple[float, list[float]] | None:
    """Least L1 change making d.(w + delta) >= 0 when d.w = -gap < 0."""
    j = max(range(len(d)), key=lambda c: d[c])
    new = list(w)
    need = gap
    moved = 0.0
    for i in sorted(range(len(d)), key=lambda c: d[c]):
        gain = d[j] - d[i]
        if gain <= 0 or need <= 0:
            break
        t = min(w[i], need / gain)
        new[i] -= t
        new[j] += t
        moved += t
        need -= t * gain
    if need > 1e-12 * max(1.0, gap):
        return None
    return 2.0 * moved, new


def _max_gain(d: Sequence[float], w: Sequence[float], eps: float) -> tuple[float, list[float]]:
    """Largest d.delta with |delta| <= eps, sum delta = 0, w + delta >= 0."""
    order = sorted(range(len(d)), key=lambda c: d[c])
    up = dict.fromkeys(order, eps)
    down = {c: min(eps, w[c]) for c in order}
    delta = [0.0] * len(d)
    lo, hi = 0, len(order) - 1
    gain = 0.0
    while lo < hi:
        a, b = order[lo], order[hi]
        if d[b] - d[a] <= 0:
            break
        t = min(down[a], up[b])
        if t > 0:
            delta[a] -= t
            delta[b] += t
            down[a] -= t
            up[b] -= t
            gain += t * (d[b] - d[a])
        if down[a] <= 0:
            lo += 1
        if up[b] <= 0:
            hi -= 1
    return gain, [wi + di for wi, di in zip(w, delta, strict=True)]


def _max_move(
    d: Sequence[float], w: Sequence[float], gap: float
) -> tuple[float, list[float]] | None:
    if _max_gain(d, w, 1.0)[0] < gap - 1e-12:
        return None
    lo, hi = 0.0, 1.0
    while hi - lo > BISECT_TOL:
        mid = (lo + hi) / 2
        if _max_gain(d, w, mid)[0] >= gap:
            hi = mid
        else:
            lo = mid
    return hi, _max_gain(d, w, hi)[1]


def smallest_change(
    vendors: Sequence[str],
    criteria: Sequence[str],
    matrix: Sequence[Sequence[float]],
    weights: Sequence[float],
    norm: str,
) -> WeightChange:
    """The least change of `weights` (in `norm`: "L1" or "max") after which another vendor's
    total reaches the top vendor's."""
    top = winner(matrix, weights)
    best: tuple[float, int, list[float]] | None = None
    for b in range(len(vendors)):
        if b == top:
            continue
        d = [sb - sa for sb, sa in zip(matrix[b], matrix[top], strict=True)]
        gap = -sum(di * wi for di, wi in zip(d, weights, strict=True))
        if gap <= TIE_EPS:
            found: tuple[float, list[float]] | None = (0.0, list(weights))
        elif norm == "L1":
            found = _l1_move(d, weights, gap)
        else:
            found = _max_move(d, weights, gap)
        if found is not None and (best is None or found[0] < best[0]):
            best = (found[0], b, found[1])
    if best is None:
        return WeightChange(norm=norm, distance=None, challenger=None, weights=())
    return WeightChange(
        norm=norm,
        distance=best[0],
        challenger=vendors[best[1]],
        weights=tuple(zip(criteria, (max(0.0, x) for x in best[2]), strict=True)),
    )


def slice_weights(weights: Sequence[float], i: int, j: int, x: float, y: float) -> list[float]:
    """Weights with w_i = x, w_j = y and the rest sharing 1 - x - y in their base proportion."""
    rest = [c for c in range(len(weights)) if c not in (i, j)]
    base = sum(weights[c] for c in rest)
    left = max(0.0, 1.0 - x - y)
    out = [0.0] * len(weights)
    out[i], out[j] = x, y
    for c in rest:
        out[c] = left * (weights[c] / base if base > 0 else 1.0 / len(rest))
    return out


def region_grid(  # noqa: PLR0917 - the matrix, its labels and the slice
    vendors: Sequence[str],
    criteria: Sequence[str],
    matrix: Sequence[Sequence[float]],
    weights: Sequence[float],
    x_criterion: str,
    y_criterion: str,
    step: float = 0.05,
) -> RegionGrid:
    """Top choice over a grid of two criteria's weights (step apart), the rest scaled to fit."""
    i, j = criteria.index(x_criterion), criteria.index(y_criterion)
    n = round(1.0 / step)
    cells = []
    for yj in range(n + 1):
        row: list[int | None] = []
        for xi in range(n + 1):
            if xi + yj > n:
                row.append(None)
                continue
            w = slice_weights(weights, i, j, xi / n, yj / n)
            row.append(winner(matrix, w))
        cells.append(tuple(row))
    return RegionGrid(
        x_criterion=x_criterion,
        y_criterion=y_criterion,
        step=1.0 / n,
        vendors=tuple(vendors),
        cells=tuple(cells),
        base_x=weights[i],
        base_y=weights[j],
    )


def topsis(
    vendors: Sequence[str], matrix: Sequence[Sequence[float]], weights: Sequence[float]
) -> tuple[float, ...]:
    """TOPSIS closeness (Hwang and Yoon 1981): vector-normalise each criterion's column, weight
    it, and score d(worst) / (d(best) + d(worst)) against the ideal and anti-ideal vendors
    (every criterion is a benefit: higher is better). All-equal vendors score 0.5."""
    columns = list(zip(*matrix, strict=True))
    norms = [math.sqrt(sum(x * x for x in col)) for col in columns]
    v = [
        [w * (x / n if n > 0 else 0.0) for x, w, n in zip(row, weights, norms, strict=True)]
        for row in matrix
    ]
    ideal = [max(col) for col in zip(*v, strict=True)]
    anti = [min(col) for col in zip(*v, strict=True)]
    out = []
    for row in v:
        d_best = math.dist(row, ideal)
        d_worst = math.dist(row, anti)
        out.append(0.5 if d_best + d_worst <= 0 else d_worst / (d_best + d_worst))
    return tuple(out)


def topsis_result(
    vendors: Sequence[str],
    matrix: Sequence[Sequence[float]],
    weights: Sequence[float],
    weighted_order: Sequence[str],
) -> TopsisResult:
    """The TOPSIS ranking, with notes where it differs from weighted_order."""
    closeness = topsis(vendors, matrix, weights)
    order = tuple(vendors[i] for i in sorted(range(len(vendors)), key=lambda i: (-closeness[i], i)))
    notes = []
    for pos, (a, b) in enumerate(zip(weighted_order, order, strict=True), start=1):
        if a != b:
            notes.append(f"rank {pos}: weighted sum has {a}, TOPSIS has {b}")
    if order and weighted_order and order[0] != weighted_order[0]:
        notes.insert(
            0,
            f"the top choice differs: {weighted_order[0]} by the weighted sum, {order[0]} by "
            "TOPSIS (TOPSIS rewards being far from the worst on every criterion)",
        )
    return TopsisResult(
        vendors=tuple(vendors), closeness=closeness, order=order, disagreements=tuple(notes)
    )
