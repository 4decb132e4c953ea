"""The tuned stack's per-MoE-layer expert-parallel overhead (`StackCoeffs.moe_ep_layer_s`,
fitted by benchmarks/fit_moe_ep_overhead.py on benchmarks/data/mlperf_moe_fit.csv)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from gpurent.catalog import Precision, all_gpus, get_gpu
from gpurent.estimate import Estimator, load_constants
from gpurent.workload import Sharding, Stack, Workload

ROOT = Path(__file__).resolve().parents[2]


def _estimator(layer_s: float | None = None) -> Estimator:
    k = load_constants()
    if layer_s is not None:
        tuned = dataclasses.replace(k.stacks["tuned"], moe_ep_layer_s=layer_s)
        k = dataclasses.replace(k, stacks={**k.stacks, "tuned": tuned})
    return Estimator(constants=k, gpus=all_gpus())


def _gpt_oss(ep: int, *, model: str = "gpt-oss-20b", cp: int = 1, batch: int = 1) -> Workload:
    return Workload(
        model=model,
        precision=Precision.MXFP8,
        batch_size_per_gpu=batch,
        seq_len=8192,
        context_parallel=cp,
        expert_parallel=ep,
        sharding=Sharding.ZERO1,
        stack=Stack.TUNED,
    )


def test_the_bundled_term_is_fitted_and_says_where_from() -> None:
    tuned = load_constants().stack("tuned")
    assert tuned is not None and tuned.moe_ep_layer_s > 0.0
    doc = json.loads((ROOT / "src/gpurent/estimate/data/tuned_stack.json").read_text())
    assert "mlperf_moe_fit.csv" in doc["moe_ep"]["fitted_on"]
    assert "validation" not in doc["moe_ep"]["fitted_on"].split(" (")[0]


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


def test_the_fit_refuses_validation_rows() -> None:
    """`fit_moe_ep_overhead.py` fits only a training split: a path under validation/ is refused
    with a one-line error before anything is read."""
    import pytest
    from tests.scripts import load_script

    fit = load_script("benchmarks/fit_moe_ep_overhead.py")
    with pytest.raises(SystemExit, match="validation rows are never fitted"):
        fit.main(["--split", "benchmarks/data/validation/fp8_moe.csv"])
