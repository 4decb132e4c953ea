"""Fit the tuned stack's MoE expert-parallel cost on the MoE training split.

The `tuned` stack prices expert parallelism (ep > 1) per MoE layer per micro-batch as
`moe_ep_layer_s` (fixed: dispatch/combine and routing-metadata latency, grouped-GEMM launches)
+ `moe_ep_token_s` x routed token copies per GPU (permutation, unpermutation, padding) +
`moe_ep_a2a_scale` x the byte-priced all-to-all (docs/estimator.md, "MoE expert-parallel
overhead"). Fitted only on `benchmarks/data/mlperf_moe_fit.csv` (MLPerf Training v6.0 rows of
submitters that are not in `benchmarks/data/validation/fp8_moe.csv`), never on validation rows.

Every term adds to the time of a micro-batch, so the predicted seconds per token of a row are
linear in the three coefficients: one estimate with all three at 0 and one per coefficient
give the columns, and each candidate form (a subset of the coefficients; the others stay
neutral: 0, 0 and an all-to-all scale of 1) is a non-negative least-squares fit of the relative
error of seconds per token over the expert-parallel rows. The form is chosen by
leave-one-row-out over those rows (lowest mean absolute error of the left-out row; a tie goes
to fewer coefficients). Rows with ep 1 are printed as a check (no term touches them).

    PYTHONPATH=src python benchmarks/fit_moe_ep_overhead.py            # print the fit
    PYTHONPATH=src python benchmarks/fit_moe_ep_overhead.py --write    # ... and bundle it
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from gpurent.estimate.constants import Constants, load_constants
from gpurent.estimate.estimator import Estimator, bundled_estimator
from gpurent.estimate.rows import estimate_row
from gpurent.inputs import files
from gpurent.workload.spec import Stack

ROOT = Path(__file__).resolve().parents[1]
SPLIT = ROOT / "benchmarks" / "data" / "mlperf_moe_fit.csv"
TUNED = ROOT / "src" / "gpurent" / "estimate" / "data" / "tuned_stack.json"

# coefficient -> (StackCoeffs field, the step its column is measured with, its neutral value);
# "layer_step"/"token_step" are the same costs paid once per step (`moe_ep_per_step`)
TERMS: dict[str, tuple[str, float, float]] = {
    "layer_s": ("moe_ep_layer_s", 1e-3, 0.0),
    "token_s": ("moe_ep_token_s", 1e-8, 0.0),
    "a2a_scale": ("moe_ep_a2a_scale", 1.0, 1.0),
    "layer_step_s": ("moe_ep_layer_s", 1e-3, 0.0),
    "token_step_s": ("moe_ep_token_s", 1e-8, 0.0),
}
PER_STEP = ("layer_step_s", "token_step_s")
FORMS: dict[str, tuple[str, ...]] = {
    "none": (),
    "layer": ("layer_s",),
    "token": ("token_s",),
    "a2a": ("a2a_scale",),
    "layer+a2a": ("layer_s", "a2a_scale"),
    "token+a2a": ("token_s", "a2a_scale"),
    "layer+token": ("layer_s", "token_s"),
    "layer/step": ("layer_step_s",),
    "token/step": ("token_step_s",),
    "layer/step+a2a": ("layer_step_s", "a2a_scale"),
}


class Row(NamedTuple):
    """One split row as the fit sees it: measured and base seconds per token (every term at
    0) and the seconds per token each coefficient adds per unit."""

    label: str
    submitter: str
    ep: int
    measured_s: float
    base_s: float
    per_unit_s: dict[str, float]


def _with(k: Constants, coeffs: Mapping[str, float]) -> Constants:
    """`k` with the tuned stack's MoE terms set to `coeffs` (a per-step name sets the same
    field and `moe_ep_per_step`)."""
    tuned = k.stacks["tuned"]
    fields: dict[str, object] = {TERMS[name][0]: value for name, value in coeffs.items()}
    fields["moe_ep_per_step"] = any(coeffs.get(n, 0.0) != 0.0 for n in PER_STEP)
    stacks = dict(k.stacks)
    stacks["tuned"] = dataclasses.replace(tuned, **fields)  # type: ignore[arg-type]
    return dataclasses.replace(k, stacks=stacks)


def _seconds_per_token(
    records: Sequence[tuple[int, dict[str, str]]], shown: str, est: Estimator
) -> list[float]:
    out = []
    for line, rec in records:
        res = estimate_row(rec, f"{shown}:{line}", est, default_stack=Stack.TUNED)
        out.append(1.0 / float(res["throughput"]))
    return out


def read_split(path: Path, k: Constants | None = None) -> list[Row]:
    """The rows of split `path` with their linear columns (estimates on constants `k`,
    default the bundled ones with the MoE terms replaced)."""
    if "validation" in path.parts:
        raise SystemExit("error: validation rows are never fitted; pass a training split")
    shown = files.shown(path)
    _, records = files.csv_records(files.read_text(path, what="CSV file"), shown)
    k = k or load_constants()
    zero = {"layer_s": 0.0, "token_s": 0.0, "a2a_scale": 0.0}
    base = _seconds_per_token(records, shown, bundled_estimator(constants=_with(k, zero)))
    cols: dict[str, list[float]] = {}
    for name, (_, step, _) in TERMS.items():
        est = bundled_estimator(constants=_with(k, {**zero, name: step}))
        cols[name] = [
            (s - b) / step
            for s, b in zip(_seconds_per_token(records, shown, est), base, strict=True)
        ]
    return [
        Row(
            label=f"{rec['model']} {rec['gpu']} x{rec['num_gpus']} ({rec['source_path']})",
            submitter=rec["source_path"].split("/", 1)[0],
            ep=int(rec.get("ep") or 1),
            measured_s=1.0 / float(rec["measured_throughput"]),
            base_s=base[i],
            per_unit_s={name: cols[name][i] for name in TERMS},
        )
        for i, (_, rec) in enumerate(records)
    ]


def predicted_s(row: Row, coeffs: Mapping[str, float]) -> float:
    """Seconds per token of `row` with `coeffs` (a coefficient not named stays neutral)."""
    full = {name: coeffs.get(name, neutral) for name, (_, _, neutral) in TERMS.items()}
    return row.base_s + sum(row.per_unit_s[n] * v for n, v in full.items())


def fit_form(rows: Sequence[Row], form: Sequence[str]) -> dict[str, float]:
    """Non-negative least squares of the relative error of seconds per token over `rows`
    for the coefficients in `form` (each active subset solved in closed form; the feasible
    one with the smallest squared error wins); the empty form gives {}."""
    best: tuple[float, dict[str, float]] | None = None
    for size in range(len(form), -1, -1):
        for active in itertools.combinations(form, size):
            coeffs = _solve(rows, active)
            if coeffs is None or any(v < 0.0 for v in coeffs.values()):
                continue
            full = {name: coeffs.get(name, 0.0) for name in form}
            sse = sum((predicted_s(r, full) / r.measured_s - 1.0) ** 2 for r in rows)
            if best is None or sse < best[0] - 1e-15:
                best = (sse, full)
    return best[1] if best is not None else {}


def _solve(rows: Sequence[Row], active: Sequence[str]) -> dict[str, float] | None:
    """Unconstrained least squares for `active` (others at 0 within the form, neutral outside
    it): residual r_i = (fixed_i + sum_j c_j x_ij) / m_i - 1; None when the columns are
    linearly dependent (the normal equations are singular)."""
    if not active:
        return {}
    xs = np.array([[r.per_unit_s[n] / r.measured_s for n in active] for r in rows])
    fixed = dict.fromkeys(active, 0.0)
    ys = np.array([1.0 - predicted_s(r, fixed) / r.measured_s for r in rows])
    if np.linalg.matrix_rank(xs) < len(active):
        return None
    coef, *_ = np.linalg.lstsq(xs, ys, rcond=None)
    return {name: float(c) for name, c in zip(active, coef, strict=True)}


def error_pct(row: Row, coeffs: Mapping[str, float]) -> float:
    """Signed error of predicted throughput vs measured, percent."""
    return (row.measured_s / predicted_s(row, coeffs) - 1.0) * 100.0


def leave_one_out(rows: Sequence[Row], form: Sequence[str]) -> list[float]:
    """Absolute error (percent) of each row predicted by `form` fitted on the others."""
    out = []
    for i, row in enumerate(rows):
        rest = [r for j, r in enumerate(rows) if j != i]
        out.append(abs(error_pct(row, fit_form(rest, form))))
    return out


def leave_one_submitter_out(rows: Sequence[Row], form: Sequence[str]) -> list[float]:
    """Absolute error (percent) of each row predicted by `form` fitted on the other
    submitters' rows."""
    return [
        abs(error_pct(row, fit_form([r for r in rows if r.submitter != row.submitter], form)))
        for row in rows
    ]


