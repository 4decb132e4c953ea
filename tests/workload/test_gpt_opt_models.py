"""GPT-2, GPT-3 and OPT sizes by name: parameter counts as their papers state them."""

from __future__ import annotations

import pytest
from tests.conftest import cli_json

from gpurent.workload.models import get_model

# Nominal sizes: Radford et al. 2019 Table 2, Brown et al. 2020 Table 2.1, Zhang et al. 2022
PUBLISHED_PARAMS = {
    "gpt2": 124e6,
    "gpt2-medium": 355e6,
    "gpt2-large": 774e6,
    "gpt2-xl": 1.558e9,
    "gpt3-xl": 1.3e9,
    "gpt3-2.7b": 2.7e9,
    "opt-125m": 125e6,
    "opt-350m": 350e6,
    "opt-1.3b": 1.3e9,
    "opt-2.7b": 2.7e9,
    "opt-6.7b": 6.7e9,
    "opt-13b": 13e9,
    "opt-30b": 30e9,
    "opt-66b": 66e9,
}


@pytest.mark.parametrize(("name", "params"), sorted(PUBLISHED_PARAMS.items()))
def test_parameter_counts_match_the_papers(name: str, params: float) -> None:
    assert get_model(name).num_params == pytest.approx(params, rel=0.03)


def test_a_named_opt_model_estimates_on_four_gpus_through_the_cli() -> None:
    args = ["--gpu", "A100-SXM4-80GB", "--precision", "bf16", "--batch-size", "8", "--json"]
    one = cli_json("estimate", "--model", "opt-1.3b", "--gpus", "1", "--seq-len", "2048", *args)
    four = cli_json("estimate", "--model", "opt-1.3b", "--gpus", "4", "--seq-len", "2048", *args)
    assert isinstance(one["throughput"], float) and isinstance(four["throughput"], float)
    assert 3.0 * one["throughput"] < four["throughput"] <= 4.0 * one["throughput"]
    bigger = cli_json("estimate", "--model", "opt-2.7b", "--gpus", "1", "--seq-len", "2048", *args)
    assert isinstance(bigger["throughput"], float)
    assert bigger["throughput"] < one["throughput"]
