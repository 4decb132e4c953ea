"""CPU offload costs time: PCIe transfers and the CPU Adam step (issue 12, round 11)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import run_cli

from gpurent.catalog import get_gpu, parse_precision
from gpurent.catalog.gpu import GpuSpec
from gpurent.estimate import estimate
from gpurent.estimate.offload import (
    HOST_DRAM_BYTES_PER_S,
    HOST_DRAM_BYTES_PER_S_RANGE,
    host_interval,
)
from gpurent.estimate.uncertainty import Interval
from gpurent.workload.spec import Sharding, Task, Workload

BF16 = parse_precision("bf16")


def _wl(model: str, *, offload: bool, **kw: object) -> Workload:
    base = Workload(
        model=model,
        precision=BF16,
        batch_size_per_gpu=1,
        seq_len=8192,
        activation_checkpointing=True,
        sharding=Sharding.ZERO3,
        cpu_offload=offload,
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def _step(wl: Workload, gpu: GpuSpec, n: int, nodes: int = 1) -> float:
    return estimate(wl, gpu, n, nodes=nodes).step_time_s


CASES = [
    ("llama3-8b", "H200-SXM-141GB", 8, 1, {}),
    ("llama3-8b", "A100-SXM4-80GB", 1, 1, {"sharding": Sharding.NONE}),
    ("llama3-8b", "L40S", 4, 1, {"sharding": Sharding.ZERO2}),
    ("llama2-13b", "H100-SXM5-80GB", 16, 2, {"gradient_accumulation": 4}),
    ("llama3-70b", "A100-SXM4-80GB", 8, 1, {"task": Task.FINETUNE_LORA}),
    ("mpt-7b", "B200-180GB", 8, 1, {"sharding": Sharding.ZERO1, "seq_len": 2048}),
]


@pytest.mark.parametrize(("model", "gpu", "n", "nodes", "kw"), CASES)
def test_offload_is_never_faster_than_no_offload(
    model: str, gpu: str, n: int, nodes: int, kw: dict[str, object]
) -> None:
    spec = get_gpu(gpu)
    on = _step(_wl(model, offload=True, **kw), spec, n, nodes)
    off = _step(_wl(model, offload=False, **kw), spec, n, nodes)
    assert on >= off
    if kw.get("task") is None and nodes == 1:  # full training: the whole optimizer moves
        assert on > 1.05 * off


@pytest.mark.parametrize(("model", "gpu", "n", "nodes", "kw"), CASES)
def test_a_lower_pcie_generation_is_never_faster(
    model: str, gpu: str, n: int, nodes: int, kw: dict[str, object]
) -> None:
    spec = get_gpu(gpu)
    wl = _wl(model, offload=True, **kw)
    times = [_step(wl, replace(spec, pcie_gen=g), n, nodes) for g in (3, 4, 5, 6)]
    assert times == sorted(times, reverse=True)
    assert times[0] > times[-1]  # the link matters at all


def test_the_offload_term_grows_with_model_size() -> None:
    spec = get_gpu("H100-SXM5-80GB")
    cost = []
    for model in ("mpt-1b", "llama3-8b", "llama2-13b", "llama3-70b"):
        on = _step(_wl(model, offload=True, seq_len=2048), spec, 8)
        off = _step(_wl(model, offload=False, seq_len=2048), spec, 8)
        cost.append(on - off)
    assert cost == sorted(cost) and len(set(cost)) == len(cost) and cost[0] > 0


def test_host_memory_is_shared_by_the_gpus_of_a_node() -> None:
    """The same 16 GPUs on 4 nodes step 4 GPUs' shards per host instead of 8 on 2 nodes."""
    spec = get_gpu("H100-SXM5-80GB")
    wl = _wl("llama3-8b", offload=True, sharding=Sharding.ZERO2)
    no = _wl("llama3-8b", offload=False, sharding=Sharding.ZERO2)
    two = _step(wl, spec, 16, 2) - _step(no, spec, 16, 2)
    four = _step(wl, spec, 16, 4) - _step(no, spec, 16, 4)
    assert four < two


def test_cli_workload_file_with_offload_is_slower_and_says_so(tmp_path: Path) -> None:
    outs = {}
    for offload in ("true", "false"):
        f = tmp_path / f"job-{offload}.toml"
        f.write_text(
            'model = "llama3-8b"\nprecision = "bf16"\nbatch_size_per_gpu = 1\nseq_len = 8192\n'
            f'activation_checkpointing = true\nsharding = "zero3"\ncpu_offload = {offload}\n'
        )
        code, out, err = run_cli(
            "estimate", "--workload", str(f), "--gpu", "H200-SXM-141GB", "--gpus", "8", "--json"
        )
        assert code == 0, err
        outs[offload] = json.loads(out)
    assert outs["true"]["throughput"] < 0.9 * outs["false"]["throughput"]
    notes = " ".join(outs["true"]["notes"])
    assert "CPU offload priced" in notes and "PCIe gen 5" in notes
    assert "CPU offload" not in " ".join(outs["false"]["notes"])


