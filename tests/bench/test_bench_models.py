"""Model benchmarks on the CPU (scaled-down configs): steps, FLOPs, MFU."""

from __future__ import annotations

import pytest
import torch

from gpurent.bench.networks import CPU_SMALL, FULL, build
from gpurent.bench.train import run_model


@pytest.mark.parametrize("name", list(CPU_SMALL))
def test_each_model_trains_and_reports(name: str) -> None:
    cfg = CPU_SMALL[name]
    run = run_model(
        torch,
        cfg,
        config_label="cpu-small",
        device="cpu",
        precision="fp32",
        warmup=1,
        steps=3,
        peak_tflops=0.1,
        peak_basis="test peak",
    )
    assert run.timed_steps == 3 and run.step_time_p10_s <= run.step_time_median_s
    assert run.samples_per_s == pytest.approx(cfg.batch_size / run.step_time_median_s)
    assert run.flops_per_step > 0
    assert run.mfu == pytest.approx(run.achieved_tflops / 0.1)
    assert run.config.startswith("cpu-small")
    if name == "gpt-decoder":
        assert run.throughput == pytest.approx(run.samples_per_s * cfg.seq_len)


def test_decoder_flops_match_the_6nd_formula() -> None:
    """FlopCounterMode's count = 6 x linear params x tokens + 12 L h s per token (attention,
    counted over the full s x s square), within 2%."""
    cfg = CPU_SMALL["gpt-decoder"]
    run = run_model(
        torch,
        cfg,
        config_label="cpu-small",
        device="cpu",
        precision="fp32",
        warmup=1,
        steps=2,
        peak_tflops=None,
        peak_basis="",
    )
    model = build(torch, cfg)
    linear = sum(m.weight.numel() for m in model.modules() if isinstance(m, torch.nn.Linear))
    tokens = cfg.batch_size * cfg.seq_len
    expected = 6 * linear * tokens + 12 * cfg.layers * cfg.hidden * cfg.seq_len * tokens
    assert run.flops_per_step == pytest.approx(expected, rel=0.02)
    assert run.mfu is None and run.mfu_basis == "no peak known"


def test_full_configs_are_the_published_shapes() -> None:
    assert FULL["resnet50"].blocks == (3, 4, 6, 3) and FULL["resnet50"].image_px == 224
    bert = FULL["bert-large"]
    assert (bert.layers, bert.hidden, bert.heads, bert.vocab) == (24, 1024, 16, 30522)
    gpt = FULL["gpt-decoder"]
    assert (gpt.layers, gpt.hidden, gpt.heads, gpt.calibration_name) == (24, 2048, 16, "mpt-1b")
    resnet = build(torch, FULL["resnet50"])
    params = sum(p.numel() for p in resnet.parameters())
    assert params == pytest.approx(25.6e6, rel=0.01)  # ResNet-50: 25.6 M parameters
