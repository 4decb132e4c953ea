"""Peak memory at long context (issue 12): a fused/chunked loss never materialises the logits,
and the fitted activation scale multiplies only the approximate per-layer count."""

from __future__ import annotations

import dataclasses
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import cli_json
from tests.conftest import run_cli as run

from gpurent.catalog.precision import Precision
from gpurent.estimate.memory import (
    fused_loss_chunk_tokens,
    llm_layer_activation_values,
    memory_breakdown,
)
from gpurent.units import BYTES_PER_GIB
from gpurent.workload.models import get_model
from gpurent.workload.spec import Sharding, Stack, Task, Workload

# Stas Bekman's ml-engineering Llama-3.1-8B runs (benchmarks/data/validation/llm.csv): 8x H200,
# DeepSpeed ZeRO-3, full checkpointing, optimizer offloaded, Liger-Kernel fused cross-entropy
_ML_ENG = (
    *("--model", "llama3-8b", "--gpu", "H200", "--gpus", "8", "--precision", "bf16"),
    *("--batch-size", "1", "--sharding", "zero3", "--activation-checkpointing"),
)


def _total(*args: str) -> dict[str, Any]:
    return cli_json("estimate", *args, "--json")


def _mem(doc: dict[str, object]) -> dict[str, float]:
    mem = doc["memory"]
    assert isinstance(mem, dict)
    return mem


def test_the_128k_ml_engineering_run_fits_on_8_h200_with_a_fused_loss() -> None:
    # it ran at 66.5 GiB; the materialised logits alone (128K x 128,256 x 6 B) are ~94 GiB
    fused = _total(*_ML_ENG, "--seq-len", "131072", "--fused-loss")
    plain = _total(*_ML_ENG, "--seq-len", "131072", "--no-fused-loss")
    assert fused["fused_loss"] is True and plain["fused_loss"] is False
    assert fused["fits"] is True
    assert plain["fits"] is False
    assert _mem(fused)["total_gib"] < _mem(plain)["total_gib"] - 80


def test_default_is_the_stacks_and_every_stack_materialises_the_logits() -> None:
    for stack in Stack:
        wl = Workload(model="llama3-8b", stack=stack)
        assert wl.fused_loss_on is stack.fuses_loss is False
    assert Workload(model="llama3-8b", fused_loss=True).fused_loss_on


def test_memory_grows_linearly_in_seq_with_full_checkpointing_and_a_fused_loss() -> None:
    # FlashAttention keeps no s^2 scores: equal steps in seq add equal memory (powers of two
    # keep Liger's power-of-two chunk an exact fraction of the tokens)
    model = get_model("llama3-8b")
    work = Workload(
        model="llama3-8b",
        precision=Precision.BF16,
        batch_size_per_gpu=1,
        activation_checkpointing=True,
        sharding=Sharding.ZERO3,
        fused_loss=True,
    )
    tot = [
        memory_breakdown(dataclasses.replace(work, seq_len=s), model, 8, 141.0).total_gib
        for s in (32768, 65536, 131072, 262144)
    ]
    steps = [b - a for a, b in itertools.pairwise(tot)]
    assert steps[0] > 0
    assert steps[1] == pytest.approx(2 * steps[0], rel=1e-9)
    assert steps[2] == pytest.approx(4 * steps[0], rel=1e-9)
    # about the measured slope of the runs (446 KB per token), not the 1.9 MB of before
    per_token = (tot[3] - tot[0]) * BYTES_PER_GIB / (262144 - 32768)
    assert 350e3 < per_token < 700e3


@settings(max_examples=60, deadline=None)
@given(
    model=st.sampled_from(["llama3-8b", "llama2-7b", "llama3-70b", "gpt2", "llama2-13b"]),
    seq=st.sampled_from([128, 1000, 2048, 8192, 40000]),
    batch=st.integers(1, 8),
    tp=st.sampled_from([1, 2, 8]),
    pp=st.sampled_from([1, 4]),
    ckpt=st.booleans(),
    task=st.sampled_from([Task.TRAINING, Task.FINETUNE_LORA]),
)
def test_a_fused_loss_never_raises_memory(
    model: str, seq: int, batch: int, tp: int, pp: int, ckpt: bool, task: Task
) -> None:
    info = get_model(model)
    work = Workload(
        model=model,
        task=task,
        precision=Precision.BF16,
        batch_size_per_gpu=batch,
        seq_len=seq,
        activation_checkpointing=ckpt,
        tensor_parallel=tp,
        pipeline_parallel=pp,
        gradient_accumulation=8,
    )
    plain = memory_breakdown(work, info, 64, 80.0)
    fused = memory_breakdown(dataclasses.replace(work, fused_loss=True), info, 64, 80.0)
    assert fused.total_gib <= plain.total_gib + 1e-9


