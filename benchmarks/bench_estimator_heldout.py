"""Accuracy of `gpurent estimate` on held-out measurements (never used for fitting).

Reads `benchmarks/data/heldout/training.csv` and `llm.csv` (public figures for Hopper and
Blackwell GPUs and other suites; provenance in that folder's README.md), feeds their input
columns to `python -m gpurent estimate --from-csv FILE --json` in a subprocess with the current
interpreter, pairs each output line with its measured value and prints the mean absolute
percentage error (MAPE, %) by group plus a per-row table.

Run from the repository root:

    PYTHONPATH=src python benchmarks/bench_estimator_heldout.py
    PYTHONPATH=src python benchmarks/bench_estimator_heldout.py --markdown   # for docs
    PYTHONPATH=src python benchmarks/bench_estimator_heldout.py --worst 15 --only llm

Targets from the estimator issue: MAPE <= 12% on training throughput, <= 20% on LLM tokens/s.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data" / "heldout"
INPUT_COLUMNS = (
    "model",
    "gpu",
    "num_gpus",
    "precision",
    "batch_size",
    "seq_len",
    "activation_checkpointing",
    "sharding",
    "stack",
)
# The software stack each suite was measured on (a known input of the measurement, passed to the
# estimator's `stack` column; see the README of the data folder). LLM suites ignore it.
SUITE_STACK = {"lambda-v1": "ngc-22.09", "lambda-v2": "ngc-24"}
TARGET_TRAINING_MAPE_PCT = 12.0
TARGET_LLM_MAPE_PCT = 20.0
# Architecture by catalog-name prefix; only what the held-out files contain needs to be here.
ARCH_BY_PREFIX = (
    ("B200", "Blackwell"),
    ("GH200", "Hopper"),
    ("H100", "Hopper"),
    ("H200", "Hopper"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    """One held-out measurement paired with the estimator's answer for it."""

    kind: str  # "training" or "llm"
    inputs: dict[str, str]
    suite: str
    measured: float
    measured_unit: str
    measured_mfu: float | None
    predicted: float | None
    predicted_unit: str | None
    predicted_mfu: float | None
    error: str | None  # the estimator's {"error": ...} for this row, or a unit mismatch

    @property
    def ape_pct(self) -> float | None:
        """Absolute percentage error of the prediction, %; None when there is none."""
        if self.predicted is None or self.error is not None:
            return None
        return abs(self.predicted - self.measured) / self.measured * 100.0

    @property
    def signed_pct(self) -> float | None:
        """(predicted - measured) / measured, %: positive means over-prediction."""
        if self.predicted is None or self.error is not None:
            return None
        return (self.predicted - self.measured) / self.measured * 100.0


def load_heldout(path: Path, kind: str) -> list[dict[str, str]]:
    """Rows of one held-out CSV; fails with a clear message if a column is missing."""
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        need = (*INPUT_COLUMNS[:-1], "measured_throughput", "measured_unit", "suite")
        missing = [c for c in need if c not in (reader.fieldnames or ())]
        if missing:
            sys.exit(f"error: {path}: missing columns {', '.join(missing)}")
        rows = list(reader)
    for r in rows:
        r["_kind"] = kind
        r.setdefault("stack", SUITE_STACK.get(r["suite"], ""))
    return rows


