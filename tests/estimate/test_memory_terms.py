"""Counted peak-memory terms (issue 12, session 14): a QLoRA's unquantised parameters, its
dequantised weight, FSDP gathering a frozen base in its stored bytes, PEFT's fp32 upcast, and
the pipeline-stage invariants (more micro-batches in flight never lower a stage's memory;
checkpointing never raises it)."""

from __future__ import annotations

import dataclasses
import itertools
import json
from pathlib import Path

import pytest
from tests.conftest import cli_json, run_cli

from gpurent.catalog.precision import Precision
from gpurent.estimate.memory import (
    dequantized_weight_bytes,
    frozen_base_bytes,
    frozen_base_bytes_per_param,
    logits_bytes,
    lora_params,
    memory_breakdown,
    unquantized_params,
)
from gpurent.units import BYTES_PER_GIB
from gpurent.workload.models import get_model
from gpurent.workload.spec import Sharding, Task, Workload
from gpurent.workload.zoo import llm_layer_params

_QLORA = Workload(
    model="llama3-8b",
    task=Task.FINETUNE_QLORA,
    precision=Precision.BF16,
    batch_size_per_gpu=2,
    seq_len=8192,
    activation_checkpointing=True,
    lora_rank=8,
)


def _gib(work: Workload, gpus: int = 1) -> float:
    return memory_breakdown(work, get_model(work.model), gpus, 80.0).total_gib


def test_qlora_keeps_embeddings_and_output_head_unquantised() -> None:
    model = get_model("llama3-8b")
    s = model.llm
    assert s is not None
    kept = unquantized_params(model)
    # Llama 3 8B: untied 128256 x 4096 embedding and head, 65 norms of 4096
    assert kept == 2 * s.vocab * s.hidden + (2 * s.layers + 1) * s.hidden
    nf4 = frozen_base_bytes_per_param(Task.FINETUNE_QLORA)
    base = frozen_base_bytes(_QLORA, model)
    assert base == pytest.approx((model.num_params - kept) * nf4 + kept * 2.0)
    assert base > model.num_params * nf4  # the old all-NF4 count was too small
    upcast = frozen_base_bytes(dataclasses.replace(_QLORA, fp32_upcast=True), model)
    assert upcast - base == pytest.approx(kept * 2.0)


def test_qlora_weights_add_one_dequantised_matrix() -> None:
    model = get_model("llama3-8b")
    mem = memory_breakdown(_QLORA, model, 1, 80.0)
    trainable = lora_params(model, _QLORA.lora_rank)
    extra = mem.weights_gib * BYTES_PER_GIB - frozen_base_bytes(_QLORA, model) - trainable * 4.0
    # the largest matrix of a Llama 3 8B layer is an MLP projection, 4096 x 14336, in bf16
    assert extra == pytest.approx(4096 * 14336 * 2.0)
    assert dequantized_weight_bytes(_QLORA, model) == pytest.approx(extra)
    lora = dataclasses.replace(_QLORA, task=Task.FINETUNE_LORA)
    assert dequantized_weight_bytes(lora, model) == 0.0


def test_fsdp_gathers_a_qlora_base_in_nf4_not_bf16() -> None:
    model = get_model("llama3.1-405b")
    s = model.llm
    assert s is not None
    work = dataclasses.replace(_QLORA, model="llama3.1-405b", seq_len=2048, sharding=Sharding.ZERO3)
    mem = memory_breakdown(work, model, 8, 80.0)
    trainable = lora_params(model, work.lora_rank)
    sharded = (frozen_base_bytes(work, model) + trainable * 4.0) / 8
    gathered = mem.weights_gib * BYTES_PER_GIB - sharded - dequantized_weight_bytes(work, model)
    nf4 = frozen_base_bytes_per_param(Task.FINETUNE_QLORA)
    assert gathered == pytest.approx(2 * llm_layer_params(s) * nf4)
    lora = dataclasses.replace(work, task=Task.FINETUNE_LORA)
    lora_mem = memory_breakdown(lora, model, 8, 80.0)
    lora_sharded = (model.num_params * 2.0 + trainable * 4.0) / 8
    lora_gathered = lora_mem.weights_gib * BYTES_PER_GIB - lora_sharded
    assert lora_gathered == pytest.approx(2 * llm_layer_params(s) * 2.0)


