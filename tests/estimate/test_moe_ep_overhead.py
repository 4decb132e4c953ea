"""The tuned stack's MoE expert-parallel cost (`StackCoeffs.moe_ep_layer_s`, `moe_ep_token_s`,
`moe_ep_a2a_scale`, `moe_ep_per_step`), fitted by benchmarks/fit_moe_ep_overhead.py on
benchmarks/data/mlperf_moe_fit.csv."""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from gpurent.catalog import Precision, all_gpus, get_gpu
from gpurent.estimate import Estimator, load_constants
from gpurent.workload import Sharding, Stack, Workload

ROOT = Path(__file__).resolve().parents[2]


def _estimator(layer_s: float | None = None, **terms: Any) -> Estimator:
    k = load_constants()
    fields = dict(terms)
    if layer_s is not None:
        fields["moe_ep_layer_s"] = layer_s
    if fields:
        tuned = dataclasses.replace(k.stacks["tuned"], **fields)
        k = dataclasses.replace(k, stacks={**k.stacks, "tuned": tuned})
    return Estimator(constants=k, gpus=all_gpus())


def _gpt_oss(
    ep: int, *, model: str = "gpt-oss-20b", cp: int = 1, batch: int = 1, ga: int = 1
) -> Workload:
    return Workload(
        model=model,
        precision=Precision.MXFP8,
        batch_size_per_gpu=batch,
        seq_len=8192,
        context_parallel=cp,
        expert_parallel=ep,
        gradient_accumulation=ga,
        sharding=Sharding.ZERO1,
        stack=Stack.TUNED,
    )


def test_the_bundled_term_is_fitted_and_says_where_from() -> None:
    tuned = load_constants().stack("tuned")
    assert tuned is not None and tuned.moe_ep_layer_s > 0.0
    doc = json.loads((ROOT / "src/gpurent/estimate/data/tuned_stack.json").read_text())
    assert "mlperf_moe_fit.csv" in doc["moe_ep"]["fitted_on"]
    assert "validation" not in doc["moe_ep"]["fitted_on"].split(" (")[0]
    # the form the fit chose and what it stored agree with what the estimator loads
    fit = doc["moe_ep"]
    assert fit["form"] in ("layer/step", "layer/step+a2a", "token/step") or not fit["per_step"]
    assert tuned.moe_ep_per_step is fit["per_step"]
    assert tuned.moe_ep_a2a_scale == fit["a2a_scale"] and tuned.moe_ep_token_s == fit["token_s"]
    assert fit["rows"] >= 5 and fit["loo_mape_pct"] > 0.0


def test_expert_parallel_step_grows_by_the_term_per_moe_layer() -> None:
    gpu = get_gpu("GB300")
    wl = _gpt_oss(4, cp=2)
    off = _estimator(0.0).estimate(wl, gpu, 72, nodes=18)
    on = _estimator(0.002).estimate(wl, gpu, 72, nodes=18)
    layers = 24  # gpt-oss-20b: every layer is a MoE layer
    assert abs((on.step_time_s - off.step_time_s) - 0.002 * layers) < 1e-9
    assert on.throughput < off.throughput


def test_ep1_and_dense_models_are_unchanged() -> None:
    gpu = get_gpu("B300")
    for wl, n, nodes in (
        (_gpt_oss(1, batch=3), 8, 1),
        (dataclasses.replace(_gpt_oss(1), model="llama3-8b", precision=Precision.FP8), 8, 1),
    ):
        a = _estimator(0.0).estimate(wl, gpu, n, nodes=nodes)
        b = _estimator(0.01).estimate(wl, gpu, n, nodes=nodes)
        assert a.step_time_s == b.step_time_s


def test_every_expert_parallel_degree_pays_the_same_fixed_cost() -> None:
    """The term is a fixed latency per MoE layer: ep 2, 4 and 8 add the same seconds (the
    byte-priced all-to-all carries what grows with ep)."""
    gpu = get_gpu("GB300")
    est, base = _estimator(), _estimator(0.0)
    extra = [
        est.estimate(_gpt_oss(ep), gpu, 32, nodes=8).step_time_s
        - base.estimate(_gpt_oss(ep), gpu, 32, nodes=8).step_time_s
        for ep in (2, 4, 8)
    ]
    assert max(extra) - min(extra) < 1e-9 and min(extra) > 0.0


def test_a_per_step_cost_is_spread_over_the_micro_batches() -> None:
    """With `moe_ep_per_step` the fixed cost is paid once per step: 4 micro-batches per step
    each carry a quarter of what one micro-batch per step carries; per micro-batch, 4 times
    the one-micro-batch cost."""
    gpu = get_gpu("GB300")
    extra = {}
    for per_step in (True, False):
        for ga in (1, 4):
            wl = _gpt_oss(4, cp=2, ga=ga)
            on = _estimator(0.002, moe_ep_per_step=per_step).estimate(wl, gpu, 72, nodes=18)
            off = _estimator(0.0, moe_ep_per_step=per_step).estimate(wl, gpu, 72, nodes=18)
            extra[per_step, ga] = on.step_time_s - off.step_time_s
    assert extra[True, 4] == pytest.approx(extra[True, 1] / 4, rel=1e-9)
    assert extra[False, 4] == pytest.approx(extra[False, 1], rel=1e-9)
    assert extra[False, 1] == pytest.approx(0.002 * 24, rel=1e-9)


