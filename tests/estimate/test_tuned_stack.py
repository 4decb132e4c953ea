"""`--stack tuned`: MLPerf-grade code, fitted on MLPerf Training rounds (not v4.0)."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

from tests.conftest import run_cli as run

from gpurent.catalog import Precision, all_gpus, get_gpu
from gpurent.estimate import Estimator, estimate, load_constants
from gpurent.workload import Stack, Task, Workload, parse_stack

LORA = Workload(
    model="llama2-70b",
    task=Task.FINETUNE_LORA,
    precision=Precision.FP8,
    batch_size_per_gpu=1,
    seq_len=8192,
)


def test_tuned_is_a_stack_with_fitted_constants_and_provenance() -> None:
    assert parse_stack("tuned") is Stack.TUNED
    assert parse_stack("MLPerf") is Stack.TUNED
    sk = load_constants().stack("tuned")
    assert sk is not None
    # every pooled speed key carries its out-of-fit interval (log quantiles, 20+ residuals)
    for key in ("resnet50", "bert-large-squad", "llm-lora"):
        assert sk.speed[key] > 1.0, key
        lo, hi, rows = sk.intervals[key]
        assert lo < hi and rows >= 20, key
    # Blackwell's own LoRA factor exceeds Hopper's (MLPerf: B200 ~2.1-2.4x an H200)
    assert sk.speed["llm-lora@Blackwell"] > sk.speed["llm-lora@Hopper"]


def test_the_interval_always_holds_the_point_estimate() -> None:
    for gpu in ("H100", "B200", "A100-SXM4-80GB", "L40S"):
        est = estimate(
            Workload(model="bert-large-pretrain", batch_size_per_gpu=32, stack=Stack.TUNED),
            get_gpu(gpu),
            8,
        )
        assert est.interval_low <= 1.0 <= est.interval_high, gpu


def test_tuned_is_faster_than_the_default_for_resnet_and_llm_lora() -> None:
    gpu = get_gpu("H100")
    cnn = Workload(model="resnet50", batch_size_per_gpu=256)
    stock = estimate(cnn, gpu, 8)
    tuned = estimate(Workload(model="resnet50", batch_size_per_gpu=256, stack=Stack.TUNED), gpu, 8)
    assert tuned.throughput > 1.5 * stock.throughput
    assert any("software stack assumed: tuned" in n for n in tuned.notes)
    assert "leave-one-MLPerf-round-out" in tuned.interval_class
    llm_stock = estimate(LORA, gpu, 8)
    llm_tuned = estimate(Workload(**{**_fields(LORA), "stack": Stack.TUNED}), gpu, 8)
    assert llm_tuned.throughput > llm_stock.throughput  # fitted Hopper LoRA speed > 1
    assert any("tuned" in n for n in llm_tuned.notes)
    assert not any("llm-foundry" in n for n in llm_tuned.notes)
    assert any("llm-foundry" in n for n in llm_stock.notes)


def test_the_default_stack_is_untouched_by_the_tuned_file() -> None:
    """LLM estimates without `--stack tuned` still assume llm-foundry and its interval."""
    est = estimate(LORA, get_gpu("H200"), 8)
    assert est.interval_class.startswith(("unseen-architecture", "within-architecture"))


def test_tuned_pretraining_is_fitted_and_says_on_what() -> None:
    """Decoder-LLM pretraining has its own tuned speed (MLPerf GPT-3 175B, Llama 3.1 405B):
    faster than the default stack, never above the datasheet peak, and the note names the
    runs it was fitted on."""
    sk = load_constants().stack("tuned")
    assert sk is not None and sk.speed["llm"] > 1.0
    wl = Workload(model="llama3-8b", precision=Precision.FP8, batch_size_per_gpu=1, seq_len=8192)
    gpu = get_gpu("H100")
    stock = estimate(wl, gpu, 8)
    est = estimate(Workload(**{**_fields(wl), "stack": Stack.TUNED}), gpu, 8)
    assert est.throughput > stock.throughput
    assert est.mfu is not None and est.mfu < 1.0
    assert any(
        "fitted on MLPerf GPT-3 175B, Llama 3.1 405B and Llama 3.1 8B" in n for n in est.notes
    )
    assert not any("no MLPerf measurement" in n for n in est.notes)


def test_cli_flag_and_csv_column(tmp_path: Path) -> None:
    code, out, err = run(
        "estimate", "--model", "resnet50", "--gpu", "H100", "--gpus", "8",
        "--batch-size", "256", "--stack", "tuned", "--json",
    )  # fmt: skip
    assert code == 0, err
    tuned = json.loads(out)
    code, out, _ = run(
        "estimate", "--model", "resnet50", "--gpu", "H100", "--gpus", "8",
        "--batch-size", "256", "--json",
    )  # fmt: skip
    assert code == 0
    assert tuned["throughput"] > 1.5 * json.loads(out)["throughput"]
    csv = tmp_path / "rows.csv"
    csv.write_text(
        "model,gpu,num_gpus,precision,batch_size,seq_len,task,stack\n"
        "llama2-70b,H200,8,fp8,1,8192,finetune-lora,tuned\n"
        "llama2-70b,H200,8,fp8,1,8192,finetune-lora,\n",
        encoding="utf-8",
    )
    code, out, err = run("estimate", "--from-csv", str(csv), "--json")
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert rows[0]["throughput"] > rows[1]["throughput"]


def test_bad_stack_is_one_line_naming_tuned() -> None:
    code, _, err = run("estimate", "--model", "resnet50", "--gpu", "H100", "--stack", "mlperf2")
    assert code == 2
    assert "tuned" in err and len(err.strip().splitlines()) == 1


def _fields(wl: Workload) -> dict[str, object]:
    return {f: getattr(wl, f) for f in wl.__dataclass_fields__}


def test_tuned_memory_has_fused_attention_and_fp8_frozen_lora_weights() -> None:
    """MLPerf BERT (fused MHA) at local batch 112 on H100 ran; LoRA bases are FP8 there."""
    bert = Workload(model="bert-large-pretrain", batch_size_per_gpu=112, seq_len=512)
    gpu = get_gpu("H100")
    stock = estimate(bert, gpu, 4)
    tuned = estimate(Workload(**{**_fields(bert), "stack": Stack.TUNED}), gpu, 4)
    assert not stock.fits and tuned.fits
    assert tuned.memory.activations_gib < stock.memory.activations_gib
    lora = Workload(**{**_fields(LORA), "tensor_parallel": 4, "context_parallel": 2})
    plain = estimate(lora, gpu, 8).memory.weights_gib
    fp8_base = estimate(Workload(**{**_fields(lora), "stack": Stack.TUNED}), gpu, 8)
    # the 70B base at 1 B/param instead of 2, over 4 tensor-parallel ranks
    assert plain - fp8_base.memory.weights_gib > 0.9 * 69e9 / 4 / 2**30


def test_tuned_pretraining_interval_widens_beyond_the_fitted_layers() -> None:
    """The `llm` speed was fitted on dense layers of 0.125B-0.8B active weights per GPU (Llama
    3.1 8B at TP2 to 405B at TP4): an 8B at TP8 (0.03B) and a MoE model say so with a wider
    interval, a GPT-3-sized one keeps the fitted residuals' interval."""
    gpu = get_gpu("H100")
    small = Workload(
        model="llama3-8b",
        precision=Precision.FP8,
        batch_size_per_gpu=1,
        seq_len=8192,
        stack=Stack.TUNED,
    )
    big = Workload(
        model="custom:layers=96,hidden=12288,heads=96,vocab=50257",
        precision=Precision.FP8,
        batch_size_per_gpu=1,
        seq_len=2048,
        tensor_parallel=4,
        pipeline_parallel=8,
        gradient_accumulation=16,
        stack=Stack.TUNED,
    )
    moe = Workload(**{**_fields(small), "model": "mixtral-8x7b", "expert_parallel": 8})
    s = estimate(Workload(**{**_fields(small), "tensor_parallel": 8}), gpu, 64, nodes=8)
    b = estimate(big, gpu, 256, nodes=32)
    m = estimate(moe, gpu, 64, nodes=8)
    assert "smaller per GPU than any in the tuned pretraining fit" in s.interval_class
    assert "no MoE run" in m.interval_class
    assert "x1.5 width" not in b.interval_class
    assert math.log(s.interval_high / s.interval_low) > math.log(b.interval_high / b.interval_low)