def test_fp32_upcast_doubles_activations_and_widens_logits() -> None:
    model = get_model("llama3-8b")
    plain = memory_breakdown(_QLORA, model, 1, 80.0)
    up = memory_breakdown(dataclasses.replace(_QLORA, fp32_upcast=True), model, 1, 80.0)
    tokens = 2 * 8192
    logits_plain = logits_bytes(_QLORA, model, tokens, 2)
    logits_up = logits_bytes(dataclasses.replace(_QLORA, fp32_upcast=True), model, tokens, 4)
    assert logits_up == pytest.approx(logits_plain * 8.0 / 6.0)  # fp32 logits + fp32 copy
    layers_plain = plain.activations_gib * BYTES_PER_GIB - logits_plain
    layers_up = up.activations_gib * BYTES_PER_GIB - logits_up
    assert layers_up == pytest.approx(2.0 * layers_plain)
    assert up.total_gib > plain.total_gib


def test_fp32_upcast_leaves_full_training_alone() -> None:
    work = dataclasses.replace(_QLORA, task=Task.TRAINING, seq_len=4096)
    assert _gib(dataclasses.replace(work, fp32_upcast=True), 8) == _gib(work, 8)


def test_fp32_upcast_flag_reaches_the_estimate() -> None:
    args = (
        *("estimate", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "1"),
        *("--task", "finetune-qlora", "--precision", "bf16", "--batch-size", "2"),
        *("--seq-len", "8192", "--activation-checkpointing", "--json"),
    )
    plain = cli_json(*args)["memory"]["total_gib"]
    upcast = cli_json(*args, "--fp32-upcast")["memory"]["total_gib"]
    assert upcast > plain + 10.0  # fp32 layer inputs, logits and embeddings at 8K tokens x 2


def test_fp32_upcast_csv_column_matches_the_flag(tmp_path: Path) -> None:
    csv_path = tmp_path / "runs.csv"
    csv_path.write_text(
        "model,gpu,num_gpus,precision,batch_size,seq_len,activation_checkpointing,task,"
        "fp32_upcast\n"
        "llama3-8b,H100,1,bf16,2,8192,true,finetune-qlora,true\n"
        "llama3-8b,H100,1,bf16,2,8192,true,finetune-qlora,false\n"
    )
    code, out, err = run_cli("estimate", "--from-csv", str(csv_path), "--json")
    assert code == 0, err
    up, plain = (json.loads(line)["memory_per_gpu_gib"] for line in out.splitlines() if line)
    flags = (
        *("estimate", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "1"),
        *("--task", "finetune-qlora", "--precision", "bf16", "--batch-size", "2"),
        *("--seq-len", "8192", "--activation-checkpointing", "--fp32-upcast", "--json"),
    )
    assert up == pytest.approx(cli_json(*flags)["memory"]["total_gib"])
    assert up > plain


_PP_WORK = Workload(
    model="llama3-70b",
    precision=Precision.BF16,
    batch_size_per_gpu=1,
    seq_len=4096,
    tensor_parallel=8,
)


@pytest.mark.parametrize(("pp", "vp"), [(2, 1), (4, 1), (4, 2), (8, 1), (8, 5)])
def test_more_micro_batches_in_flight_never_lower_stage_memory(pp: int, vp: int) -> None:
    model = get_model("llama3-70b")
    for ckpt in (False, True):
        prev = 0.0
        for m in range(1, 2 * pp + 2):
            work = dataclasses.replace(
                _PP_WORK,
                pipeline_parallel=pp,
                virtual_pipeline_stages=vp,
                gradient_accumulation=m,
                activation_checkpointing=ckpt,
            )
            acts = memory_breakdown(work, model, 8 * pp, 80.0).activations_gib
            assert acts >= prev
            prev = acts


@pytest.mark.parametrize(
    ("task", "pp", "vp", "m"),
    list(
        itertools.product(
            (Task.TRAINING, Task.FINETUNE_LORA, Task.FINETUNE_QLORA), (1, 2, 4), (1, 2), (1, 8)
        )
    ),
)
def test_checkpointing_never_raises_memory(task: Task, pp: int, vp: int, m: int) -> None:
    model = get_model("llama3-70b")
    for upcast in (False, True):
        work = dataclasses.replace(
            _PP_WORK,
            task=task,
            pipeline_parallel=pp,
            virtual_pipeline_stages=vp if pp > 1 else 1,
            gradient_accumulation=m,
            fp32_upcast=upcast,
        )
        off = memory_breakdown(work, model, 8 * pp, 80.0)
        on = memory_breakdown(
            dataclasses.replace(work, activation_checkpointing=True), model, 8 * pp, 80.0
        )
        assert on.activations_gib <= off.activations_gib
        assert on.total_gib <= off.total_gib
