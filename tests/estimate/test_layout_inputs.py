"""Layouts through the inputs people give: workload files and --from-csv rows (issue 12)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli

from gpurent.catalog import get_gpu
from gpurent.catalog.precision import Precision
from gpurent.estimate import estimate
from gpurent.workload import load_workload
from gpurent.workload.spec import Recompute, Sharding, Task, Workload

TOML = """
model = "llama3-70b"
precision = "bf16"
batch_size_per_gpu = 1
seq_len = 8192
tensor_parallel = 8
pipeline_parallel = 4
virtual_pipeline_stages = 5
context_parallel = 2
sequence_parallel = false
recompute = "selective"
gradient_accumulation = 16
sharding = "hsdp"
"""


def test_workload_file_round_trip_of_every_layout_field(tmp_path: Path) -> None:
    f = tmp_path / "big.toml"
    f.write_text(TOML)
    wl = load_workload(f)
    assert (wl.tensor_parallel, wl.pipeline_parallel, wl.virtual_pipeline_stages) == (8, 4, 5)
    assert (wl.context_parallel, wl.gradient_accumulation) == (2, 16)
    assert wl.sequence_parallel is False and not wl.sequence_parallel_on
    assert wl.recompute is Recompute.SELECTIVE and wl.sharding is Sharding.HSDP
    # the short names of --from-csv are accepted in files too (YAML here)
    y = tmp_path / "short.yaml"
    y.write_text(
        "model: llama3-70b\nprecision: bf16\nbatch_size: 1\nseq_len: 8192\ntp: 8\npp: 4\n"
        "vp: 5\ncp: 2\nsp: false\nrecompute: selective\ngrad_accum: 16\nsharding: hsdp\n"
    )
    assert load_workload(y) == wl.__class__(**{**_fields(wl), "name": "short"})
    # and the CLI estimates the file as the Python API does, on the nodes given
    code, out, err = run_cli(
        "estimate", "--workload", str(f), "--gpu", "H100", "--gpus", "128", "--nodes", "16",
        "--json",
    )  # fmt: skip
    assert code == 0, err
    api = estimate(wl, get_gpu("H100"), 128, nodes=16)
    doc = json.loads(out)
    assert doc["throughput"] == api.throughput and doc["nodes"] == 16


def _fields(wl: Workload) -> dict[str, object]:
    return {k: getattr(wl, k) for k in wl.__dataclass_fields__}


def test_recompute_true_in_a_file_is_full_and_a_bad_value_is_one_line(tmp_path: Path) -> None:
    f = tmp_path / "a.toml"
    f.write_text('model = "llama3-8b"\nrecompute = "full"\n')
    assert load_workload(f).activation_checkpointing
    f.write_text('model = "llama3-8b"\nrecompute = "some"\n')
    code, _, err = run_cli("estimate", "--workload", str(f), "--gpu", "H100")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "a.toml" in err and "'some'" in err and "selective" in err


CSV_HEADER = (
    "model,gpu,num_gpus,nodes,inter_node_gbps,precision,batch_size,seq_len,task,tp,pp,vp,cp,"
    "sp,grad_accum,recompute,sharding,lora_rank,output_tokens,stack,note\n"
)


def test_from_csv_reads_every_layout_column_and_keeps_the_nodes(tmp_path: Path) -> None:
    f = tmp_path / "rows.csv"
    f.write_text(
        CSV_HEADER
        + "llama3-8b,H100,16,2,25,bf16,2,4096,training,,,,,,,,zero3,,,,multi-node\n"
        + "llama3-8b,H100,16,,25,bf16,2,4096,training,,,,,,,,zero3,,,,same row one node\n"
        + "llama3-70b,H100,64,8,400,bf16,1,8192,training,8,4,5,2,true,16,selective,zero1,,,,\n"
        + "llama3-8b,H100,8,,,bf16,2,4096,finetune-lora,,,,,,,,zero3,64,,,\n"
        + "llama3-8b,H100,8,,,bf16,4,1024,inference,2,,,,,,,,,512,,\n"
        + "resnet50,A100,8,,,amp,256,,,,,,,,,,,,,nvidia-dle,\n"
        + "llama3-8b,H100,8,,,bf16,2,4096,training,,,2,,,,,,,,,vp without pp\n"
    )
    code, out, err = run_cli("estimate", "--from-csv", str(f), "--json")
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    h100 = get_gpu("H100")
    multi, single = rows[0], rows[1]
    assert multi["nodes"] == 2 and single["nodes"] == 1
    zero3 = Workload(
        model="llama3-8b",
        precision=Precision.BF16,
        batch_size_per_gpu=2,
        seq_len=4096,
        sharding=Sharding.ZERO3,
    )
    api = estimate(zero3, h100, 16, nodes=2, inter_node_gbps=25.0)
    assert multi["throughput"] == api.throughput
    assert multi["throughput"] < single["throughput"]  # 25 Gbit/s between the two nodes
    big = Workload(
        model="llama3-70b",
        precision=Precision.BF16,
        batch_size_per_gpu=1,
        seq_len=8192,
        tensor_parallel=8,
        pipeline_parallel=4,
        virtual_pipeline_stages=5,
        context_parallel=2,
        sequence_parallel=True,
        gradient_accumulation=16,
        recompute=Recompute.SELECTIVE,
        sharding=Sharding.ZERO1,
    )
    assert rows[2]["throughput"] == estimate(big, h100, 64, nodes=8, inter_node_gbps=400).throughput
    lora = Workload(
        model="llama3-8b",
        task=Task.FINETUNE_LORA,
        precision=Precision.BF16,
        batch_size_per_gpu=2,
        seq_len=4096,
        sharding=Sharding.ZERO3,
        lora_rank=64,
    )
    assert rows[3]["throughput"] == estimate(lora, h100, 8).throughput
    assert rows[4]["throughput_unit"] == "tokens/s" and rows[4]["throughput"] > 0
    assert rows[5]["stack"] == "nvidia-dle"
    assert "rows.csv:8" in rows[6]["error"] and "pp is 1" in rows[6]["error"]
    assert rows[0]["note"] == "multi-node"  # extra columns are echoed, not read


def test_from_csv_bad_cells_name_the_row_and_column(tmp_path: Path) -> None:
    f = tmp_path / "bad.csv"
    f.write_text(
        "model,gpu,num_gpus,nodes,precision,batch_size,sp,recompute,ep\n"
        "llama3-8b,H100,8,,bf16,2,maybe,,\n"
        "llama3-8b,H100,8,3,bf16,2,,,\n"
        "llama3-8b,H100,8,,bf16,2,,partial,\n"
        "llama3-8b,H100,8,,bf16,2,,,4\n"
        "llama3-8b,H100,8,,bf16,2,,,1\n"
    )
    code, out, err = run_cli("estimate", "--from-csv", str(f), "--json")
    assert code == 0, err
    errors = [json.loads(line).get("error", "") for line in out.splitlines()]
    assert "bad.csv:2: sp must be true or false" in errors[0]
    assert "bad.csv:3" in errors[1] and "8 GPUs" in errors[1] and "3 nodes" in errors[1]
    assert "bad.csv:4" in errors[2] and "'partial'" in errors[2]
    assert "bad.csv:5: expert parallel 4" in errors[3] and "dense" in errors[3]
    assert json.loads(out.splitlines()[4])["throughput"] > 0


def test_a_csv_column_that_looks_like_an_input_is_named_on_stderr(tmp_path: Path) -> None:
    """A typo in a layout column (`tpp` for `tp`) would be passed through unread and change the
    estimate silently: the CLI names it and the input it resembles; columns that look like no
    input (a measured value, a note) pass through without a word, and the rows still run."""
    path = tmp_path / "rows.csv"
    path.write_text(
        "model,gpu,num_gpus,precision,batch_size,nodes,tpp,measured_tokens_s,note\n"
        "llama3-8b,H100,16,bf16,1,2,2,1000,from a run\n",
        encoding="utf-8",
    )
    code, out, err = run_cli("estimate", "--from-csv", str(path), "--json")
    assert code == 0, err
    assert "column 'tpp' is not an estimate input (did you mean tp?)" in err
    assert "measured_tokens_s" not in err and "'note'" not in err
    row = json.loads(out.splitlines()[0])
    assert row["tpp"] == "2" and row["throughput"] > 0