def test_tuned_pretraining_speed_shrinks_with_the_layer_size_per_gpu() -> None:
    """The size term (`StackCoeffs.size_factor`): the same 8B step per FLOP is slower under the
    tuned stack at TP2 than at TP1 relative to the default stack, and a GPT-3-sized layer gets
    the full speed; the note gives the factor."""
    sk = load_constants().stack("tuned")
    assert sk is not None and sk.size_exponent > 0.0 and sk.size_ref_params > 0.0
    assert sk.size_factor(2 * sk.size_ref_params) == 1.0
    assert sk.size_factor(sk.size_ref_params / 4) < sk.size_factor(sk.size_ref_params / 2) < 1.0
    gpu = get_gpu("H100")
    gains = []
    for tp in (1, 2):
        wl = Workload(
            model="llama3-8b",
            precision=Precision.FP8,
            batch_size_per_gpu=1,
            seq_len=8192,
            tensor_parallel=tp,
        )
        stock = estimate(wl, gpu, 64, nodes=8).throughput
        tuned = estimate(Workload(**{**_fields(wl), "stack": Stack.TUNED}), gpu, 64, nodes=8)
        gains.append(tuned.throughput / stock)
        assert any("active weights per layer per GPU here" in n for n in tuned.notes)
    assert gains[1] < gains[0]


