"""Regression tests for silently wrong figures found in review."""

from __future__ import annotations

import dataclasses
import json

import pytest

from gpurent.catalog import get_gpu
from gpurent.estimate import estimate
from gpurent.workload import preset


@pytest.mark.parametrize("num_gpus", [2, 8])
def test_llm_inference_throughput_counts_every_data_parallel_replica(num_gpus: int) -> None:
    """Throughput is the total across GPUs: n independent replicas serve n x one replica's load."""
    gpu = get_gpu("H100")
    wl = preset("llm-inference")
    one = estimate(wl, gpu)
    many = estimate(wl, gpu, num_gpus)
    assert many.throughput == pytest.approx(num_gpus * one.throughput)
    assert many.samples_per_s == pytest.approx(num_gpus * one.samples_per_s)
    # tensor parallel over all GPUs: one replica, faster per request, not n x the requests
    tp = estimate(dataclasses.replace(wl, tensor_parallel=num_gpus), gpu, num_gpus)
    assert one.throughput < tp.throughput <= num_gpus * one.throughput * (1 + 1e-9)


def test_kv_cache_counts_the_default_output_tokens_that_the_time_model_generates() -> None:
    """Without --output-tokens the time model generates 256 tokens per request; the KV cache
    must hold them too (2 x layers x kv_heads x head_dim x (prompt + output) x batch x 2 B)."""
    gpu = get_gpu("L4")
    wl = dataclasses.replace(preset("llm-inference"), output_tokens=None, seq_len=2048)
    explicit = estimate(dataclasses.replace(wl, output_tokens=256), gpu)
    default = estimate(wl, gpu)
    assert default.throughput == pytest.approx(explicit.throughput)
    assert default.memory.kv_cache_gib == pytest.approx(explicit.memory.kv_cache_gib)
    # llama3-8b: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 128 KiB per token
    b = wl.batch_size_per_gpu
    assert default.memory.kv_cache_gib == pytest.approx((2048 + 256) * b * 131072 / 2**30)


def test_calibrate_clear_removes_a_store_it_cannot_parse() -> None:
    """The load error of a malformed store tells the user to run `gpurent calibrate clear`;
    that command must then work instead of failing on the same parse."""
    from tests.conftest import run_cli

    from gpurent.estimate.calibration_file import store_path

    path = store_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("model,gpu\nresnet50,H100\n", encoding="utf-8")
    code, _out, err = run_cli("estimate", "--model", "resnet50", "--gpu", "H100")
    assert code != 0 and "gpurent calibrate clear" in err
    code, out, err = run_cli("calibrate", "clear", "--json")
    assert code == 0, err
    assert not path.exists()
    assert json.loads(out) == {"removed": 1}


def test_transformer_speed_ratio_follows_the_constants_it_is_given() -> None:
    """One Constants' ratio is never handed to another (cross-validation builds many
    short-lived Constants; CPython reuses the id of a freed one): each Estimator memoises its
    own, and the bare function caches nothing."""
    from gpurent.catalog import Precision
    from gpurent.estimate import bundled_estimator
    from gpurent.estimate.constants import load_constants
    from gpurent.estimate.estimator import TRANSFER_MODEL
    from gpurent.workload.models import get_model

    base = load_constants()
    key = get_model(TRANSFER_MODEL).key
    gpu = get_gpu("RTX-4090")
    ratios = []
    for i in range(50):  # each k has a larger per-step overhead: its ratio is closer to 1
        half = dataclasses.replace(base.families[key]["half"], c_s=0.01 * (i + 1))
        k = dataclasses.replace(base, families={**base.families, key: {"half": half}})
        ratios.append(bundled_estimator(constants=k).speed_ratio(gpu, Precision.AMP))
        del k
    assert len(set(ratios)) == len(ratios)
