"""Runs the selected benchmarks within a time bound and assembles the BenchResult.

This is the edge that touches torch, the disk and the clock; each benchmark module measures one
thing, `expect` and `verdict` judge. Sizes come from `plan_sizes` (small for --quick, larger for
the full run; full-size models on a GPU, scaled-down ones on the CPU). A benchmark that fails
(a DeviceError from NCCL, an OSError from the disk) is recorded as failed and the run goes on.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpurent.bench.allreduce import run_allreduce
from gpurent.bench.dataload import run_dataload
from gpurent.bench.detect import PcieLink, detect_hardware, read_pcie_link
from gpurent.bench.disk import run_disk
from gpurent.bench.expect import MODEL_MIN, Expectation, ModelExpectFn, build_expectations
from gpurent.bench.hostdev import run_hostdev
from gpurent.bench.matmul import CPU_PRECISIONS, GPU_PRECISIONS, run_matmul
from gpurent.bench.membw import run_membw
from gpurent.bench.networks import CPU_SMALL, FULL, MODEL_NAMES, ModelConfig
from gpurent.bench.result import BenchResult, CalibrationRow, Measurement, ModelRun
from gpurent.bench.timing import THROTTLE_ENV, throttle_factor
from gpurent.bench.torchdep import import_torch, resolve_device
from gpurent.bench.train import run_model, run_scaling
from gpurent.bench.verdict import judge
from gpurent.catalog import GpuSpec, Precision, find_gpu
from gpurent.errors import DeviceError, GpurentError, InputError

BENCHMARKS = ("matmul", "membw", "hostdev", "allreduce", "disk", "dataload", "models", "scaling")
"""The benchmark names `gpurent bench --only` takes, in the order they run."""
Progress = Callable[[str, int, int], None]  # (label, done, total)


@dataclass(frozen=True, slots=True, kw_only=True)
class BenchConfig:
    """What to run. `quick` caps timed steps at 5 and warm-up at 2 and uses small sizes.

    `max_seconds` bounds the run: each benchmark gets an equal share of the time left and its
    timing loops stop at the end of its share (after at least 2 timed repeats); benchmarks not
    started by the bound are skipped and named in the notes.
    """

    quick: bool = False
    only: tuple[str, ...] = BENCHMARKS
    disk_path: Path = Path(".")
    device: str = "auto"
    steps: int = 100
    warmup: int = 10
    max_seconds: float = 900.0

    def validate(self) -> None:
        """Check the benchmark names, step counts and sizes; InputError naming the bad option."""
        unknown = [b for b in self.only if b not in BENCHMARKS]
        if unknown:
            raise InputError(f"--only {','.join(unknown)}: unknown; use {', '.join(BENCHMARKS)}")
        if not self.only:
            raise InputError("--only: name at least one benchmark")
        if self.steps < 2:
            raise InputError(f"--steps {self.steps}: need at least 2 timed steps")
        if self.warmup < 1:
            raise InputError(f"--warmup {self.warmup}: need at least 1 warm-up step")
        if self.max_seconds <= 0:
            raise InputError(f"--max-seconds {self.max_seconds:g}: must be positive")
        if "disk" in self.only and not self.disk_path.is_dir():
            raise InputError(f"--path {self.disk_path}: not an existing directory")


@dataclass(frozen=True, slots=True, kw_only=True)
class Sizes:
    """Problem sizes of each benchmark: matmul sizes, MiB moved, repeats and disk reads."""

    matmul_sizes: tuple[int, ...]
    matmul_repeats: int
    membw_mib: int
    hostdev_mib: int
    allreduce_mib: tuple[float, ...]
    allreduce_repeats: int
    disk_mib: int
    disk_random_reads: int
    dataload_images: int
    dataload_src_px: int
    dataload_out_px: int
    dataload_batch: int


def plan_sizes(device: str, quick: bool) -> Sizes:
    """Benchmark sizes: small enough for --quick to finish in < 60 s on 2 CPU cores."""
    if device == "cuda":
        return Sizes(
            matmul_sizes=(4096, 8192) if quick else (2048, 4096, 6144, 8192, 16384),
            matmul_repeats=10 if quick else 30,
            membw_mib=512 if quick else 2048,
            hostdev_mib=256 if quick else 1024,
            allreduce_mib=(64.0, 256.0) if quick else (16.0, 64.0, 256.0, 1024.0),
            allreduce_repeats=5 if quick else 20,
            disk_mib=256 if quick else 4096,
            disk_random_reads=2000 if quick else 20000,
            dataload_images=256 if quick else 2048,
            dataload_src_px=320,
            dataload_out_px=224,
            dataload_batch=64,
        )
    return Sizes(
        matmul_sizes=(512, 1024) if quick else (512, 1024, 2048),
        matmul_repeats=5 if quick else 10,
        membw_mib=32 if quick else 256,
        hostdev_mib=32 if quick else 256,
        allreduce_mib=(1.0, 8.0) if quick else (1.0, 16.0, 64.0),
        allreduce_repeats=5 if quick else 20,
        disk_mib=64 if quick else 1024,
        disk_random_reads=2000 if quick else 20000,
        dataload_images=96 if quick else 1024,
        dataload_src_px=160 if quick else 320,
        dataload_out_px=128 if quick else 224,
        dataload_batch=16 if quick else 64,
    )


def estimator_expectations(
    estimate_fn: Callable[[Any, GpuSpec, int], Any] | None = None,
) -> ModelExpectFn | None:
    """Model-throughput expectations from `estimate_fn` (the CLI passes its one estimator's
    `Estimator.estimate`, with the user's calibration, as `gpurent estimate` and `plan` use);
    without one, from `gpurent.estimate.estimate` when it exists."""
    estimate = estimate_fn or getattr(importlib.import_module("gpurent.estimate"), "estimate", None)
    if not callable(estimate):
        return None
    from gpurent.workload import spec as workload_spec

    def expect(run: ModelRun, gpu: GpuSpec, num_gpus: int) -> Expectation | None:
        cfg = FULL.get(run.model)
        if cfg is None or not run.config.startswith("full"):
            return None
        workload = workload_spec.Workload(
            model=cfg.calibration_name,
            precision=Precision(run.precision),
            batch_size_per_gpu=run.batch_size,
            seq_len=run.seq_len,
        )
        try:
            est = estimate(workload, gpu, num_gpus)
        except (GpurentError, TypeError, ValueError):
            return None
        if getattr(est, "throughput_unit", None) != run.throughput_unit:
            return None
        return Expectation(
            value=float(est.throughput),
            unit=run.throughput_unit,
            source=f"gpurent estimator ({est.basis})",
            threshold=MODEL_MIN,
        )

    return expect


def run_bench(
    cfg: BenchConfig,
    *,
    created_at: str,
    progress: Progress | None = None,
    clock: Callable[[], float] = time.monotonic,
    model_expect: ModelExpectFn | None = None,
) -> BenchResult:
    """Run the benchmarks of `cfg`, judge them, and return the result (nothing is printed)."""
    cfg.validate()
    slow = throttle_factor()  # the test hook, checked before anything runs
    torch = import_torch()
    device = resolve_device(torch, cfg.device)
    start = clock()
    deadline = start + cfg.max_seconds
    slot = [deadline]  # the running benchmark's share of the time left (its loops stop there)
    steps = min(cfg.steps, 5) if cfg.quick else cfg.steps
    warmup = min(cfg.warmup, 2) if cfg.quick else cfg.warmup
    sizes = plan_sizes(device, cfg.quick)
    gpu_count = int(torch.cuda.device_count()) if device == "cuda" else 0
    spec = find_gpu(str(torch.cuda.get_device_properties(0).name)) if device == "cuda" else None
    models = FULL if device == "cuda" else CPU_SMALL
    # Mixed precision as current stacks train: bf16 autocast, fp16 on GPUs without bf16 (V100,
    # T4; no loss scaler is needed to time synthetic steps); fp32 on the CPU.
    if device == "cuda":
        model_precision = "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    else:
        model_precision = "fp32"
    measurements: list[Measurement] = []
    runs: list[ModelRun] = []
    notes: list[str] = []
    links: list[PcieLink] = []

    def probe() -> None:
        link = read_pcie_link(0)
        if link is not None:
            links.append(link)

    def bench_models() -> None:
        matmul = next((m for m in measurements if m.key == "matmul.fp32"), None)
        for i, name in enumerate(MODEL_NAMES):
            model_deadline = clock() + (slot[0] - clock()) / (len(MODEL_NAMES) - i)
            if clock() > deadline:
                notes.append(f"skipped model {name}: --max-seconds reached")
                continue
            if device == "cuda" and spec is not None:
                peak = spec.peak_tflops(Precision(model_precision))
                basis = f"{spec.name} datasheet {model_precision}"
            elif device == "cpu" and matmul is not None and matmul.value:
                peak, basis = matmul.value, "torch fp32 matmul measured in this run (CPU)"
            else:
                peak, basis = None, ""
            try:
                run = run_model(
                    torch,
                    models[name],
                    config_label="full" if device == "cuda" else "cpu-small",
                    device=device,
                    precision=model_precision,
                    warmup=warmup,
                    steps=steps,
                    peak_tflops=peak,
                    peak_basis=f"{basis} {peak:.4g} TFLOP/s" if peak else "",
                    deadline=model_deadline,
                )
            except RuntimeError as exc:  # torch.cuda.OutOfMemoryError and kernel failures
                _release(torch, device)
                measurements.append(failed(f"model.{name}", "model", exc))
                continue
            runs.append(run)

    def bench_scaling() -> None:
        world = gpu_count if device == "cuda" else 2
        model: ModelConfig = models["resnet50" if device == "cuda" else "gpt-decoder"]
        if world < 2:
            measurements.append(
                Measurement(
                    key=f"scaling.{model.name}",
                    benchmark="scaling",
                    value=None,
                    unit="fraction",
                    detail="not applicable: one GPU",
                )
            )
            return
        measurements.append(
            run_scaling(
                torch,
                model,
                device=device,
                world_size=world,
                precision=model_precision,
                warmup=warmup,
                steps=steps,
                timeout_s=max(60.0, deadline - clock() + 60.0),
            )
        )

    def timed_on_device(run: Callable[..., list[Measurement]], **args: Any) -> Callable[[], Any]:
        """A job that runs `run(torch, device, repeats, deadline of its slot, **args)`."""
        return lambda: measurements.extend(
            run(torch, device=device, repeats=sizes.matmul_repeats, deadline=slot[0], **args)
        )

    jobs: dict[str, Callable[[], Any]] = {
        "matmul": timed_on_device(
            run_matmul,
            sizes=sizes.matmul_sizes,
            precisions=GPU_PRECISIONS if device == "cuda" else CPU_PRECISIONS,
        ),
        "membw": timed_on_device(run_membw, array_mib=sizes.membw_mib),
        "hostdev": timed_on_device(run_hostdev, size_mib=sizes.hostdev_mib, probe_link=probe),
        "allreduce": lambda: measurements.extend(
            run_allreduce(
                device=device,
                world_size=gpu_count if device == "cuda" else 2,
                sizes_mib=list(sizes.allreduce_mib),
                repeats=sizes.allreduce_repeats,
                timeout_s=max(60.0, deadline - clock() + 60.0),
            )
        ),
        "disk": lambda: measurements.extend(
            run_disk(
                cfg.disk_path,
                file_mib=sizes.disk_mib,
                random_reads=sizes.disk_random_reads,
                deadline=slot[0],
            )
        ),
        "dataload": lambda: measurements.extend(
            run_dataload(
                torch,
                images=sizes.dataload_images,
                src_size=sizes.dataload_src_px,
                out_size=sizes.dataload_out_px,
                workers=_loader_workers(),
                batch_size=sizes.dataload_batch,
            )
        ),
        "models": bench_models,
        "scaling": bench_scaling,
    }
    selected = [b for b in BENCHMARKS if b in cfg.only]
    for done, name in enumerate(selected):
        if progress is not None:
            progress(name, done, len(selected))
        if clock() > deadline:
            notes.append(f"skipped {name}: --max-seconds {cfg.max_seconds:g} reached")
            continue
        slot[0] = clock() + (deadline - clock()) / (len(selected) - done)
        _release(torch, device)  # spawned workers need the memory this process cached
        try:
            jobs[name]()
        except (DeviceError, OSError, RuntimeError) as exc:
            measurements.append(failed(f"{name}.error", name, exc))
    if progress is not None:
        progress("verdict", len(selected), len(selected))
    if slow > 1.0:
        notes.append(
            f"{THROTTLE_ENV}={slow:g}: every timed CPU call was slowed {slow:g}x (a test hook)"
        )
    hw = detect_hardware(torch, device, links[0] if links else None)
    expectations = build_expectations(hw, spec, measurements, runs, model_expect)
    if device == "cuda" and model_expect is None:
        notes.append("no estimator expectation: gpurent.estimate.estimate is not installed")
    calibration = _calibration_rows(hw.gpu_catalog_name, runs, notes)
    if device == "cpu":
        notes.append("calibration_rows empty: a CPU is not a GPU model of the catalog")
    return BenchResult(
        created_at=created_at,
        quick=cfg.quick,
        duration_s=clock() - start,
        hardware=hw,
        measurements=tuple(measurements),
        model_runs=tuple(runs),
        verdict=judge(hw, measurements, runs, expectations),
        calibration_rows=calibration,
        notes=tuple(notes),
    )


def failed(key: str, benchmark: str, exc: BaseException) -> Measurement:
    """A benchmark that raised: recorded (the verdict fails it), and the run goes on."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return Measurement(key=key, benchmark=benchmark, value=None, unit="", detail=f"failed: {first}")


def _release(torch: Any, device: str) -> None:
    """Free what earlier benchmarks left in torch's CUDA caching allocator."""
    if device == "cuda":
        import gc

        gc.collect()
        torch.cuda.empty_cache()


def _loader_workers() -> int:
    import os

    return max(1, min(16, os.cpu_count() or 1))


def _calibration_rows(
    gpu: str | None, runs: list[ModelRun], notes: list[str]
) -> tuple[CalibrationRow, ...]:
    rows = []
    for run in runs:
        if run.device != "cuda":
            continue
        if gpu is None:
            notes.append("calibration_rows empty: the GPU is not in the catalog")
            break
        rows.append(
            CalibrationRow(
                model=FULL[run.model].calibration_name,
                gpu=gpu,
                num_gpus=run.world_size,
                precision=run.precision,
                batch_size=run.batch_size,
                throughput=run.throughput,
                throughput_unit=run.throughput_unit,
                seq_len=run.seq_len,
            )
        )
    return tuple(rows)
