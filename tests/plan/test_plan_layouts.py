"""The planner's layout enumeration considers HSDP, interleaved pipelines and sequence parallel
where they fit (issue 12)."""

from __future__ import annotations

import dataclasses

from gpurent.catalog import get_gpu
from gpurent.catalog.precision import Precision
from gpurent.estimate import bundled_estimator
from gpurent.plan.layouts import Layout, candidate_layouts, choose_layout
from gpurent.workload.spec import Recompute, Sharding, Workload


def _wl(model: str = "llama2-13b", batch: int = 4) -> Workload:
    return Workload(model=model, precision=Precision.BF16, batch_size_per_gpu=batch, seq_len=4096)


def _first_pass(wl: Workload, per_node: int, nodes: int) -> list[Layout]:
    """The layouts tried at the workload's own micro-batch (before any halving)."""
    out = []
    for lay in candidate_layouts(wl, per_node, nodes):
        if lay.batch_size_per_gpu < wl.batch_size_per_gpu and lay.pipeline_parallel == 1:
            break
        out.append(lay)
    return out


def test_multi_node_training_tries_hsdp_before_zero3_and_interleaved_before_1f1b() -> None:
    labels = [lay.label for lay in _first_pass(_wl("llama3-70b"), 8, 4)]
    assert labels.index("HSDP DP32") < labels.index("ZeRO-3 DP32")
    assert labels.index("HSDP DP32 +recompute") < labels.index("ZeRO-3 DP32 +recompute")
    piped = [lay for lay in _first_pass(_wl("llama3-70b"), 8, 4) if lay.pipeline_parallel > 1]
    assert piped[0].virtual_pipeline_stages == 2 and piped[0].label == "TP8 PP4 VP2 +recompute"
    # the 4 sequences of the micro-batch become 4 pipeline micro-batches of one sequence each
    assert (piped[0].batch_size_per_gpu, piped[0].gradient_accumulation) == (1, 4)
    assert piped[1].virtual_pipeline_stages == 1


def test_single_node_has_no_hsdp_or_pipeline_and_vp_needs_dividing_layers() -> None:
    one = list(candidate_layouts(_wl(), 8, 1))
    assert all(lay.sharding is not Sharding.HSDP and lay.pipeline_parallel == 1 for lay in one)
    # llama3-8b has 32 layers: 3 stages x 2 virtual stages do not divide them
    three = list(candidate_layouts(_wl("llama3-8b"), 8, 3))
    assert any(lay.pipeline_parallel == 3 for lay in three)
    assert all(lay.virtual_pipeline_stages == 1 for lay in three)


def test_planner_picks_hsdp_where_it_fits_and_it_communicates_less_than_zero3() -> None:
    est = bundled_estimator()
    h100 = get_gpu("H100")
    wl = _wl()
    choice = choose_layout(est, wl, gpu=h100, gpus_per_node=8, nodes=2, inter_node_gbps=100.0)
    assert choice.layout is not None and choice.estimate is not None
    assert choice.layout.sharding is Sharding.HSDP and choice.estimate.fits
    zero3 = dataclasses.replace(choice.layout, sharding=Sharding.ZERO3)
    z3 = est(zero3.apply(wl), h100, 16, 2, 100.0)
    assert choice.estimate.communication_time_s <= z3.communication_time_s
    assert choice.estimate.throughput >= z3.throughput


def test_big_model_on_two_nodes_takes_an_interleaved_pipeline() -> None:
    est = bundled_estimator()
    choice = choose_layout(
        est, _wl("llama3-70b", 8), gpu=get_gpu("H100"), gpus_per_node=8, nodes=2,
        inter_node_gbps=100.0,
    )  # fmt: skip
    assert choice.layout is not None and choice.layout.virtual_pipeline_stages == 2
    assert choice.estimate is not None and choice.estimate.fits


def test_layout_apply_keeps_recompute_and_sequence_parallel_consistent() -> None:
    wl = dataclasses.replace(_wl(), recompute=Recompute.FULL, sequence_parallel=True)
    lay = Layout(
        num_gpus=8,
        sharding=Sharding.ZERO3,
        tensor_parallel=1,
        pipeline_parallel=1,
        activation_checkpointing=False,
        batch_size_per_gpu=2,
        gradient_accumulation=1,
    )
    out = lay.apply(wl)
    assert out.recompute_mode is Recompute.NONE and out.sequence_parallel is None
    sel = lay.apply(dataclasses.replace(wl, recompute=Recompute.SELECTIVE))
    assert sel.recompute_mode is Recompute.SELECTIVE
    tp = dataclasses.replace(lay, tensor_parallel=4, activation_checkpointing=True).apply(wl)
    assert tp.sequence_parallel is True and tp.recompute_mode is Recompute.FULL