def test_tuned_fp8_lora_fits_the_layouts_mlperf_ran() -> None:
    """Llama 2 70B LoRA, seq 8192, micro-batch 1, as the v5.0 submissions ran it (config files
    in mlcommons/training_results_v5.0): 8 x B200 TP1 CP1, 8 x H200 TP1 CP2, 8 x H100 TP4 CP1.
    Each ran, so none may be "does not fit"; the stock stack, which keeps every frozen GEMM's
    input, still does not fit the B200 one."""
    tuned = Workload(**{**_fields(LORA), "stack": Stack.TUNED})
    for gpu, tp, cp in (("B200", 1, 1), ("H200", 1, 2), ("H100", 4, 1)):
        wl = Workload(**{**_fields(tuned), "tensor_parallel": tp, "context_parallel": cp})
        est = estimate(wl, get_gpu(gpu), 8)
        assert est.fits, (gpu, tp, cp, est.memory_per_gpu_gib)
    assert not estimate(LORA, get_gpu("B200"), 8).fits


def test_tuned_lora_activations_are_fewer_than_full_training_and_scale_with_tokens() -> None:
    """A frozen base keeps no GEMM input: the LoRA layer holds fewer bytes than the same
    layer trained in full, and the per-token count doubles with the tokens (logits apart)."""
    gpu = get_gpu("B200")
    tuned = Workload(**{**_fields(LORA), "stack": Stack.TUNED})
    full = Workload(**{**_fields(tuned), "task": Task.TRAINING})
    lora_acts = estimate(tuned, gpu, 8).memory.activations_gib
    assert lora_acts < estimate(full, gpu, 8).memory.activations_gib
    short = Workload(**{**_fields(tuned), "seq_len": 4096})
    ratio = lora_acts / estimate(short, gpu, 8).memory.activations_gib
    assert math.isclose(ratio, 2.0, rel_tol=0.02)


def test_stock_lora_memory_is_not_the_tuned_count(tmp_path: Path) -> None:
    """The CSV path prices the same LoRA row lower on the tuned stack than on the default
    one (whose adapter scale is fitted on stock-PyTorch peaks), and says which stack."""
    csv_path = tmp_path / "rows.csv"
    head = "model,gpu,num_gpus,precision,batch_size,seq_len,task,tp,cp,stack"
    body = [f"llama2-70b,H200,8,fp8,1,8192,finetune-lora,1,2,{s}" for s in ("tuned", "ngc-24")]
    csv_path.write_text("\n".join([head, *body]) + "\n")
    code, out, err = run("estimate", "--from-csv", str(csv_path), "--json")
    assert code == 0, err
    tuned, stock = (json.loads(ln) for ln in out.splitlines() if ln.strip())
    assert tuned["fits"] and not stock["fits"]
    assert tuned["memory_per_gpu_gib"] < stock["memory_per_gpu_gib"]


def _tuned_with_tp_overlap(share: float) -> Estimator:
    k = load_constants()
    sk = k.stack("tuned")
    assert sk is not None
    return Estimator(
        constants=replace(k, stacks={**k.stacks, "tuned": replace(sk, tp_comm_overlap=share)}),
        gpus=all_gpus(),
    )


def test_tuned_tp_collectives_hide_behind_the_gemms_on_nvidia_only() -> None:
    """`StackCoeffs.tp_comm_overlap`: NVIDIA's MLPerf LLM configs overlap the tensor-parallel
    collectives with the GEMMs (TP_COMM_OVERLAP=1; AMD's MI300X config sets it False). The
    share is fitted with the tuned stack (bundled within [0, 1]); it shortens a TP4 step on an
    H100, leaves a TP1 step, an AMD GPU and the default stack as they were."""
    bundled = load_constants().stack("tuned")
    assert bundled is not None and 0.0 <= bundled.tp_comm_overlap <= 1.0
    none, full = _tuned_with_tp_overlap(0.0), _tuned_with_tp_overlap(1.0)
    tuned = Workload(**{**_fields(LORA), "stack": Stack.TUNED})
    tp4 = Workload(**{**_fields(tuned), "tensor_parallel": 4})
    h100, mi300x = get_gpu("H100"), get_gpu("MI300X")
    slow, fast = none.estimate(tp4, h100, 8), full.estimate(tp4, h100, 8)
    assert fast.throughput > 1.02 * slow.throughput
    assert fast.communication_time_s < slow.communication_time_s
    share = f"{100 * bundled.tp_comm_overlap:.0f} % hidden behind the GEMMs"
    assert any(share in n for n in estimate(tp4, h100, 8).notes)
    assert any("0 % hidden" in n and "AMD" in n for n in estimate(tp4, mi300x, 8).notes)
    tp1 = Workload(**{**_fields(tuned), "tensor_parallel": 1})
    assert full.estimate(tp1, h100, 8).throughput == none.estimate(tp1, h100, 8).throughput
    assert full.estimate(tp4, mi300x, 8).throughput == none.estimate(tp4, mi300x, 8).throughput
    stock = Workload(**{**_fields(LORA), "tensor_parallel": 4})
    assert full.estimate(stock, h100, 8).throughput == none.estimate(stock, h100, 8).throughput
