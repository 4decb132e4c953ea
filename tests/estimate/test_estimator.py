"""Invariants of `estimate()`, property-based where the claim is general."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpurent.catalog import Precision, all_gpus, get_gpu
from gpurent.errors import DataError, InputError
from gpurent.estimate import Bottleneck, Calibration, MeasuredRow, estimate, load_constants
from gpurent.estimate.constants import parse_constants
from gpurent.workload import Sharding, Task, Workload, get_model, preset

NVIDIA = [g for g in all_gpus() if g.vendor == "nvidia"]
FIXED = [
    "resnet50",
    "ssd",
    "bert-base-squad",
    "bert-large-squad",
    "gnmt",
    "tacotron2",
    "waveglow",
    "transformer-xl-base",
    "transformer-xl-large",
    "ncf",
    "vit-b16",
]
PRECISIONS = [Precision.AMP, Precision.FP32, Precision.BF16, Precision.STRICT_FP32]

gpus_st = st.sampled_from(NVIDIA)
batch_st = st.integers(min_value=1, max_value=512)


@settings(max_examples=60, deadline=None)
@given(gpu=gpus_st, model=st.sampled_from(FIXED), p=st.sampled_from(PRECISIONS), b=batch_st)
def test_memory_and_step_time_grow_with_batch(gpu, model, p, b) -> None:  # type: ignore[no-untyped-def]
    small = estimate(Workload(model=model, precision=p, batch_size_per_gpu=b), gpu)
    big = estimate(Workload(model=model, precision=p, batch_size_per_gpu=b * 2), gpu)
    assert big.memory.total_gib > small.memory.total_gib
    assert big.step_time_s > small.step_time_s


@settings(max_examples=60, deadline=None)
@given(
    gpu=gpus_st,
    model=st.sampled_from(FIXED),
    p=st.sampled_from(PRECISIONS),
    b=batch_st,
    n=st.sampled_from([1, 2, 4, 8]),
)
def test_throughput_never_exceeds_the_roofline(gpu, model, p, b, n) -> None:  # type: ignore[no-untyped-def]
    m = get_model(model)
    e = estimate(Workload(model=model, precision=p, batch_size_per_gpu=b), gpu, n)
    train_flops = 3 * m.forward_flops() * e.samples_per_s
    assert train_flops <= gpu.peak_tflops(p) * 1e12 * n * (1 + 1e-9)
    assert 0 < e.scaling_efficiency <= 1 + 1e-9
    assert e.throughput == pytest.approx(e.samples_per_s * m.units_per_sample(None))


@settings(max_examples=40, deadline=None)
@given(
    gpu=gpus_st,
    model=st.sampled_from(["mpt-125m", "mpt-1b", "llama3-8b", "mistral-7b"]),
    b=st.integers(1, 16),
    seq=st.sampled_from([512, 2048, 8192]),
    ckpt=st.booleans(),
    n=st.sampled_from([1, 8, 16]),
)
def test_llm_mfu_is_a_fraction(gpu, model, b, seq, ckpt, n) -> None:  # type: ignore[no-untyped-def]
    wl = Workload(
        model=model,
        precision=Precision.BF16,
        batch_size_per_gpu=b,
        seq_len=seq,
        activation_checkpointing=ckpt,
        sharding=Sharding.ZERO3,
    )
    e = estimate(wl, gpu, n, nodes=max(1, n // 8))
    assert e.mfu is not None and 0 < e.mfu < 1
    assert e.throughput_unit == "tokens/s"


@settings(max_examples=40, deadline=None)
@given(b=st.integers(1, 32), n=st.sampled_from([2, 4, 8, 16, 64]))
def test_sharding_and_checkpointing_only_reduce_memory(b: int, n: int) -> None:
    gpu = get_gpu("A100-SXM4-80GB")
    base = Workload(model="mpt-7b", precision=Precision.BF16, batch_size_per_gpu=b, seq_len=2048)
    totals = [
        estimate(dataclasses.replace(base, sharding=s), gpu, n).memory.total_gib
        for s in (Sharding.NONE, Sharding.ZERO1, Sharding.ZERO2, Sharding.ZERO3)
    ]
    assert totals == sorted(totals, reverse=True)
    ck = estimate(dataclasses.replace(base, activation_checkpointing=True), gpu, n)
    assert ck.memory.activations_gib < estimate(base, gpu, n).memory.activations_gib


def test_memory_per_param_matches_the_textbook() -> None:
    """Mixed-precision AdamW: 16 B/param before activations (RESEARCH §2)."""
    e = estimate(
        Workload(model="mpt-1b", precision=Precision.BF16, batch_size_per_gpu=1, seq_len=128),
        get_gpu("H100"),
    )
    m = e.memory
    per_param = (m.weights_gib + m.gradients_gib + m.optimizer_gib) * 2**30
    assert per_param / get_model("mpt-1b").num_params == pytest.approx(16.0)


def test_does_not_fit_names_the_shortfall() -> None:
    e = estimate(
        Workload(model="llama2-70b", precision=Precision.BF16, batch_size_per_gpu=1, seq_len=2048),
        get_gpu("A100-SXM4-80GB"),
        8,
    )
    assert not e.fits and e.bottleneck is Bottleneck.MEMORY_CAPACITY
    assert e.memory.headroom_gib < 0
    assert any("does not fit" in n for n in e.notes)
    sharded = estimate(
        dataclasses.replace(
            Workload(
                model="llama2-70b",
                precision=Precision.BF16,
                batch_size_per_gpu=1,
                seq_len=2048,
                activation_checkpointing=True,
            ),
            sharding=Sharding.ZERO3,
        ),
        get_gpu("A100-SXM4-80GB"),
        64,
        nodes=8,
    )
    assert sharded.fits


def test_lora_and_qlora_need_far_less_memory_than_full_finetune() -> None:
    gpu = get_gpu("L40S")
    full = estimate(
        Workload(
            model="llama3-8b",
            task=Task.FINETUNE_FULL,
            precision=Precision.BF16,
            batch_size_per_gpu=1,
            seq_len=2048,
        ),
        gpu,
    )
    lora = estimate(preset("llama-lora"), gpu)
    qlora = estimate(dataclasses.replace(preset("llama-lora"), task=Task.FINETUNE_QLORA), gpu)
    assert qlora.memory.total_gib < lora.memory.total_gib < full.memory.total_gib
    assert lora.fits and not full.fits
    assert lora.time_to_finish_s is not None and lora.time_to_finish_s > 0


def test_inference_is_bandwidth_bound_and_kv_cache_grows_with_context() -> None:
    gpu = get_gpu("H100")
    wl = preset("llm-inference")
    e = estimate(wl, gpu)
    assert e.bottleneck is Bottleneck.MEMORY_BANDWIDTH
    longer = estimate(dataclasses.replace(wl, seq_len=8192), gpu)
    assert longer.memory.kv_cache_gib > e.memory.kv_cache_gib > 0
    faster = estimate(wl, get_gpu("H200"))  # same FLOPs, more bandwidth
    assert faster.throughput > e.throughput


def test_faster_gpus_are_faster_and_llm_mfu_drops_on_hopper() -> None:
    wl = Workload(model="bert-large-squad", precision=Precision.AMP, batch_size_per_gpu=32)
    a100, h100 = get_gpu("A100-SXM4-80GB"), get_gpu("H100-SXM5-80GB")
    assert 1.5 < estimate(wl, h100).throughput / estimate(wl, a100).throughput < 3.17
    llm = Workload(
        model="mpt-7b",
        precision=Precision.BF16,
        batch_size_per_gpu=6,
        seq_len=2048,
        sharding=Sharding.ZERO3,
    )
    assert estimate(llm, h100, 8).mfu < estimate(llm, a100, 8).mfu  # type: ignore[operator]


def test_multi_node_is_slower_on_a_thin_network() -> None:
    wl = Workload(model="bert-large-squad", precision=Precision.AMP, batch_size_per_gpu=8)
    gpu = get_gpu("A100-SXM4-80GB")
    fat = estimate(wl, gpu, 16, nodes=2, inter_node_gbps=1600)
    thin = estimate(wl, gpu, 16, nodes=2, inter_node_gbps=10)
    assert thin.throughput < fat.throughput
    assert thin.communication_time_s > fat.communication_time_s


def test_measurement_anchors_the_estimate() -> None:
    gpu = get_gpu("A100-SXM4-80GB")
    wl = Workload(model="resnet50", precision=Precision.AMP, batch_size_per_gpu=256)
    row = MeasuredRow(
        model="resnet50",
        gpu=gpu.name,
        num_gpus=1,
        precision=Precision.AMP,
        batch_size=256,
        throughput=2000.0,
    )
    cal = Calibration((row,))
    same = estimate(wl, gpu, measurements=cal)
    assert same.basis == "measured" and same.throughput == pytest.approx(2000.0)
    scaled = estimate(wl, gpu, 8, measurements=cal)
    plain = estimate(wl, gpu, 8)
    assert scaled.throughput / plain.throughput == pytest.approx(
        2000.0 / estimate(wl, gpu).throughput
    )
    other = estimate(wl, get_gpu("H100"), measurements=cal)
    assert other.basis == "calibrated"


@pytest.mark.parametrize(
    ("kwargs", "n", "match"),
    [
        ({"batch_size_per_gpu": 0}, 1, "batch size"),
        ({"tensor_parallel": 3}, 8, "multiple"),
        ({"seq_len": 0, "model": "mpt-7b"}, 1, "seq_len"),
        ({}, 0, "num_gpus"),
    ],
)
def test_bad_input_raises_input_error(kwargs: dict[str, object], n: int, match: str) -> None:
    wl = dataclasses.replace(Workload(model="resnet50"), **kwargs)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=match):
        estimate(wl, get_gpu("A100"), n)


def test_bundled_constants_have_provenance_and_bad_ones_are_rejected() -> None:
    k = load_constants()
    assert "fit_command" in k.provenance and k.provenance["sources"]
    assert all(c.a >= 1 and c.b >= 1 for fam in k.families.values() for c in fam.values())
    with pytest.raises(DataError):
        parse_constants({"families": {}})


def test_host_time_per_sample_caps_the_speed_up_of_faster_gpus() -> None:
    """A per-sample host term that no GPU speeds up (Amdahl): doubling every GPU rate gains
    less than 2x, and the gap is the host share."""
    k = load_constants()
    wl = Workload(model="resnet50", precision=Precision.AMP, batch_size_per_gpu=256)
    a100 = get_gpu("A100-SXM4-80GB")
    fast = dataclasses.replace(
        a100,
        fp16_tflops=a100.fp16_tflops * 2,
        fp32_tflops=a100.fp32_tflops * 2,
        memory_bandwidth_gbps=a100.memory_bandwidth_gbps * 2,
        boost_clock_mhz=(a100.boost_clock_mhz or 0.0) * 2,
    )
    coeffs = dataclasses.replace(k.family("resnet50", True), c_s=0.0, c_sample_s=1e-4)
    host = dataclasses.replace(k, families={"resnet50": {"half": coeffs, "full": coeffs}})
    base, faster = estimate(wl, a100, constants=host), estimate(wl, fast, constants=host)
    gpu_part_s = base.step_time_s - 256 * 1e-4
    assert faster.step_time_s == pytest.approx(gpu_part_s / 2 + 256 * 1e-4)
    assert 1.0 < faster.throughput / base.throughput < 2.0


def test_gpu_scaling_exponents_parse_and_damp_faster_gpus() -> None:
    """`gpu_scaling` exponents in the constants file make a faster GPU gain less than its
    peak ratio; missing keys default to the plain roofline (exponent 0)."""
    raw = json.loads(
        (Path(__file__).parents[2] / "src/gpurent/estimate/data/calibration.json").read_text()
    )
    plain = parse_constants({**raw, "gpu_scaling": {}})
    damped = parse_constants(
        {**raw, "gpu_scaling": {"peak_exponent": 0.3, "bandwidth_exponent": 0.3}}
    )
    assert plain.peak_exponent == 0.0 and damped.bandwidth_exponent == 0.3
    wl = Workload(model="bert-large-squad", precision=Precision.AMP, batch_size_per_gpu=32)
    a100, b200 = get_gpu("A100-SXM4-80GB"), get_gpu("B200-180GB")

    def speed_up(k: object) -> float:
        return (
            estimate(wl, b200, constants=k).throughput
            / estimate(  # type: ignore[arg-type]
                wl,
                a100,
                constants=k,  # type: ignore[arg-type]
            ).throughput
        )

    assert 1.0 < speed_up(damped) < speed_up(plain)


def test_amp_that_never_engages_is_timed_at_the_fp32_rate_and_said_so() -> None:
    """The bundled fit flags WaveGlow and Tacotron 2 (their reference AMP runs measured at FP32
    speed on every GPU): AMP then buys them nothing and the estimate says why; a model whose AMP
    works (ResNet-50) keeps its speed-up and no such note."""
    k = load_constants()
    assert k.family("waveglow", True).half_at_full_rate
    assert not k.family("resnet50", True).half_at_full_rate
    h100 = get_gpu("H100")

    def run(model: str, p: Precision) -> tuple[float, tuple[str, ...]]:
        e = estimate(Workload(model=model, precision=p, batch_size_per_gpu=32), h100, 1)
        return e.samples_per_s, e.notes

    wg_amp, wg_notes = run("waveglow", Precision.AMP)
    wg_fp32, _ = run("waveglow", Precision.FP32)
    rn_amp, rn_notes = run("resnet50", Precision.AMP)
    rn_fp32, _ = run("resnet50", Precision.FP32)
    assert wg_amp == pytest.approx(wg_fp32, rel=0.02)
    assert any("no faster with AMP" in n for n in wg_notes)
    assert rn_amp > 1.3 * rn_fp32
    assert not any("no faster with AMP" in n for n in rn_notes)


def test_tensor_parallel_inference_pays_nccl_latency_per_layer_and_token() -> None:
    """Decode with TP all-reduces twice per layer per token; the small-message cost follows
    NCCL's own latency model (6.6 us + 0.6 us per ring step on NVLink, 1.0 us on PCIe)."""
    from gpurent.estimate import load_constants
    from gpurent.estimate.perf import tp_allreduce_time_s

    k = load_constants()
    h100, l4 = get_gpu("H100"), get_gpu("L4")
    assert tp_allreduce_time_s(0.0, h100, 8, k.comm, None) == pytest.approx(15.0e-6)
    assert tp_allreduce_time_s(0.0, l4, 4, k.comm, None) == pytest.approx(12.6e-6)
    assert tp_allreduce_time_s(1e6, h100, 1, k.comm, None) == 0.0

    def run(tp: int) -> tuple[float, float]:
        w = Workload(
            model="llama3-8b",
            task=Task.INFERENCE,
            precision=Precision.BF16,
            batch_size_per_gpu=16,
            seq_len=512,
            output_tokens=128,
            tensor_parallel=tp,
        )
        e = estimate(w, h100, tp)
        return e.communication_time_s, e.step_time_s

    comm1, _ = run(1)
    comm2, step2 = run(2)
    layers = get_model("llama3-8b").llm.layers  # type: ignore[union-attr]
    assert comm1 == 0.0
    # at least the latency of 2 all-reduces per layer for each of the 128 decoded tokens
    assert comm2 >= 128 * 2 * layers * (6.6e-6 + 2 * 0.6e-6) and comm2 < step2