def choose(rows: Sequence[Row]) -> tuple[str, dict[str, float], dict[str, float]]:
    """(form, its coefficients on all `rows`, leave-one-out MAPE per form)."""
    loo = {name: statistics.fmean(leave_one_out(rows, form)) for name, form in FORMS.items()}
    name = min(FORMS, key=lambda f: (round(loo[f], 6), len(FORMS[f])))
    return name, fit_form(rows, FORMS[name]), loo


def bundled_terms(coeffs: Mapping[str, float]) -> dict[str, float | bool]:
    """A form's coefficients as `tuned_stack.json`'s `moe_ep` stores them: `layer_s`,
    `token_s`, `a2a_scale` (neutral where the form has none) and `per_step`."""
    per_step = any(coeffs.get(n, 0.0) != 0.0 for n in PER_STEP)
    return {
        "layer_s": coeffs.get("layer_step_s" if per_step else "layer_s", 0.0),
        "token_s": coeffs.get("token_step_s" if per_step else "token_s", 0.0),
        "a2a_scale": coeffs.get("a2a_scale", 1.0),
        "per_step": per_step,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--split", type=Path, default=SPLIT, help="the MoE training split CSV")
    ap.add_argument("--write", action="store_true", help=f"write moe_ep to {TUNED.name}")
    args = ap.parse_args(argv)
    rows = read_split(args.split)
    ep_rows = [r for r in rows if r.ep > 1]
    if len(ep_rows) < 2:
        raise SystemExit(f"error: fewer than 2 expert-parallel rows (ep > 1) in {args.split}")
    name, coeffs, loo = choose(ep_rows)
    print(f"{'form':<15}{'loo':>7}{'loso':>7}{'fit':>7}  MAPE %; coefficients (fitted on all)")
    for form, terms in FORMS.items():
        fit = fit_form(ep_rows, terms)
        mape = statistics.fmean(abs(error_pct(r, fit)) for r in ep_rows)
        loso = statistics.fmean(leave_one_submitter_out(ep_rows, terms))
        shown = ", ".join(f"{k} {v:.4g}" for k, v in fit.items()) or "-"
        mark = "  <- chosen" if form == name else ""
        print(f"{form:<15}{loo[form]:>7.1f}{loso:>7.1f}{mape:>7.1f}  {shown}{mark}")
    print(f"\n{'ep':>3}{'no term':>9}{'chosen':>9}  row")
    for r in rows:
        print(f"{r.ep:>3}{error_pct(r, {}):>+8.1f}%{error_pct(r, coeffs):>+8.1f}%  {r.label}")
    bundled = bundled_terms(coeffs)
    print(
        f"\nmoe_ep ({name}): layer_s {bundled['layer_s'] * 1e3:.3f} ms, token_s "
        f"{bundled['token_s'] * 1e9:.3f} ns, a2a_scale {bundled['a2a_scale']:.3f}, "
        f"{'once per step' if bundled['per_step'] else 'per micro-batch'} "
        f"({len(ep_rows)} expert-parallel rows)"
    )
    if args.write:
        doc = json.loads(TUNED.read_text(encoding="utf-8"))
        doc["moe_ep"] = {
            **bundled,
            "form": name,
            "rows": len(ep_rows),
            "loo_mape_pct": round(loo[name], 2),
            "fitted_on": "benchmarks/data/mlperf_moe_fit.csv (MLPerf Training v6.0 MoE rows of "
            "submitters not in validation/fp8_moe.csv; Richardyu114/training_results_v6.0 "
            "@ eabf23a07b2a0c60a289ff871dc3a46fff0d0421)",
            "command": "PYTHONPATH=src python benchmarks/fit_moe_ep_overhead.py --write",
        }
        TUNED.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {TUNED.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
