"""`recompute = "mlp"` (Megatron-LM's --recompute-modules mlp): the MLP's forward is rerun in
backward, so a step costs more than without recomputation and less than full recomputation,
and each layer keeps its MLP intermediates no longer."""

from __future__ import annotations

import json

import pytest
from tests.conftest import run_cli

from gpurent.catalog import get_gpu
from gpurent.catalog.precision import Precision
from gpurent.estimate import estimate
from gpurent.workload.models import get_model
from gpurent.workload.spec import Recompute, Workload, parse_recompute
from gpurent.workload.zoo import llm_active_params, llm_mlp_active_params

H100 = get_gpu("H100")


def _wl(model: str, mode: Recompute) -> Workload:
    return Workload(
        model=model,
        precision=Precision.BF16,
        batch_size_per_gpu=1,
        seq_len=4096,
        tensor_parallel=8,
        pipeline_parallel=2,
        gradient_accumulation=8,
        recompute=mode,
    )


@pytest.mark.parametrize("model", ["llama3-70b", "mixtral-8x7b"])
def test_mlp_recompute_lies_between_none_and_full(model: str) -> None:
    none, mlp, full = (
        estimate(_wl(model, m), H100, 16, nodes=2)
        for m in (Recompute.NONE, Recompute.MLP, Recompute.FULL)
    )
    assert full.throughput < mlp.throughput < none.throughput
    assert full.memory.activations_gib < mlp.memory.activations_gib < none.memory.activations_gib


def test_mlp_weights_a_token_computes_with() -> None:
    """Llama 3 8B: 32 layers x 3 x 4096 x 14336 gated-MLP weights; Mixtral 8x7B: 2 of 8
    experts of 3 x 4096 x 14336 per layer, within its 12.9B active parameters."""
    llama = get_model("llama3-8b").llm
    mixtral = get_model("mixtral-8x7b").llm
    assert llama is not None and mixtral is not None
    assert llm_mlp_active_params(llama) == 32 * 3 * 4096 * 14336
    assert llm_mlp_active_params(mixtral) == 32 * 2 * 3 * 4096 * 14336
    assert llm_mlp_active_params(mixtral) < llm_active_params(mixtral)


def test_mlp_is_a_recompute_choice_everywhere() -> None:
    assert parse_recompute("MLP") is Recompute.MLP
    args = [
        "estimate", "--model", "llama3-70b", "--gpu", "H100", "--gpus", "16", "--nodes", "2",
        "--tp", "8", "--pp", "2", "--grad-accum", "8", "--batch-size", "1", "--seq-len", "4096",
        "--recompute", "mlp",
    ]  # fmt: skip
    code, text, err = run_cli(*args)
    assert code == 0, err
    assert "recompute mlp" in text
    code, out, err = run_cli(*args, "--json")
    assert code == 0, err
    assert json.loads(out)["throughput"] > 0
    code, _, err = run_cli(*args[:-1], "sometimes")
    assert code == 2 and "none, selective, mlp, full" in err
