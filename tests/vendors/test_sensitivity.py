"""The smallest weight change against brute force over a weight grid; regions; TOPSIS."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpurent.vendors.sensitivity import (
    complete,
    region_grid,
    slice_weights,
    smallest_change,
    topsis,
    topsis_result,
    totals,
    winner,
)

CRITERIA = ("a", "b", "c")
STEP = 150  # grid of weights in steps of 1/150


def _grid() -> list[list[float]]:
    return [
        [i / STEP, j / STEP, (STEP - i - j) / STEP]
        for i in range(STEP + 1)
        for j in range(STEP + 1 - i)
    ]


GRID = _grid()


def _brute(matrix: list[list[float]], w: list[float], norm: str) -> float | None:
    top = winner(matrix, w)
    best = None
    for g in GRID:
        t = totals(matrix, g)
        if any(t[b] >= t[top] for b in range(len(matrix)) if b != top):
            diff = [abs(x - y) for x, y in zip(g, w, strict=True)]
            dist = sum(diff) if norm == "L1" else max(diff)
            best = dist if best is None else min(best, dist)
    return best


scores = st.lists(
    st.lists(st.integers(0, 100).map(float), min_size=3, max_size=3), min_size=2, max_size=4
)
base = st.sampled_from([[0.5, 0.3, 0.2], [0.4, 0.4, 0.2], [0.2, 0.3, 0.5], [0.6, 0.2, 0.2]])


@pytest.mark.parametrize("norm", ["L1", "max"])
@settings(max_examples=15, deadline=None)
@given(matrix=scores, w=base)
def test_smallest_change_matches_brute_force_over_a_weight_grid(
    norm: str, matrix: list[list[float]], w: list[float]
) -> None:
    names = [f"v{i}" for i in range(len(matrix))]
    change = smallest_change(names, CRITERIA, matrix, w, norm)
    brute = _brute(matrix, w, norm)
    if change.distance is None:
        assert brute is None
        return
    assert brute is not None
    # exact: never more than the best grid point, and the grid gets within its resolution
    assert change.distance <= brute + 1e-9
    assert brute - change.distance <= 3.0 / STEP
    # the returned weights are on the simplex, at the stated distance, and the challenger ties
    new = [x for _, x in change.weights]
    assert sum(new) == pytest.approx(1.0)
    assert min(new) >= 0.0
    diff = [abs(x - y) for x, y in zip(new, w, strict=True)]
    assert (sum(diff) if norm == "L1" else max(diff)) == pytest.approx(change.distance, abs=1e-6)
    t = totals(matrix, new)
    top = winner(matrix, w)
    assert t[names.index(change.challenger or "")] >= t[top] - 1e-6


def test_a_vendor_best_on_every_criterion_cannot_be_overturned() -> None:
    matrix = [[90.0, 90.0, 90.0], [10.0, 50.0, 80.0]]
    change = smallest_change(["x", "y"], CRITERIA, matrix, [0.4, 0.4, 0.2], "L1")
    assert change.distance is None and change.challenger is None


def test_l1_hand_case() -> None:
    # x leads by 0.5*20 - 0.5*10 = 5 points; moving t from a to b gains 30 t: t = 1/6
    matrix = [[80.0, 50.0, 0.0], [60.0, 60.0, 0.0]]
    change = smallest_change(["x", "y"], CRITERIA, matrix, [0.5, 0.5, 0.0], "L1")
    assert change.distance == pytest.approx(2 / 6)
    assert dict(change.weights)["a"] == pytest.approx(0.5 - 1 / 6)


def test_missing_scores_are_held_at_the_vendors_own_total() -> None:
    w = [0.5, 0.3, 0.2]
    filled = complete([[80.0, None, 40.0], [50.0, 50.0, 50.0]], w)
    own = (0.5 * 80 + 0.2 * 40) / 0.7
    assert filled[0][1] == pytest.approx(own)
    assert totals(filled, w)[0] == pytest.approx(own)  # the ranking's renormalised total


def test_region_grid_names_the_winner_of_every_cell() -> None:
    matrix = [[100.0, 0.0, 50.0], [0.0, 100.0, 50.0], [40.0, 40.0, 90.0]]
    w = [0.4, 0.4, 0.2]
    grid = region_grid(["x", "y", "z"], CRITERIA, matrix, w, "a", "b", step=0.1)
    assert len(grid.cells) == 11
    for j, i in itertools.product(range(11), range(11)):
        cell = grid.cells[j][i]
        if i + j > 10:
            assert cell is None
        else:
            assert cell == winner(matrix, slice_weights(w, 0, 1, i / 10, j / 10))
    assert grid.cells[0][10] == 0  # all weight on a: x wins
    assert grid.cells[10][0] == 1  # all weight on b: y wins
    assert grid.cells[0][0] == 2  # all weight on c: z wins
    assert sum(s for _, s in grid.share()) == pytest.approx(1.0)


def test_topsis_hand_checked_case() -> None:
    # columns' norms 5 and 4; weighted: X (0.3, 0.5), Y (0.4, 0.0); ideal (0.4, 0.5), anti
    # (0.3, 0.0): X is 0.1 from the ideal and 0.5 from the anti-ideal -> 0.5/0.6
    closeness = topsis(["X", "Y"], [[3.0, 4.0], [4.0, 0.0]], [0.5, 0.5])
    assert closeness == pytest.approx((5 / 6, 1 / 6))


def test_topsis_notes_where_it_disagrees_with_the_weighted_sum() -> None:
    result = topsis_result(["X", "Y"], [[3.0, 4.0], [4.0, 0.0]], [0.5, 0.5], ["Y", "X"])
    assert result.order == ("X", "Y")
    assert result.disagreements[0].startswith("the top choice differs: Y by the weighted sum")
    agree = topsis_result(["X", "Y"], [[3.0, 4.0], [4.0, 0.0]], [0.5, 0.5], ["X", "Y"])
    assert agree.disagreements == ()


def test_topsis_of_identical_vendors_is_a_tie() -> None:
    assert topsis(["X", "Y"], [[50.0, 50.0], [50.0, 50.0]], [0.5, 0.5]) == (0.5, 0.5)