def test_training_tensor_parallel_all_reduces_pay_the_same_latency_as_inference() -> None:
    """4 all-reduces per layer per micro-batch, each NCCL latency + ring bytes (as inference).
    Without sequence parallelism: with it each is a reduce-scatter + an all-gather
    (tests/estimate/test_layouts.py)."""
    from gpurent.estimate.perf import tp_allreduce_time_s

    k = load_constants()
    h100 = get_gpu("H100")
    shape = get_model("llama3-8b").llm
    assert shape is not None
    w = Workload(
        model="llama3-8b",
        precision=Precision.BF16,
        batch_size_per_gpu=1,
        seq_len=256,
        tensor_parallel=8,
        sequence_parallel=False,
    )
    e = estimate(w, h100, 8)
    per = tp_allreduce_time_s(256 * 1 * shape.hidden * 2.0, h100, 8, k.comm, None)
    assert per > 15.0e-6  # the latency floor of 8 GPUs on NVLink, plus the bytes
    assert e.communication_time_s == pytest.approx(4 * shape.layers * per)


def test_fp32_inference_keeps_a_32_bit_kv_cache() -> None:
    """The KV cache is stored in the run's activation type: 2 B for bf16/fp16 (and fp8 runs,
    whose cache stays 16-bit), 4 B for fp32."""
    h100 = get_gpu("H100")

    def kv(p: Precision) -> float:
        w = Workload(
            model="llama3-8b", task=Task.INFERENCE, precision=p, batch_size_per_gpu=8, seq_len=1024
        )
        return estimate(w, h100, 1).memory.kv_cache_gib

    assert kv(Precision.FP32) == pytest.approx(2 * kv(Precision.BF16))
    assert kv(Precision.FP8) == pytest.approx(kv(Precision.BF16))