def run_estimator(rows: list[dict[str, str]], pythonpath: str | None) -> list[dict[str, object]]:
    """Runs the estimator CLI once on all rows; returns one parsed JSON object per row."""
    with tempfile.TemporaryDirectory() as tmp:
        csv_path = Path(tmp) / "heldout_inputs.csv"
        with csv_path.open("w", newline="") as fh:
            w = csv.DictWriter(fh, INPUT_COLUMNS, extrasaction="ignore", lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        env = dict(os.environ)
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        # The user's calibration store would leak measurements into the estimate: use an empty home.
        env["GPURENT_HOME"] = str(Path(tmp) / "home")
        cmd = [sys.executable, "-m", "gpurent", "estimate", "--from-csv", str(csv_path), "--json"]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0 and "No such command" in proc.stderr:
        sys.exit(
            "error: this gpurent has no `estimate` command yet (the estimator has not landed); "
            "run against a tree that has it, e.g. PYTHONPATH=/path/to/src"
        )
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    if proc.returncode != 0 or len(lines) != len(rows):
        tail = (proc.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        sys.exit(
            f"error: `{' '.join(cmd[1:4])} --from-csv` exited {proc.returncode} with "
            f"{len(lines)} JSON lines for {len(rows)} rows: {tail}"
        )
    out: list[dict[str, object]] = []
    for i, ln in enumerate(lines, start=1):
        try:
            obj = json.loads(ln)
        except json.JSONDecodeError as exc:
            sys.exit(f"error: estimator output line {i} is not JSON ({exc.msg}): {ln[:120]}")
        if not isinstance(obj, dict):
            sys.exit(f"error: estimator output line {i} is not a JSON object: {ln[:120]}")
        out.append(obj)
    return out


def _unit_key(unit: str) -> str:
    return unit.replace("_", " ").replace("-", " ").strip().lower()


def _opt_float(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def pair(rows: list[dict[str, str]], outputs: list[dict[str, object]]) -> list[Row]:
    """Pairs input rows with estimator outputs (same order); checks the units agree."""
    paired = []
    for r, o in zip(rows, outputs, strict=True):
        err = o.get("error")
        pred = _opt_float(o.get("throughput"))
        unit = o.get("throughput_unit")
        unit_s = str(unit) if unit is not None else None
        if (
            err is None
            and unit_s is not None
            and _unit_key(unit_s) != _unit_key(r["measured_unit"])
        ):
            err = f"unit mismatch: estimator {unit_s}, measured {r['measured_unit']}"
        if err is None and pred is None:
            err = "no throughput in the estimator's output"
        mfu_raw = (r.get("measured_mfu") or "").strip()
        paired.append(
            Row(
                kind=r["_kind"],
                inputs={c: r.get(c, "") for c in INPUT_COLUMNS},
                suite=r["suite"],
                measured=float(r["measured_throughput"]),
                measured_unit=r["measured_unit"],
                measured_mfu=float(mfu_raw) if mfu_raw else None,
                predicted=pred,
                predicted_unit=unit_s,
                predicted_mfu=_opt_float(o.get("mfu")),
                error=None if err is None else str(err),
            )
        )
    return paired


def arch_of(gpu: str) -> str:
    for prefix, arch in ARCH_BY_PREFIX:
        if gpu.upper().startswith(prefix):
            return arch
    return "Ampere" if gpu.upper().startswith("A100") else "other"


def precision_group(p: str) -> str:
    p = p.strip().lower()
    if p in ("amp", "fp16", "fp16_amp"):
        return "AMP (fp16)"
    if p in ("tf32", "fp32_or_tf32", "fp32", "strict-fp32"):
        return "TF32/FP32"
    return p


GROUPINGS: tuple[tuple[str, Callable[[Row], str]], ...] = (
    ("all", lambda r: "training" if r.kind == "training" else "LLM tokens/s"),
    ("suite", lambda r: r.suite),
    ("architecture", lambda r: f"{r.kind}: {arch_of(r.inputs['gpu'])}"),
    ("gpu", lambda r: f"{r.kind}: {r.inputs['gpu']}"),
    ("gpus", lambda r: f"{r.kind}: {'1 GPU' if r.inputs['num_gpus'] == '1' else 'multi-GPU'}"),
    ("precision", lambda r: f"{r.kind}: {precision_group(r.inputs['precision'])}"),
    ("model", lambda r: r.inputs["model"] if r.kind == "training" else "LLM (all)"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupStat:
    grouping: str
    group: str
    n_rows: int
    n_errors: int
    mape_pct: float | None
    median_signed_pct: float | None
    max_ape_pct: float | None


def group_stats(rows: Iterable[Row]) -> list[GroupStat]:
    rows = list(rows)
    stats = []
    for name, key in GROUPINGS:
        groups: dict[str, list[Row]] = {}
        for r in rows:
            groups.setdefault(key(r), []).append(r)
        for g in sorted(groups):
            members = groups[g]
            apes = [a for a in (r.ape_pct for r in members) if a is not None]
            signed = sorted(s for s in (r.signed_pct for r in members) if s is not None)
            stats.append(
                GroupStat(
                    grouping=name,
                    group=g,
                    n_rows=len(members),
                    n_errors=len(members) - len(apes),
                    mape_pct=sum(apes) / len(apes) if apes else None,
                    median_signed_pct=signed[len(signed) // 2] if signed else None,
                    max_ape_pct=max(apes) if apes else None,
                )
            )
    return stats


def _f(v: float | None, fmt: str = "{:.1f}") -> str:
    return "-" if v is None else fmt.format(v)


def _table(header: list[str], body: list[list[str]], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(row) + " |" for row in body]
        return "\n".join(lines)
    widths = [max(len(x) for x in col) for col in zip(header, *body, strict=False)]
    fmt = "  ".join("{:<" + str(w) + "}" for w in widths)
    return "\n".join(
        [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
        + [fmt.format(*b) for b in body]
    )


def report(rows: list[Row], worst: int, markdown: bool, all_rows: bool) -> str:
    parts = []
    stats = group_stats(rows)
    body = [
        [
            s.grouping,
            s.group,
            str(s.n_rows),
            str(s.n_errors),
            _f(s.mape_pct),
            _f(s.median_signed_pct, "{:+.1f}"),
            _f(s.max_ape_pct),
        ]
        for s in stats
    ]
    hdr = ["grouping", "group", "rows", "errors", "MAPE %", "median signed %", "max APE %"]
    parts.append("MAPE by group (signed: + = estimator over-predicts)")
    parts.append(_table(hdr, body, markdown))
    for s in stats:
        if s.grouping == "all":
            target = TARGET_TRAINING_MAPE_PCT if s.group == "training" else TARGET_LLM_MAPE_PCT
            ok = s.mape_pct is not None and s.mape_pct <= target
            parts.append(
                f"{s.group}: MAPE {_f(s.mape_pct)}% vs target <= {target:.0f}%: "
                f"{'met' if ok else 'NOT met'}"
            )
    ranked = sorted(rows, key=lambda r: -(r.ape_pct if r.ape_pct is not None else float("inf")))
    shown = ranked if all_rows else ranked[:worst]
    hdr = ["model", "gpu", "n", "prec", "batch", "seq", "suite", "measured", "predicted", "unit"]
    hdr += ["signed %", "meas MFU", "pred MFU"]
    body = [
        [
            r.inputs["model"],
            r.inputs["gpu"],
            r.inputs["num_gpus"],
            r.inputs["precision"],
            r.inputs["batch_size"],
            r.inputs["seq_len"] or "-",
            r.suite,
            f"{r.measured:,.0f}",
            _f(r.predicted, "{:,.0f}"),
            r.measured_unit,
            r.error if r.error else _f(r.signed_pct, "{:+.1f}"),
            _f(r.measured_mfu, "{:.3f}"),
            _f(r.predicted_mfu, "{:.3f}"),
        ]
        for r in shown
    ]
    title = "All rows" if all_rows else f"Worst {len(shown)} rows by absolute error"
    parts.append(title + " (errors first)")
    parts.append(_table(hdr, body, markdown))
    return "\n\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--data-dir", type=Path, default=DATA_DIR, help="folder with training.csv and llm.csv"
    )
    ap.add_argument("--only", choices=("training", "llm"), help="evaluate one file only")
    ap.add_argument("--worst", type=int, default=20, help="rows in the per-row table (default 20)")
    ap.add_argument("--all-rows", action="store_true", help="print every row, not only the worst")
    ap.add_argument(
        "--markdown", action="store_true", help="markdown tables for docs/benchmarks.md"
    )
    ap.add_argument(
        "--pythonpath", help="PYTHONPATH for the estimator subprocess (default: inherited)"
    )
    ap.add_argument(
        "--include-flagged",
        action="store_true",
        help="keep rows flagged superlinear_scaling_check (per-GPU > 1.1x the 1-GPU figure)",
    )
    ap.add_argument("--json-out", type=Path, help="also write paired rows as JSON lines here")
    ap.add_argument(
        "--ignore-stack",
        action="store_true",
        help="estimate every row with the default stack instead of the one its suite ran on",
    )
    args = ap.parse_args(argv)

    rows: list[dict[str, str]] = []
    for kind, name in (("training", "training.csv"), ("llm", "llm.csv")):
        if args.only in (None, kind):
            path = args.data_dir / name
            if not path.is_file():
                sys.exit(f"error: {path} not found; pass --data-dir")
            rows += load_heldout(path, kind)
    if args.ignore_stack:
        for r in rows:
            r["stack"] = ""
    flagged = [r for r in rows if (r.get("flags") or "").strip()]
    if not args.include_flagged:
        rows = [r for r in rows if not (r.get("flags") or "").strip()]
    outputs = run_estimator(rows, args.pythonpath)
    paired = pair(rows, outputs)
    print(report(paired, args.worst, args.markdown, args.all_rows))
    verb = "included" if args.include_flagged else "excluded (--include-flagged keeps them)"
    print(f"\n{len(paired)} rows evaluated; {len(flagged)} flagged rows {verb}")
    if args.json_out:
        with args.json_out.open("w") as fh:
            for r in paired:
                rec = {
                    **r.inputs,
                    "suite": r.suite,
                    "measured": r.measured,
                    "predicted": r.predicted,
                }
                rec |= {"unit": r.measured_unit, "signed_pct": r.signed_pct, "error": r.error}
                fh.write(json.dumps(rec) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
