"""Criterion weights: the guide's defaults, `--weights` parsing and normalisation (pure)."""

from __future__ import annotations

from collections.abc import Sequence

from gpurent.errors import InputError
from gpurent.vendors.file import CRITERIA, weights_table

GUIDE_WEIGHTS: tuple[tuple[str, float], ...] = (
    ("hardware", 0.30),
    ("network", 0.25),
    ("elasticity", 0.20),
    ("cost", 0.15),
    ("support", 0.10),
)
GUIDE_SOURCE = "the seed guide, section 7.1 (key evaluation indicators)"
WEIGHT_SUM_TOLERANCE = 1e-6


def resolve_weights(
    given: Sequence[tuple[str, float]] | None, *, strict: bool, where: str = "--weights"
) -> tuple[tuple[tuple[str, float], ...], tuple[str, ...]]:
    """The weights to use and warnings: named weights replace the guide's, the rest keep theirs;
    a sum other than 1 is normalised with a warning, or refused when `strict`."""
    weights = dict(GUIDE_WEIGHTS)
    for name, w in given or ():
        if name not in weights:
            raise InputError(
                f"{where}: unknown criterion {name!r} (criteria: {', '.join(CRITERIA)})"
            )
        weights[name] = w
    total = sum(weights.values())
    if total <= 0.0:
        raise InputError(f"{where}: the weights sum to 0; give at least one positive weight")
    warnings: list[str] = []
    if abs(total - 1.0) > WEIGHT_SUM_TOLERANCE:
        shown = ", ".join(f"{k}={w:g}" for k, w in weights.items())
        if strict:
            raise InputError(
                f"{where}: the weights sum to {total:g}, not 1 ({shown}); fix them or drop --strict"
            )
        warnings.append(f"{where}: the weights sum to {total:g}, not 1 ({shown}); normalised")
    return tuple((k, w / total) for k, w in weights.items()), tuple(warnings)


def parse_weights(text: str, where: str = "--weights") -> tuple[tuple[str, float], ...]:
    """`hardware=0.3,network=0.25,...` as (criterion, weight) pairs."""
    pairs: dict[str, object] = {}
    for item in (p.strip() for p in text.split(",")):
        if not item:
            continue
        name, sep, value = item.partition("=")
        if not sep:
            raise InputError(f"{where}: {item!r} is not CRITERION=WEIGHT (e.g. hardware=0.3)")
        pairs[name.strip().lower()] = value.strip()
    if not pairs:
        raise InputError(f"{where}: give CRITERION=WEIGHT pairs, e.g. hardware=0.3,network=0.25")
    return weights_table(pairs, where)