def test_non_tensor_work_runs_at_the_sm_issue_rate_not_the_doubled_fp32_lanes() -> None:
    """Round 9: doubling a GPU's datasheet fp32 peak (the dual FP32 lanes of GA10x/Ada/Hopper)
    at the same SM count and clock leaves the estimate alone; doubling its clock does not."""
    k = load_constants()
    assert k.cuda_flops_per_sm_cycle == 128.0
    wl = Workload(model="resnet50", precision=Precision.AMP, batch_size_per_gpu=256)
    a100 = get_gpu("A100-SXM4-80GB")
    dual = dataclasses.replace(a100, fp32_tflops=a100.fp32_tflops * 2)
    assert estimate(wl, dual).step_time_s == estimate(wl, a100).step_time_s
    clocked = dataclasses.replace(a100, boost_clock_mhz=(a100.boost_clock_mhz or 0.0) * 2)
    assert estimate(wl, clocked).step_time_s < estimate(wl, a100).step_time_s


def test_cuda_rate_without_sm_data_derives_sm_cycles_from_the_fp32_peak() -> None:
    from gpurent.estimate.perf import cuda_rate_flops

    a100 = get_gpu("A100-SXM4-80GB")
    assert cuda_rate_flops(a100, 128.0) == pytest.approx(a100.fp32_tflops * 1e12, rel=0.01)
    h100 = get_gpu("H100-SXM5-80GB")  # 256 FP32 FLOP per SM-cycle on the datasheet
    assert cuda_rate_flops(h100, 128.0) == pytest.approx(h100.fp32_tflops * 1e12 / 2, rel=0.01)
    bare = dataclasses.replace(h100, sm_count=None)  # issue 12: fp32 / 256 SM-cycles, same path
    assert cuda_rate_flops(bare, 128.0) == pytest.approx(h100.fp32_tflops * 1e12 / 2)
    assert cuda_rate_flops(h100, 0.0) == h100.fp32_tflops * 1e12