@settings(max_examples=40, deadline=None)
@given(
    model=st.sampled_from(["gpt2", "mpt-1b", "llama3-8b", "llama2-13b", "mistral-7b"]),
    gpu=st.sampled_from(["A100-SXM4-80GB", "H100-SXM5-80GB", "L40S", "B200-180GB", "MI300X"]),
    n=st.sampled_from([1, 2, 8, 16]),
    sharding=st.sampled_from(list(Sharding)),
    seq=st.sampled_from([1024, 8192, 32768]),
    ga=st.sampled_from([1, 2, 8]),
    task=st.sampled_from([Task.TRAINING, Task.FINETUNE_LORA, Task.FINETUNE_QLORA]),
)
def test_offload_never_speeds_up_any_training_config(
    model: str, gpu: str, n: int, sharding: Sharding, seq: int, ga: int, task: Task
) -> None:
    spec = get_gpu(gpu)
    nodes = 2 if n == 16 else 1
    kw = {"sharding": sharding, "seq_len": seq, "gradient_accumulation": ga, "task": task}
    on = _wl(model, offload=True, **kw)
    off = _wl(model, offload=False, **kw)
    assert _step(on, spec, n, nodes) >= _step(off, spec, n, nodes)
    slower = _step(on, replace(spec, pcie_gen=3), n, nodes)
    assert slower >= _step(on, replace(spec, pcie_gen=5), n, nodes)


# --- what CPU offload keeps on the GPU (session 15): gradients go to the host with the
# optimizer; the weight shards too unless `offload_params` is false (DeepSpeed
# offload_optimizer alone)

H100 = "H100-SXM5-80GB"


@pytest.mark.parametrize("sharding", [Sharding.ZERO2, Sharding.ZERO3, Sharding.HSDP])
def test_offload_keeps_no_gradient_or_optimizer_shard_on_the_gpu(sharding: Sharding) -> None:
    gpu = get_gpu(H100)
    wl = _wl("llama3-8b", offload=False, sharding=sharding)
    off = estimate(wl, gpu, 16, nodes=2).memory
    on = estimate(replace(wl, cpu_offload=True), gpu, 16, nodes=2).memory
    assert on.optimizer_gib == 0.0 and off.optimizer_gib > 0.0
    assert on.gradients_gib < off.gradients_gib
    if sharding.shards_weights:  # the one layer in flight is counted with the gathered weights
        assert on.gradients_gib == 0.0


def test_the_weight_shard_stays_on_the_gpu_when_only_the_optimizer_is_offloaded() -> None:
    gpu = get_gpu(H100)
    params = _wl("llama3-8b", offload=True)
    optimizer_only = replace(params, offload_params=False)
    assert params.offloads_params and not optimizer_only.offloads_params
    a, b = estimate(params, gpu, 8), estimate(optimizer_only, gpu, 8)
    shard_gib = 8.03e9 * 2 / 8 / 2**30  # bf16 weights over 8 ranks
    assert b.memory.weights_gib - a.memory.weights_gib == pytest.approx(shard_gib, rel=0.05)
    assert b.step_time_s <= a.step_time_s  # no weight shard to fetch over PCIe for each pass


def test_full_fine_tune_with_fsdp_offload_fits_where_its_gradients_would_not() -> None:
    # torchtune's Llama 3.1 70B full fine-tune with fsdp_cpu_offload on 8 A100s measured 13.9 GiB
    wl = _wl(
        "llama3-70b",
        offload=True,
        task=Task.FINETUNE_FULL,
        batch_size_per_gpu=2,
        seq_len=2048,
        fused_loss=True,
    )
    mem = estimate(wl, get_gpu("A100-SXM4-80GB"), 8).memory
    assert mem.total_gib < 20.0  # the 16.4 GiB of sharded bf16 gradients live on the host


def test_offload_params_errors_are_one_line() -> None:
    from tests.conftest import one_line_error

    base = ("estimate", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8")
    one_line_error(*run_cli(*base, "--offload-params"), "--cpu-offload")
    one_line_error(
        *run_cli(*base, "--cpu-offload", "--offload-params", "--sharding", "zero2"),
        "zero2",
        "zero3",
    )
    code, out, err = run_cli(
        *base, "--cpu-offload", "--no-offload-params", "--sharding", "zero3", "--json"
    )
    assert code == 0, err
    assert json.loads(out)["fits"] is True


def test_the_interval_carries_the_unknown_host_memory_on_cpu_adams_share() -> None:
    """CPU Adam runs at the host's DRAM bandwidth, which the estimator cannot see: the interval
    widens by `HOST_DRAM_BYTES_PER_S_RANGE` on CPU Adam's share of the step. The share, named
    in the interval class, falls as longer sequences give the GPUs more work per step; without
    offload there is no such term."""
    gpu = get_gpu("H200-SXM-141GB")
    short = estimate(_wl("llama3-8b", offload=True), gpu, 8)
    long = estimate(_wl("llama3-8b", offload=True, seq_len=65536), gpu, 8)
    shares = []
    for est in (short, long):
        m = re.search(
            r"host memory 150-450 GB/s for CPU Adam on (\d+) % of the step", est.interval_class
        )
        assert m is not None, est.interval_class
        shares.append(int(m.group(1)))
        assert est.interval_low < 1.0 < est.interval_high
    assert shares[0] > shares[1] > 0
    assert "host memory" not in estimate(_wl("llama3-8b", offload=False), gpu, 8).interval_class


def test_host_interval_stretches_only_the_cpu_adam_part() -> None:
    base = Interval(low=0.8, high=1.2, coverage=0.8, label="x")
    assert host_interval(base, 0.0) == base
    wide = host_interval(base, 0.5)
    low_bps, high_bps = HOST_DRAM_BYTES_PER_S_RANGE
    assert wide.low == pytest.approx(0.8 / (0.5 + 0.5 * HOST_DRAM_BYTES_PER_S / low_bps))
    assert wide.high == pytest.approx(1.2 / (0.5 + 0.5 * HOST_DRAM_BYTES_PER_S / high_bps))
    assert wide.low < base.low and wide.high > base.high
    assert low_bps < HOST_DRAM_BYTES_PER_S < high_bps
