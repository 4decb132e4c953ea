"""`--layout auto`: the layout `gpurent plan` would price, for one estimate and for --from-csv
rows whose source does not publish a layout (issue 12: a run that ran is never "does not fit"
because a layout was left at its default)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import cli_json, one_line_error, run_cli

from gpurent.catalog import get_gpu
from gpurent.errors import InputError
from gpurent.estimate import bundled_estimator
from gpurent.estimate.rows import estimate_rows
from gpurent.plan.layouts import choose_layout, lay_out, with_layout_hint
from gpurent.workload.spec import Sharding, Task, Workload

LORA_70B = (
    "--model", "llama2-70b", "--gpu", "H100", "--gpus", "16", "--nodes", "2",
    "--precision", "bf16", "--batch-size", "1", "--seq-len", "8192", "--task", "finetune-lora",
)  # fmt: skip


def test_the_given_layout_of_a_70b_lora_on_16_gpus_does_not_fit_and_auto_finds_one() -> None:
    given = cli_json("estimate", *LORA_70B, "--json")
    assert given["fits"] is False  # data parallel, nothing sharded: the weights on every GPU
    auto = cli_json("estimate", *LORA_70B, "--layout", "auto", "--json")
    assert auto["fits"] is True
    assert auto["memory_per_gpu_gib"] < given["memory_per_gpu_gib"]
    lay = auto["layout"]
    assert lay["sharding"] != "none" or lay["tp"] > 1  # something is split
    assert "gpurent plan" in auto["layout_note"]


def test_a_layout_that_does_not_fit_names_one_that_does_and_none_where_nothing_fits() -> None:
    given = cli_json("estimate", *LORA_70B, "--json")
    auto = cli_json("estimate", *LORA_70B, "--layout", "auto", "--json")
    hint = [n for n in given["notes"] if "--layout auto" in n]
    assert len(hint) == 1 and f"{auto['memory_per_gpu_gib']:.1f} GiB" in hint[0]
    hopeless = cli_json(
        "estimate", "--model", "llama3.1-405b", "--gpu", "T4", "--gpus", "2", "--json"
    )
    assert hopeless["fits"] is False
    assert not [n for n in hopeless["notes"] if "--layout auto" in n]
    assert not [n for n in auto["notes"] if "--layout auto" in n]


def test_auto_is_the_planners_first_layout_that_fits() -> None:
    est = bundled_estimator()
    h100 = get_gpu("H100")
    wl = Workload(model="llama2-70b", task=Task.FINETUNE_LORA, batch_size_per_gpu=2, seq_len=4096)
    laid = lay_out(est, wl, gpu=h100, num_gpus=16, nodes=2, inter_node_gbps=400.0)
    choice = choose_layout(est, wl, gpu=h100, gpus_per_node=8, nodes=2, inter_node_gbps=400.0)
    assert laid.fits and choice.layout == laid.layout
    assert laid.workload == laid.layout.apply(wl)
    e = est.estimate(laid.workload, h100, 16, nodes=2, inter_node_gbps=400.0)
    assert e.fits
    # the global batch is kept where the micro-batch had to shrink
    assert (
        laid.workload.batch_size_per_gpu * laid.workload.gradient_accumulation
        == wl.batch_size_per_gpu * wl.gradient_accumulation
    )


def test_a_given_layout_is_replaced_and_a_job_that_never_fits_gets_the_closest_miss() -> None:
    est = bundled_estimator()
    wl = Workload(model="llama3.1-405b", batch_size_per_gpu=1, seq_len=8192, tensor_parallel=2)
    laid = lay_out(est, wl, gpu=get_gpu("T4"), num_gpus=2, nodes=1, inter_node_gbps=None)
    assert not laid.fits and laid.reason
    assert "no layout fits" in laid.note and laid.layout.label in laid.note
    with pytest.raises(InputError, match="do not split evenly over 2 nodes"):
        lay_out(est, wl, gpu=get_gpu("H100"), num_gpus=9, nodes=2, inter_node_gbps=None)


def test_layout_flag_errors_are_one_line() -> None:
    one_line_error(*run_cli("estimate", *LORA_70B, "--layout", "sideways"), "sideways", "auto")
    one_line_error(
        *run_cli("estimate", *LORA_70B, "--layout", "auto", "--tp", "4"), "--tp", "given"
    )


def test_csv_rows_take_a_layout_column(tmp_path: Path) -> None:
    f = tmp_path / "rows.csv"
    head = "model,gpu,num_gpus,nodes,precision,batch_size,seq_len,task,tp,layout\n"
    row = "llama2-70b,H100,16,2,bf16,1,8192,finetune-lora"
    f.write_text(f"{head}{row},,\n{row},,auto\n{row},4,auto\n{row},,upside\n")
    code, out, err = run_cli("estimate", "--from-csv", str(f), "--json")
    assert code == 0, err  # a row's error is that row's result; the others still run
    docs = [json.loads(line) for line in out.splitlines()]
    assert len(docs) == 4
    assert docs[0]["fits"] is False and "layout_note" not in docs[0]
    assert docs[1]["fits"] is True and "gpurent plan" in docs[1]["layout_note"]
    assert docs[1]["sharding"] != Sharding.NONE.value or int(docs[1]["tp"]) > 1
    assert "rows.csv:4" in docs[2]["error"] and "tp" in docs[2]["error"]
    assert "rows.csv:5" in docs[3]["error"] and "upside" in docs[3]["error"]
    one_line_error(*run_cli("estimate", "--from-csv", str(f), "--layout", "auto"), "layout column")


class _RejectsEveryLayout:
    """An estimator seam that can model no layout (every call a GpurentError)."""

    def __call__(
        self, workload: Workload, gpu: object, num_gpus: int, nodes: int, gbps: float | None
    ) -> object:
        raise InputError("no layout modelled here")

    def find_gpu(self, name: str) -> None:
        return None


def test_no_layout_that_applies_is_a_one_line_error_and_no_hint() -> None:
    wl = Workload(model="llama2-70b", task=Task.FINETUNE_LORA, batch_size_per_gpu=1)
    h100 = get_gpu("H100")
    with pytest.raises(InputError, match="no layout of llama2-70b applies") as err:
        lay_out(_RejectsEveryLayout(), wl, gpu=h100, num_gpus=8, nodes=1, inter_node_gbps=None)  # type: ignore[arg-type]
    assert "\n" not in str(err.value)
    est = bundled_estimator().estimate(wl, get_gpu("T4"), 1)
    assert not est.fits
    hinted = with_layout_hint(
        _RejectsEveryLayout(), est, wl, gpu=h100, nodes=1, inter_node_gbps=None
    )  # type: ignore[arg-type]
    assert hinted is est  # the search failing leaves the estimate as it was


def test_a_layout_auto_row_without_the_planners_choice_is_that_rows_error() -> None:
    row = {
        "model": "llama2-70b", "gpu": "H100", "num_gpus": "16", "nodes": "2",
        "precision": "bf16", "batch_size": "1", "layout": "auto",
    }  # fmt: skip
    (out,) = estimate_rows([(2, row)], "rows.csv", bundled_estimator())  # no lay_out passed
    assert out["error"].startswith("rows.csv:2:") and "planner's layout choice" in out["error"]