def test_ngc_22_09_sync_is_a_share_of_the_step_growing_with_log2_gpus() -> None:
    """Round 9: the old stack's per-step sync is relative to the one-GPU step, so a GPU twice as
    fast keeps the same scaling efficiency from it, and each doubling of GPUs adds as much."""
    from gpurent.estimate.constants import StackCoeffs
    from gpurent.workload.spec import Stack

    k = load_constants()
    sk = k.stack(Stack.NGC_22_09.value)
    assert sk is not None and sk.sync_relative
    _, share = sk.scaling["tacotron2"]
    assert share > 0
    assert sk.sync_s(share, 2.0, 8) == pytest.approx(share * 2.0 * 3)
    absolute = StackCoeffs(description="", comm=sk.comm)
    assert absolute.sync_s(0.25, 2.0, 8) == 0.25
    wl = Workload(
        model="tacotron2", precision=Precision.AMP, batch_size_per_gpu=128, stack=Stack.NGC_22_09
    )
    effs = [estimate(wl, get_gpu("A100-SXM4-80GB"), n).scaling_efficiency for n in (2, 4, 8)]
    assert effs[0] > effs[1] > effs[2]
    # sync alone (no all-reduce term): the same efficiency on a GPU of any speed
    sync_only = dataclasses.replace(sk, scaling={"tacotron2": (0.0, share)})
    k2 = dataclasses.replace(k, stacks={**k.stacks, Stack.NGC_22_09.value: sync_only})
    slow, fast = get_gpu("A100-SXM4-80GB"), get_gpu("H100-SXM5-80GB")
    eff_slow = estimate(wl, slow, 8, constants=k2).scaling_efficiency
    eff_fast = estimate(wl, fast, 8, constants=k2).scaling_efficiency
    assert eff_slow == pytest.approx(eff_fast) and eff_slow < 1.0


