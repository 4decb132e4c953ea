"""Types that say what they mean: the estimate's precision, basis and link are enums, and the
planner's candidate rows are named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpurent.catalog import Precision, bundled_offers, get_gpu
from gpurent.catalog.links import Interconnect
from gpurent.errors import InputError
from gpurent.estimate.calibration_file import add_measurements, load_estimator
from gpurent.estimate.estimator import bundled_estimator
from gpurent.estimate.result import Basis
from gpurent.plan.constraints import Constraints
from gpurent.plan.enumerate import enumerate_candidates, filter_offers
from gpurent.pricing.costs import CostAssumptions
from gpurent.workload import Sharding, Workload, preset

RESNET = Workload(model="resnet50", batch_size_per_gpu=256)


def test_precision_and_basis_are_enums_and_print_as_before() -> None:
    est = bundled_estimator().estimate(RESNET, get_gpu("H100"), 8)
    assert est.precision is Precision.AMP and est.basis is Basis.CALIBRATED
    assert f"{est.precision} {est.basis}" == "amp calibrated"
    doc = est.to_json()
    assert doc["precision"] == "amp" and doc["basis"] == "calibrated"
    assert json.dumps(doc["basis"]) == '"calibrated"'


def test_a_measurement_makes_the_basis_measured(tmp_path: Path) -> None:
    rows = tmp_path / "mine.csv"
    rows.write_text("model,gpu,num_gpus,precision,batch_size,throughput\n")
    rows.write_text(rows.read_text() + "resnet50,H100,8,amp,256,20000\n")
    add_measurements(rows)
    est = load_estimator().estimate(RESNET, get_gpu("H100"), 8)
    assert est.basis is Basis.MEASURED and est.throughput == pytest.approx(20000)


def test_the_link_override_is_an_interconnect_and_its_name_reads_the_same() -> None:
    estimator = bundled_estimator()
    gpu = get_gpu("H100")
    wl = Workload(model="llama3-8b", batch_size_per_gpu=2, seq_len=4096, sharding=Sharding.ZERO3)
    by_enum = estimator.estimate(wl, gpu, 8, intra_node_interconnect=Interconnect.PCIE)
    name: Any = "pcie"
    assert estimator.estimate(wl, gpu, 8, intra_node_interconnect=name) == by_enum
    assert by_enum.throughput < estimator.estimate(wl, gpu, 8).throughput
    with pytest.raises(InputError, match=r"unknown interconnect 'any'.*\(one of nvlink, pcie\)"):
        estimator.estimate(wl, gpu, 8, intra_node_interconnect=Interconnect.ANY)


def test_candidate_rows_are_named_and_point_at_their_offer_and_context() -> None:
    wl = preset("llama-lora")
    constraints, assumptions = Constraints(), CostAssumptions()
    estimator = bundled_estimator()
    kept = filter_offers(bundled_offers(), constraints, assumptions, estimator.find_gpu).kept
    en = enumerate_candidates(wl, kept, constraints, assumptions, estimator)
    row = min(en.rows)  # rows sort by cost, then time
    assert row.cost_usd == min(r.cost_usd for r in en.rows)
    ctx = en.contexts[row.context_index]
    assert row.cost_usd == pytest.approx(ctx.coef_a * row.price_usd_per_hour + ctx.coef_b)
    assert row.wall_s == ctx.wall_s
    assert en.offers[row.offer_index].gpu_name == ctx.config.gpu.name
