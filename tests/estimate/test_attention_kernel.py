"""The attention kernel of decoder-LLM training (issue 18): each kernel's share of the peak
from kernel benchmarks, `auto` picking the stack's own, through the API, flags, files and CSV."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from tests.conftest import cli_json, one_line_error
from tests.conftest import run_cli as run

from gpurent.catalog import Precision, get_gpu
from gpurent.errors import InputError
from gpurent.estimate import estimate
from gpurent.estimate.attention import KERNEL_PEAK_SHARE, kernel_peak_share, resolved_kernel
from gpurent.workload import AttentionKernel, Stack, Workload

_WL = Workload(model="llama3-8b", precision=Precision.BF16, batch_size_per_gpu=1, seq_len=8192)


def _tps(gpu: str, kernel: AttentionKernel, seq: int = 8192, stack: Stack = Stack.NGC_24) -> float:
    wl = dataclasses.replace(_WL, seq_len=seq, attention_kernel=kernel, stack=stack)
    return estimate(wl, get_gpu(gpu), 8).throughput


def test_auto_is_pytorch_sdpas_kernel_per_architecture_under_every_stack() -> None:
    auto = AttentionKernel.AUTO
    assert resolved_kernel(auto, "Ampere") is AttentionKernel.FA2
    assert resolved_kernel(auto, "Hopper") is AttentionKernel.FA2
    assert resolved_kernel(auto, "Blackwell") is AttentionKernel.CUDNN
    # no kernel share: the fitted term moved by the transfer ratio, as before
    assert resolved_kernel(auto, "Volta") is AttentionKernel.FITTED
    assert resolved_kernel(auto, "CDNA3") is AttentionKernel.FITTED
    tuned = _tps("H100", AttentionKernel.AUTO, stack=Stack.TUNED)
    assert tuned == _tps("H100", AttentionKernel.FA2, stack=Stack.TUNED)
    with pytest.raises(ValueError, match="resolved kernel"):
        kernel_peak_share(auto, "Hopper")  # a request, never priced as it stands
    for shares in KERNEL_PEAK_SHARE.values():
        assert all(0.0 < s < 1.0 for s in shares.values())


def test_a_faster_kernel_is_faster_and_gains_more_at_long_context() -> None:
    fa2, fa3 = AttentionKernel.FA2, AttentionKernel.FA3
    assert _tps("H100", AttentionKernel.AUTO) == _tps("H100", fa2)
    short = _tps("H100", fa3, seq=1024) / _tps("H100", fa2, seq=1024)
    long = _tps("H100", fa3, seq=65536) / _tps("H100", fa2, seq=65536)
    assert 1.0 < short < long < 0.525 / 0.35  # never beyond the kernels' own ratio
    # FlashAttention-2 at 50 % of an A100 is faster than the fitted (FA1-era) 28 %
    assert _tps("A100-SXM4-80GB", fa2) > _tps("A100-SXM4-80GB", AttentionKernel.FITTED)
    assert _tps("B200", AttentionKernel.FA4) > _tps("B200", AttentionKernel.CUDNN)


def test_a_kernel_an_architecture_has_no_figure_for_is_an_input_error() -> None:
    with pytest.raises(InputError, match="fa3 has no figure on Ampere"):
        _tps("A100-SXM4-80GB", AttentionKernel.FA3)
    code, out, err = run(
        *("estimate", "--model", "llama3-8b", "--gpu", "A100", "--attention-kernel", "fa4"),
    )
    one_line_error(code, out, err, "fa4", "Ampere", "fa2")
    code, out, err = run(
        *("estimate", "--model", "llama3-8b", "--gpu", "H100", "--attention-kernel", "fa9"),
    )
    one_line_error(code, out, err, "--attention-kernel", "fa9")


def test_the_flag_file_and_csv_column_price_the_same_kernel(tmp_path: Path) -> None:
    args = ("--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--precision", "bf16")
    args += ("--batch-size", "1", "--seq-len", "8192")
    flag = cli_json("estimate", *args, "--attention-kernel", "fa3", "--json")
    assert flag["throughput"] == pytest.approx(_tps("H100", AttentionKernel.FA3))
    assert any("FlashAttention-3" in n for n in flag["notes"])
    default = cli_json("estimate", *args, "--json")
    assert any("attention kernel (auto): FlashAttention-2" in n for n in default["notes"])
    wf = tmp_path / "job.toml"
    wf.write_text(
        'model = "llama3-8b"\nprecision = "bf16"\nbatch_size = 1\nseq_len = 8192\n'
        'attention_kernel = "fa3"\n'
    )
    from_file = cli_json(
        "estimate", "--workload", str(wf), "--gpu", "H100", "--gpus", "8", "--json"
    )
    assert from_file["throughput"] == flag["throughput"]
    rows = tmp_path / "rows.csv"
    rows.write_text(
        "model,gpu,num_gpus,precision,batch_size,seq_len,attention_kernel\n"
        "llama3-8b,H100,8,bf16,1,8192,fa3\nllama3-8b,H100,8,bf16,1,8192,\n"
    )
    code, out, err = run("estimate", "--from-csv", str(rows), "--json")
    assert code == 0, err
    got = [json.loads(line) for line in out.splitlines()]
    assert got[0]["throughput"] == flag["throughput"]
    assert got[1]["throughput"] == default["throughput"]


def test_a_kernel_share_from_benchmarks_widens_the_interval_by_attentions_weight() -> None:
    def width(kernel: AttentionKernel, seq: int) -> float:
        wl = dataclasses.replace(_WL, seq_len=seq, attention_kernel=kernel)
        est = estimate(wl, get_gpu("H100"), 8)
        assert est.interval_low <= 1.0 <= est.interval_high
        return est.interval_high / est.interval_low

    fitted_short, fitted_long = (width(AttentionKernel.FITTED, s) for s in (1024, 65536))
    fa3_short, fa3_long = (width(AttentionKernel.FA3, s) for s in (1024, 65536))
    assert fa3_short > fitted_short and fa3_long > fitted_long
    assert fa3_long / fitted_long > fa3_short / fitted_short  # attention weighs more at 64K
    est = estimate(
        dataclasses.replace(_WL, attention_kernel=AttentionKernel.FA3), get_gpu("H100"), 8
    )
    assert "fa3 share 0.525-0.7 of peak" in est.interval_class