def test_stack_sync_values_round_trip_through_the_constants_file() -> None:
    raw = json.loads(
        (Path(__file__).parents[2] / "src/gpurent/estimate/data/calibration.json").read_text()
    )
    stack = raw["stacks"]["ngc-22.09"]
    assert stack["sync_relative"] is True
    assert "sync_share_per_doubling" in stack["default_scaling"]
    k = parse_constants(raw)
    sk = k.stack("ngc-22.09")
    assert sk is not None
    assert sk.scaling["tacotron2"][1] == stack["scaling"]["tacotron2"]["sync_share_per_doubling"]
    del stack["sync_relative"]  # an old file: the same key name would be seconds
    with pytest.raises(DataError):
        parse_constants(raw)


def test_amd_compute_units_count_as_sms() -> None:
    """Issue 12: MI355X's CUs and clock feed the same SM-side terms as an NVIDIA GPU's SMs (its
    architecture's realized efficiency carries the difference), so they change the step."""
    mi = get_gpu("MI355X")
    assert mi.sm_cycles_per_s is not None
    fewer = dataclasses.replace(mi, sm_count=mi.sm_count // 2 if mi.sm_count else None)
    wl = Workload(model="bert-large-squad", precision=Precision.BF16, batch_size_per_gpu=32)
    assert estimate(wl, fewer).step_time_s > estimate(wl, mi).step_time_s


def test_transformer_speed_ratio_is_not_reused_for_a_different_spec_of_the_same_name() -> None:
    """The Estimator's ratio memo is keyed on the GPU's specs, not its name: a what-if spec (e.g.
    more bandwidth) under the same name gets its own ratio."""
    from gpurent.estimate import bundled_estimator

    engine = bundled_estimator()
    h100 = get_gpu("H100-SXM5-80GB")
    base = engine.speed_ratio(h100, Precision.BF16)
    faster = dataclasses.replace(h100, memory_bandwidth_gbps=h100.memory_bandwidth_gbps * 4)
    assert engine.speed_ratio(faster, Precision.BF16) < base


def test_low_confidence_specs_are_said_in_the_estimate() -> None:
    wl = Workload(model="resnet50", precision=Precision.AMP, batch_size_per_gpu=64)
    a10g = get_gpu("A10G")
    assert a10g.confidence == "low"
    assert any("low-confidence" in n for n in estimate(wl, a10g).notes)
    assert not any("low-confidence" in n for n in estimate(wl, get_gpu("A10")).notes)
