"""One validator per kind of value: NaN, infinity, booleans, fractions and out-of-range values
never pass, whether they come from a flag (float/int), a file (TOML/YAML/JSON) or a CSV cell."""

from __future__ import annotations

import math

import pytest

from gpurent.errors import InputError
from gpurent.inputs import values as v


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, "nan", "inf", "-Infinity", "1e999"])
@pytest.mark.parametrize("check", [v.finite, v.positive, v.non_negative, v.fraction, v.percent])
def test_non_finite_numbers_never_pass(check: v.Validator, bad: object) -> None:
    with pytest.raises(InputError, match=r"^--x must be a finite number"):
        check(bad, "--x")


@pytest.mark.parametrize("bad", [True, False, "abc", "", None, [1], {"a": 1}])
def test_non_numbers_are_refused(bad: object) -> None:
    with pytest.raises(InputError, match=r"^f\.toml: epochs must be a (whole )?number"):
        v.positive(bad, "f.toml: epochs")
    with pytest.raises(InputError, match=r"^f\.toml: epochs must be a (whole )?number"):
        v.positive_int(bad, "f.toml: epochs")


def test_positive_and_non_negative_bounds() -> None:
    assert v.positive(2.5, "--x") == 2.5
    assert v.positive("3e2", "--x") == 300.0
    assert v.non_negative(0, "--x") == 0.0
    with pytest.raises(InputError, match=r"--tokens must be > 0, got -1e\+09"):
        v.positive(-1e9, "--tokens")
    with pytest.raises(InputError, match="must be > 0, got 0"):
        v.positive(0.0, "--x")
    with pytest.raises(InputError, match=r"must be >= 0, got -0\.5"):
        v.non_negative(-0.5, "--x")
    with pytest.raises(InputError, match=r"--job-hours must be at most 87600, got 1e\+308"):
        v.positive(1e308, "--job-hours", most=v.MAX_HOURS)
    with pytest.raises(InputError, match="at most 1e"):
        v.finite(10**400, "--x")  # an int too large for a float is refused, not an OverflowError


def test_fraction_and_percent() -> None:
    assert v.fraction(0.35, "--d") == 0.35
    assert v.percent(100, "--p") == 100.0
    with pytest.raises(InputError, match="between 0 and 1"):
        v.fraction(1.5, "--d")
    with pytest.raises(InputError, match="between 0 and 100"):
        v.percent(-1, "--p")


@pytest.mark.parametrize(
    ("raw", "expected"), [(4, 4), (4.0, 4), ("4", 4), (" +12 ", 12), ("1e3", 1000)]
)
def test_whole_numbers_pass(raw: object, expected: int) -> None:
    assert v.positive_int(raw, "--n") == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (3.7, "must be a whole number, got 3.7"),
        (True, "must be a whole number, got True"),
        (math.nan, "must be a whole number"),
        (math.inf, "must be a whole number"),
        ("3.5", "must be a whole number"),
        (-8, "must be >= 1, got -8"),
        (0, "must be >= 1, got 0"),
        (10**400, "must be at most"),
        ("9" * 5000, "--n must be"),  # no ValueError from int()'s digit limit
    ],
)
def test_positive_int_refuses(raw: object, message: str) -> None:
    with pytest.raises(InputError, match=message):
        v.positive_int(raw, "--n")


def test_bounded_fixes_limits() -> None:
    gpus = v.bounded(v.positive_int, most=v.MAX_GPUS)
    assert gpus(8, "--gpus") == 8
    with pytest.raises(InputError, match=f"--gpus must be at most {v.MAX_GPUS}"):
        gpus(10**8, "--gpus")
    offset = v.bounded(v.integer, least=-12, most=14)
    assert offset(-5, "--utc-offset") == -5
    with pytest.raises(InputError, match="must be >= -12"):
        offset(-13, "--utc-offset")