@pytest.mark.parametrize(
    "terms",
    [
        {},  # the bundled fit
        {"moe_ep_token_s": 1e-8, "moe_ep_per_step": False},
        {"moe_ep_a2a_scale": 0.5, "moe_ep_layer_s": 0.001},
    ],
)
def test_more_tokens_per_expert_never_makes_expert_parallelism_cheaper(
    terms: dict[str, Any],
) -> None:
    """The seconds expert parallelism adds per step (every MoE term against none of them)
    never shrink as a micro-batch brings more tokens to each expert (micro-batch 1, 2, 4)."""
    gpu = get_gpu("GB300")
    none = {"moe_ep_layer_s": 0.0, "moe_ep_token_s": 0.0, "moe_ep_a2a_scale": 0.0}
    costs = []
    for batch in (1, 2, 4):
        wl = _gpt_oss(4, batch=batch)
        on = _estimator(**terms).estimate(wl, gpu, 32, nodes=8)
        off = _estimator(**none).estimate(wl, gpu, 32, nodes=8)
        costs.append(on.step_time_s - off.step_time_s)
    assert all(c >= 0.0 for c in costs)
    assert costs == sorted(costs)


def test_the_fit_refuses_validation_rows() -> None:
    """`fit_moe_ep_overhead.py` fits only a training split: a path under validation/ is refused
    with a one-line error before anything is read."""
    from tests.scripts import load_script

    fit = load_script("benchmarks/fit_moe_ep_overhead.py")
    with pytest.raises(SystemExit, match="validation rows are never fitted"):
        fit.main(["--split", "benchmarks/data/validation/fp8_moe.csv"])


def test_the_fit_reads_the_split_and_recovers_a_known_cost() -> None:
    """`read_split` gives every row of the training split its linear columns (zero for ep 1,
    where no term applies); `fit_form` recovers a per-step cost planted in the measured
    values, never returns a negative coefficient, and `choose` picks the planted form."""
    from tests.scripts import load_script

    fit = load_script("benchmarks/fit_moe_ep_overhead.py")
    rows = fit.read_split(ROOT / "benchmarks/data/mlperf_moe_fit.csv")
    assert len(rows) >= 7 and sum(r.ep > 1 for r in rows) >= 5
    assert {"Google", "Dell", "Cisco", "Supermicro"} <= {r.submitter for r in rows if r.ep > 1}
    for r in rows:
        assert r.base_s > 0.0 and r.measured_s > 0.0
        if r.ep == 1:
            assert all(v == 0.0 for v in r.per_unit_s.values())
        else:
            assert r.per_unit_s["layer_s"] > 0.0 and r.per_unit_s["a2a_scale"] > 0.0
            assert r.per_unit_s["layer_step_s"] <= r.per_unit_s["layer_s"]
    ep = [r for r in rows if r.ep > 1]
    planted = [r._replace(measured_s=fit.predicted_s(r, {"layer_step_s": 0.0015})) for r in ep]
    got = fit.fit_form(planted, ("layer_step_s",))
    assert got["layer_step_s"] == pytest.approx(0.0015, rel=1e-6)
    assert all(v >= 0.0 for f in fit.FORMS.values() for v in fit.fit_form(ep, f).values())
    name, _, loo = fit.choose(planted)
    assert loo[name] == pytest.approx(0.0, abs=1e-6) and fit.FORMS[name] == ("layer_step_s",)


def test_the_expert_parallel_note_says_what_each_stack_priced() -> None:
    gpu = get_gpu("GB300")
    tuned = _estimator(0.002, moe_ep_per_step=True).estimate(_gpt_oss(4, cp=2), gpu, 72, nodes=18)
    note = next(n for n in tuned.notes if n.startswith("expert parallel 4"))
    assert "2 ms per MoE layer per step" in note and "fitted on MLPerf v6.0" in note
    default = dataclasses.replace(_gpt_oss(4, cp=2), stack=Stack.NGC_24)
    plain = _estimator().estimate(default, gpu, 72, nodes=18)
    note = next(n for n in plain.notes if n.startswith("expert parallel 4"))
    assert "priced unhidden;" in note and "ms per MoE layer" not in note


def test_the_fit_needs_two_expert_parallel_rows(tmp_path: Path) -> None:
    """A split with fewer than two ep > 1 rows cannot choose a form: a one-line error."""
    from tests.scripts import load_script

    fit = load_script("benchmarks/fit_moe_ep_overhead.py")
    with (ROOT / "benchmarks/data/mlperf_moe_fit.csv").open(newline="") as fh:
        reader = csv.DictReader(fh)
        fields = list(reader.fieldnames or [])
        kept = [r for r in reader if (r["ep"] or "1") == "1"]
    assert kept  # the split's ep-1 rows
    split = tmp_path / "ep1_only.csv"
    with split.open("w", newline="") as fh:
        out = csv.DictWriter(fh, fieldnames=fields)
        out.writeheader()
        out.writerows(kept)
    with pytest.raises(SystemExit, match="fewer than 2 expert-parallel rows"):
        fit.main(["--split", str(split)])