def test_liger_chunk_rule() -> None:
    # Liger: next_power_of_2(ceil(BT / ceil(V / H))); never more than the tokens
    assert fused_loss_chunk_tokens(131072, 128256, 4096) == 4096
    assert fused_loss_chunk_tokens(16384, 32000, 4096) == 2048  # Liger's own example
    assert fused_loss_chunk_tokens(100, 128256, 4096) == 4
    assert fused_loss_chunk_tokens(3, 100, 4096) == 3


def test_the_scale_multiplies_only_the_layer_held_in_full() -> None:
    # with full checkpointing, doubling the scale adds exactly one layer's per-layer count:
    # the checkpointed layer inputs and the logits are exact and stay unscaled
    model = get_model("llama3-8b")
    work = Workload(
        model="llama3-8b",
        precision=Precision.BF16,
        batch_size_per_gpu=2,
        seq_len=8192,
        activation_checkpointing=True,
    )
    one = memory_breakdown(work, model, 1, 80.0, activation_scale=1.0, fragmentation=0.0)
    two = memory_breakdown(work, model, 1, 80.0, activation_scale=2.0, fragmentation=0.0)
    layer = 2 * 8192 * llm_layer_activation_values(model) * 2 / BYTES_PER_GIB
    assert two.activations_gib - one.activations_gib == pytest.approx(layer, rel=1e-9)
    zero = memory_breakdown(work, model, 1, 80.0, activation_scale=0.0, fragmentation=0.0)
    s = model.llm
    assert s is not None
    exact = 2 * 8192 * (s.layers * s.hidden * 2 + s.vocab * 6) / BYTES_PER_GIB
    assert zero.activations_gib == pytest.approx(exact, rel=1e-9)


def test_fused_loss_in_a_workload_file_and_a_csv_column(tmp_path: Path) -> None:
    toml = tmp_path / "long.toml"
    toml.write_text(
        'model = "llama3-8b"\nprecision = "bf16"\nbatch_size_per_gpu = 1\nseq_len = 65536\n'
        'sharding = "zero3"\nactivation_checkpointing = true\nfused_loss = true\n'
    )
    from_file = _total("--workload", str(toml), "--gpu", "H200", "--gpus", "8")
    assert from_file["fused_loss"] is True
    flags = _total(*_ML_ENG, "--seq-len", "65536", "--fused-loss")
    assert _mem(from_file)["total_gib"] == pytest.approx(_mem(flags)["total_gib"])

    csv_path = tmp_path / "runs.csv"
    head = "model,gpu,num_gpus,precision,batch_size,seq_len,sharding,activation_checkpointing"
    row = "llama3-8b,H200,8,bf16,1,65536,zero3,true"
    csv_path.write_text(f"{head},fused_loss\n{row},true\n{row},false\n{row},\n{row},maybe\n")
    code, out, err = run("estimate", "--from-csv", str(csv_path), "--json")
    assert code == 0, err
    docs = [json.loads(line) for line in out.splitlines() if line.strip()]
    fused, plain, default, bad = docs
    assert fused["memory_per_gpu_gib"] == pytest.approx(_mem(flags)["total_gib"])
    assert fused["memory_per_gpu_gib"] < plain["memory_per_gpu_gib"]
    assert default["memory_per_gpu_gib"] == pytest.approx(plain["memory_per_gpu_gib"])
    assert "fused_loss" in bad["error"] and "\n" not in bad["error"]


def test_a_non_bool_fused_loss_in_a_workload_file_is_one_line(tmp_path: Path) -> None:
    toml = tmp_path / "bad.toml"
    toml.write_text('model = "llama3-8b"\nfused_loss = "sometimes"\n')
    code, _, err = run("estimate", "--workload", str(toml), "--gpu", "H100")
    assert code == 2
    assert "fused_loss" in err and len(err.strip().splitlines()) == 1
