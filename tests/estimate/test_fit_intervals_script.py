"""`benchmarks/fit_intervals.py`'s quantile classes, widening and nested coverage check, on
synthetic residuals (the reference data it runs on lives outside the repository)."""

from __future__ import annotations

import random
from pathlib import Path
from types import ModuleType

import pytest
from tests.scripts import load_script

from gpurent.estimate.uncertainty import parse_intervals

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def fit() -> ModuleType:
    return load_script("benchmarks/fit_intervals.py")


def _residuals(fit: ModuleType, unit_bias: float, seed: int = 0) -> list:
    rng = random.Random(seed)
    out = []
    for u in range(6):
        bias = rng.gauss(0.0, unit_bias)
        for i in range(40):
            family = "cnn" if i % 2 else "other"
            for group in ("within-architecture", "unseen-architecture", "anchored"):
                out.append(fit.Residual(group, "1gpu", family, f"u{u}", bias + rng.gauss(0.0, 0.1)))
    return out


def test_classes_pool_small_ones_and_write_every_group(fit: ModuleType) -> None:
    res = _residuals(fit, 0.0)
    few = [r for r in res if r.family == "cnn"][:30] + [r for r in res if r.family == "other"][:10]
    table = fit.classes(few)
    assert "within-architecture/*/*" in table
    keys = set(table)
    # 10 "other" rows per group: below the 20-row floor, so only the pooled levels hold them
    assert not any(k.endswith("/other") for k in keys)
    parsed = parse_intervals({"classes": fit.classes(res)})
    for cls in parsed.classes.values():
        assert cls.log_low < cls.log_high


def test_shared_unit_bias_needs_widening_and_the_nested_check_then_covers(
    fit: ModuleType,
) -> None:
    iid = [r for r in _residuals(fit, 0.0) if r.group == "unseen-architecture"]
    biased = [r for r in _residuals(fit, 0.25) if r.group == "unseen-architecture"]
    assert fit.fit_widen(iid) <= 1.1  # no shared error: the percentiles already cover
    assert fit.fit_widen(biased) > fit.fit_widen(iid) + 0.1  # each unit errs together
    inside, rows = fit.coverage(biased)["unseen-architecture"]["all"]
    plain = sum(
        fit._inside(
            [r for r in biased if r.unit != u], [r for r in biased if r.unit == u], 1.0
        ).count(1)
        for u in {r.unit for r in biased}
    )
    assert inside > plain  # the widening raises the out-of-unit coverage
    assert inside / rows >= 0.6
