"""Timed training steps on synthetic data, single-process and DDP, and scaling efficiency.

A step is zero_grad + forward + loss + backward + AdamW step. `warmup` steps run untimed (CUDA
kernels autotune, allocator grows), then each timed step is measured with CUDA events on the GPU
(perf_counter on the CPU); the report gives the median and the 10th/90th percentiles (MLPerf
reports a spread rather than one run). FLOPs per step are counted once by
`torch.utils.flop_counter.FlopCounterMode` on a warm-up step (matmuls, convolutions and attention
of forward and backward, from the model as defined; attention counted over the full s x s square
as in the PaLM/nanoGPT MFU convention), so MFU = FLOPs / step time / peak.

Scaling: the same per-process batch on n processes joined by DistributedDataParallel (NCCL on
GPUs, gloo on CPU) against one process; efficiency = throughput_n / (n x throughput_1).
On the CPU both sides run one thread per process, so 2 processes on 2 cores is a fair contest.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpurent.bench.networks import ModelConfig, build, samples_to_throughput, synthetic_batch
from gpurent.bench.result import Measurement, ModelRun
from gpurent.bench.spawn import process_group, run_spawned
from gpurent.bench.timing import spread, time_calls
from gpurent.units import FLOPS_PER_TFLOP


@dataclass(frozen=True, slots=True, kw_only=True)
class StepTimes:
    """Timed training steps: each step's duration in seconds and the FLOPs of one step."""

    durations_s: tuple[float, ...]
    flops_per_step: float


def make_step(
    torch: Any, cfg: ModelConfig, device: str, precision: str, model: Any
) -> Callable[[], None]:
    """A closure running one training step of `model` on one synthetic batch."""
    fused = device == "cuda"
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=fused)
    x, y = synthetic_batch(torch, cfg, device)
    if cfg.name == "resnet50" and device == "cuda":
        x = x.contiguous(memory_format=torch.channels_last)
    half = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        ctx = (
            torch.autocast(device_type=device, dtype=half)
            if half is not None
            else contextlib.nullcontext()
        )
        with ctx:
            out = model(x)
        loss = torch.nn.functional.cross_entropy(
            out.reshape(-1, out.shape[-1]).float(), y.reshape(-1)
        )
        loss.backward()
        opt.step()

    return step


def measure_steps(
    torch: Any,
    cfg: ModelConfig,
    *,
    device: str,
    precision: str,
    warmup: int,
    steps: int,
    deadline: float | None = None,
    wrap: Callable[[Any], Any] | None = None,
    count_flops: bool = True,
) -> StepTimes:
    """Per-step seconds after `warmup` (>= 1) untimed steps, and FLOPs per step (0 when
    `count_flops` is off, as in DDP workers, where only the times are wanted)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    torch.manual_seed(0)
    model = build(torch, cfg).to(device)
    if cfg.name == "resnet50" and device == "cuda":
        model = model.to(memory_format=torch.channels_last)
    if wrap is not None:
        model = wrap(model)
    step = make_step(torch, cfg, device, precision, model)
    counter = FlopCounterMode(display=False)
    # FlopCounterMode has formulas for the GPU attention kernels (flash, efficient, cuDNN) but
    # not for the CPU's fused one: count the CPU step with the math backend (plain bmm's).
    backend = sdpa_kernel(SDPBackend.MATH) if device == "cpu" else contextlib.nullcontext()
    if count_flops:
        with counter, backend:
            step()
    else:
        step()
    flops = float(counter.get_total_flops()) if count_flops else 0.0
    durations = time_calls(
        torch, step, device=device, warmup=max(0, warmup - 1), repeats=steps, deadline=deadline
    )
    return StepTimes(durations_s=tuple(durations), flops_per_step=flops)


def run_model(
    torch: Any,
    cfg: ModelConfig,
    *,
    config_label: str,
    device: str,
    precision: str,
    warmup: int,
    steps: int,
    peak_tflops: float | None,
    peak_basis: str,
    deadline: float | None = None,
) -> ModelRun:
    """One process, one device: the ModelRun with median/p10/p90 step time, throughput, MFU."""
    times = measure_steps(
        torch,
        cfg,
        device=device,
        precision=precision,
        warmup=warmup,
        steps=steps,
        deadline=deadline,
    )
    s = spread(times.durations_s)
    samples_per_s = cfg.batch_size / s.median_s
    achieved = times.flops_per_step / s.median_s / FLOPS_PER_TFLOP
    return ModelRun(
        model=cfg.name,
        config=f"{config_label}: {cfg.describe()}",
        device=device,
        world_size=1,
        precision=precision,
        batch_size=cfg.batch_size,
        seq_len=cfg.seq_len,
        warmup_steps=warmup,
        timed_steps=len(times.durations_s),
        step_time_median_s=s.median_s,
        step_time_p10_s=s.p10_s,
        step_time_p90_s=s.p90_s,
        samples_per_s=samples_per_s,
        throughput=samples_to_throughput(cfg, samples_per_s),
        throughput_unit=cfg.throughput_unit,
        flops_per_step=times.flops_per_step,
        achieved_tflops=achieved,
        mfu=achieved / peak_tflops if peak_tflops else None,
        mfu_basis=peak_basis if peak_tflops else "no peak known",
    )


def _ddp_worker(rank: int, world_size: int, args: dict[str, Any]) -> list[float]:
    device = args["device"]
    with process_group(rank, world_size, device) as torch:
        ids = [rank] if device == "cuda" else None
        times = measure_steps(
            torch,
            args["cfg"],
            device=device,
            precision=args["precision"],
            warmup=args["warmup"],
            steps=args["steps"],
            wrap=lambda m: torch.nn.parallel.DistributedDataParallel(m, device_ids=ids),
            count_flops=False,
        )
        return list(times.durations_s)


def run_scaling(
    torch: Any,
    cfg: ModelConfig,
    *,
    device: str,
    world_size: int,
    precision: str,
    warmup: int,
    steps: int,
    timeout_s: float,
) -> Measurement:
    """DDP scaling efficiency of `cfg` over `world_size` processes against one process."""
    threads = torch.get_num_threads()
    if device == "cpu":
        torch.set_num_threads(1)
    try:
        one = measure_steps(
            torch, cfg, device=device, precision=precision, warmup=warmup, steps=steps
        )
    finally:
        torch.set_num_threads(threads)
    per_rank = run_spawned(
        _ddp_worker,
        world_size,
        {"device": device, "cfg": cfg, "precision": precision, "warmup": warmup, "steps": steps},
        timeout_s,
    )
    single = cfg.batch_size / spread(one.durations_s).median_s
    slowest = max(spread(d).median_s for d in per_rank)
    multi = world_size * cfg.batch_size / slowest
    where = (
        f"{world_size} GPUs, NCCL"
        if device == "cuda"
        else (f"{world_size} CPU processes x 1 thread, gloo")
    )
    return Measurement(
        key=f"scaling.{cfg.name}",
        benchmark="scaling",
        value=multi / (world_size * single),
        unit="fraction",
        detail=f"DDP {where}: {multi:.4g} samples/s vs 1 process {single:.4g} samples/s "
        f"(batch {cfg.batch_size} per process, {cfg.describe()})",
    )
