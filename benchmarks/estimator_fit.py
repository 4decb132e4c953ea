"""Load the measured throughput tables and fit the estimator's constants.

Used by `fit_estimator.py` (writes src/gpurent/estimate/data/calibration.json) and by
`bench_estimator_accuracy.py` (refits on subsets for leave-one-out cross-validation).
The data directory is always an argument; nothing here knows where it lives.
"""

from __future__ import annotations

import csv
import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from gpurent.catalog import GpuSpec, Precision, find_gpu, get_gpu
from gpurent.estimate.constants import (
    CommCoeffs,
    Constants,
    FamilyCoeffs,
    LlmCoeffs,
    StackCoeffs,
)
from gpurent.estimate.estimator import (
    LLM_REFERENCE_GPU,
    attention_speed_ratio,
    estimate,
    transformer_speed_ratio,
)
from gpurent.estimate.perf import ddp_allreduce_time_s, family_features, llm_training_features
from gpurent.workload.models import get_model
from gpurent.workload.spec import AttentionKernel, Sharding, Stack, Task, Workload

# GPUs in Lambda's table but not in the catalog: datasheet facts, used for fitting only.
EXTRA_GPUS = {
    "Quadro RTX 8000": GpuSpec(
        name="Quadro-RTX-8000",
        aliases=(),
        vendor="nvidia",
        architecture="Turing",
        form_factor="PCIe",
        memory_gib=48,
        memory_type="GDDR6",
        memory_bandwidth_gbps=672,
        fp32_tflops=16.3,
        tf32_tflops=None,
        fp16_tflops=130.5,
        bf16_supported=False,
        fp8_tflops=None,
        interconnect="NVLink bridge",
        interconnect_gbps=100,
        pcie_gen=3,
        tdp_w=295,
        confidence="high",
        source=(
            "NVIDIA Quadro RTX 8000 datasheet (16.3 TFLOPS FP32, 130.5 TFLOPS tensor, 672 GB/s); "
            "SMs/clock: TU102 with all 72 SMs, 4608 CUDA cores (Turing architecture summary, "
            "developer.aliyun.com/article/1642215); boost 1770 MHz = the datasheet's 16.3 TFLOPS "
            "/ (2 x 4608 cores), as listed for the same-board Quadro RTX 6000 (sysrqmts.com, "
            "TechPowerUp data: 72 SMs, boost 1770 MHz)"
        ),
        sm_count=72,
        boost_clock_mhz=1770.0,
    )
}


@dataclass(frozen=True)
class Row:
    source: str  # "lambda" | "dle" | "mosaic"
    model: str
    gpu: GpuSpec
    num_gpus: int
    nodes: int
    precision: Precision
    batch: int
    seq_len: int | None
    throughput: float  # total, model unit
    activation_checkpointing: bool = False
    sharding: Sharding = Sharding.NONE
    grad_accum: int = 1
    inter_node_gbps: float | None = None
    # the software stack the row was measured on: Lambda's reference rows are all NGC 22.09
    # (the `container` column), NVIDIA's are its tuned DeepLearningExamples
    stack: Stack = Stack.NGC_24

    def workload(self) -> Workload:
        return Workload(
            model=self.model,
            precision=self.precision,
            batch_size_per_gpu=self.batch,
            seq_len=self.seq_len,
            activation_checkpointing=self.activation_checkpointing,
            sharding=self.sharding,
            gradient_accumulation=self.grad_accum,
            stack=self.stack,
            # the LLM constants are fitted on these rows: their kernel is the fitted one
            attention_kernel=(
                AttentionKernel.FITTED if self.source == "mosaic" else AttentionKernel.AUTO
            ),
        )


def _gpu(name: str) -> GpuSpec | None:
    return EXTRA_GPUS.get(name) or find_gpu(name)


def load_lambda(data_dir: Path) -> list[Row]:
    """Lambda rows, de-duplicated (v1 and csv_v1_v2 repeat each other), flagged rows dropped."""
    rows: list[Row] = []
    seen: set[tuple[str, ...]] = set()
    with (data_dir / "lambda_train_throughput.csv").open(newline="") as f:
        for r in csv.DictReader(f):
            if r["flags"].strip():
                continue
            key = (r["gpu"], r["num_gpus"], r["task"], r["precision"], r["per_gpu_batch_size"])
            if key in seen:
                continue
            seen.add(key)
            gpu = _gpu(r["gpu"])
            if gpu is None:
                continue
            model = get_model(r["task"])
            rows.append(
                Row(
                    source="lambda",
                    model=model.name,
                    gpu=gpu,
                    num_gpus=int(r["num_gpus"]),
                    nodes=1,
                    precision=Precision.AMP if r["precision"] == "fp16_amp" else Precision.FP32,
                    batch=int(r["per_gpu_batch_size"]),
                    seq_len=model.default_seq_len,
                    throughput=float(r["throughput"]),
                    stack=_lambda_stack(r["container"]),
                )
            )
    return rows


def _lambda_stack(container: str) -> Stack:
    """Lambda's `container` column: "NGC pytorch:22.09-py3" (v1), or "mixed: ... 22.09 (v1) /
    24.x (v2)" for the combined files, whose rows for the reference GPUs are the v1 runs."""
    if "22.09" in container:
        return Stack.NGC_22_09
    if "24." in container:
        return Stack.NGC_24
    raise ValueError(f"lambda_train_throughput.csv: unknown container {container!r}")


def load_dle(data_dir: Path) -> list[Row]:
    """NVIDIA DeepLearningExamples rows (tuned stack): ResNet-50 and BERT-large."""
    rows: list[Row] = []
    with (data_dir / "nvidia_dle_training.csv").open(newline="") as f:
        for r in csv.DictReader(f):
            if "V100 'Batch size" in r["note"]:
                continue  # accumulated batch, not the micro-batch
            gpu = _gpu(r["gpu"])
            if gpu is None:
                continue
            model = (
                "resnet50"
                if r["model"].startswith("ResNet")
                else ("bert-large-squad" if "SQuAD" in r["task"] else "bert-large-pretrain")
            )
            n = int(r["num_gpus"])
            prec = {"TF32": Precision.FP32, "FP32": Precision.FP32, "AMP": Precision.AMP}[
                r["precision"]
            ]
            rows.append(
                Row(
                    source="dle",
                    model=model,
                    gpu=gpu,
                    num_gpus=n,
                    nodes=max(1, n // 8),
                    precision=prec,
                    batch=int(r["per_gpu_batch"]),
                    seq_len=int(r["seq_len"]) if r["seq_len"] else None,
                    throughput=float(r["throughput"]),
                    inter_node_gbps=1600.0,
                    stack=Stack.NVIDIA_DLE,
                )
            )
    return rows


def load_mosaic(data_dir: Path) -> list[Row]:
    rows: list[Row] = []
    with (data_dir / "mosaic_mpt_a100.csv").open(newline="") as f:
        for r in csv.DictReader(f):
            gpu = find_gpu("A100-SXM4-80GB" if r["GPU"] == "a100_80gb" else "A100-SXM4-40GB")
            assert gpu is not None
            n = int(r["# GPUs"])
            rows.append(
                Row(
                    source="mosaic",
                    model=f"mpt-{r['Model']}",
                    gpu=gpu,
                    num_gpus=n,
                    nodes=max(1, n // 8),
                    precision=Precision.BF16,
                    batch=int(r["MicroBatchSize"]),
                    seq_len=int(r["SeqLen (T)"]),
                    throughput=float(r["Throughput (T/s)"]),
                    activation_checkpointing=r["Activation Checkpointing"] == "True",
                    sharding=Sharding.ZERO3,
                    grad_accum=int(r["GradAccum"]),
                    inter_node_gbps=1600.0,
                )
            )
    return rows


def _nnls_shifted(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """min sum(w^2 (x @ beta - y)^2) with beta >= 0, by enumerating active sets (few columns)."""
    k = x.shape[1]
    best: tuple[float, np.ndarray] = (math.inf, np.zeros(k))
    xw = x * w[:, None]
    yw = y * w
    for mask in itertools.product((False, True), repeat=k):
        cols = [i for i in range(k) if mask[i]]
        beta = np.zeros(k)
        if cols:
            sol, *_ = np.linalg.lstsq(xw[:, cols], yw, rcond=None)
            if (sol < 0).any():
                continue
            beta[cols] = sol
        loss = float(((xw @ beta - yw) ** 2).sum())
        if loss < best[0]:
            best = (loss, beta)
    return best[1]


@dataclass(frozen=True)
class Method:
    """The shared hyper-parameters of the non-LLM time model (chosen by cross-validation)."""

    peak_exponent: float = 0.0
    bandwidth_exponent: float = 0.0
    per_sample_term: bool = False
    pool_precisions: bool = False  # one coefficient set per model for AMP and TF32 rows
    host_ridge: float = 0.0  # ridge toward 0 on the GPU-independent (host) times
    # the link-only scaling of the current stack (ngc-24, nvidia-dle) is fitted on "lambda"
    # (median APE over Lambda's multi-GPU rows, round 3) or "dle" (NVIDIA's measured 1 -> n GPU
    # ratios, a stack whose all-reduce is link-bound)
    link_fit_on: str = "lambda"
    # compute and memory times combine as (t_c^p + t_m^p)^(1/p): 1 = sum, large = max
    roofline_p: float = 1.0
    # round 5: an SM-side memory term, traffic / (SM count x clock), fitted per model (e >= 0)
    sm_term: bool = False
    # round 5: memory rate min(bandwidth, cap x SM count x clock), cap in bytes per SM-cycle
    sm_cap_bytes_per_cycle: float = 0.0
    # round 5: one SM-side coefficient e shared by all models (chosen by cross-validation)
    sm_e_shared: float = 0.0
    # round 7: a model whose AMP rows gain < AMP_GAIN_MIN over its FP32 rows (median over the
    # GPUs that have both) is timed at fp32 (TF32) rates in both precisions
    amp_check: bool = False
    # round 9: the non-tensor work at 128 FLOP per SM-cycle (the SMs' issue rate) instead of
    # the datasheet fp32 peak, which counts the doubled FP32 lanes of GA10x/Ada/Hopper/Blackwell
    cuda_flops_per_sm_cycle: float = 0.0
    # round 9: NGC 22.09's per-step multi-GPU sync as a share of the 1-GPU step x log2(GPUs)
    # (StackCoeffs.sync_relative) instead of seconds fitted on GPUs slower than Hopper
    sync_relative: bool = False


# The variants compared in docs/benchmarks.md; CHOSEN is what fit_estimator.py writes.
VARIANTS: dict[str, Method] = {
    "sum": Method(),
    "pooled+host": Method(per_sample_term=True, pool_precisions=True),
    "gpu-scaled": Method(peak_exponent=0.1, bandwidth_exponent=0.1),
    # host times shrunk toward 0 (ridge 0.2, chosen among 0.05 / 0.2 / 1 by leave-one-GPU-out
    # and leave-one-architecture-out on the reference data)
    "pooled+host+ridge": Method(per_sample_term=True, pool_precisions=True, host_ridge=0.2),
    "pooled+host+dle-link": Method(per_sample_term=True, pool_precisions=True, link_fit_on="dle"),
    "pooled+host+p1.5": Method(per_sample_term=True, pool_precisions=True, roofline_p=1.5),
    "pooled+host+p2": Method(per_sample_term=True, pool_precisions=True, roofline_p=2.0),
    "pooled+host+p4": Method(per_sample_term=True, pool_precisions=True, roofline_p=4.0),
    # round 5: the SM-side rate (SM count x boost clock) of memory-bound kernels
    "pooled+host+sm": Method(per_sample_term=True, pool_precisions=True, sm_term=True),
    # round 7: AMP that never engages (AMP / FP32 ~ 1 on every reference GPU) timed as FP32
    "pooled+host+sm+amp": Method(
        per_sample_term=True, pool_precisions=True, sm_term=True, amp_check=True
    ),
    # round 9: the SMs' issue rate for non-tensor work; step-relative sync of NGC 22.09
    "pooled+host+sm+amp+issue": Method(
        per_sample_term=True,
        pool_precisions=True,
        sm_term=True,
        amp_check=True,
        cuda_flops_per_sm_cycle=128.0,
    ),
    "pooled+host+sm+amp+issue+relsync": Method(
        per_sample_term=True,
        pool_precisions=True,
        sm_term=True,
        amp_check=True,
        cuda_flops_per_sm_cycle=128.0,
        sync_relative=True,
    ),
    **{
        f"pooled+host+smcap{cap:g}": Method(
            per_sample_term=True, pool_precisions=True, sm_cap_bytes_per_cycle=cap
        )
        for cap in (6.0, 8.0, 10.0, 12.0)
    },
    **{
        f"pooled+host+sm-shared{e:g}": Method(
            per_sample_term=True, pool_precisions=True, sm_e_shared=e
        )
        for e in (0.1, 0.3)
    },
    "pooled+host+sm+amp+issue+relsync+ratio-link": Method(
        per_sample_term=True,
        pool_precisions=True,
        sm_term=True,
        amp_check=True,
        cuda_flops_per_sm_cycle=128.0,
        sync_relative=True,
        link_fit_on="lambda-ratio",
    ),
}
CHOSEN = "pooled+host+sm+amp+issue+relsync+ratio-link"


AMP_GAIN_MIN = 1.2
"""Below this median AMP / FP32 throughput ratio a model's AMP is taken not to engage fp16
tensor cores. Reference data: WaveGlow 1.00, Tacotron 2 1.01; every other model >= 1.5."""


def amp_gain(rows: Sequence[Row]) -> float | None:
    """Median over GPUs of (best AMP throughput / best FP32 throughput) on one GPU, from one
    model's single-GPU rows; None when no GPU has both."""
    best: dict[tuple[str, bool], float] = {}
    for r in rows:
        if r.num_gpus != 1:
            continue
        key = (r.gpu.name, r.precision.is_half)
        best[key] = max(best.get(key, 0.0), r.throughput)
    ratios = [
        best[(g, True)] / best[(g, False)]
        for g, half in best
        if half and (g, False) in best and best[(g, False)] > 0
    ]
    return float(np.median(ratios)) if ratios else None


def fit_family(
    rows: Sequence[Row], method: Method = Method(), *, half_at_full_rate: bool = False
) -> FamilyCoeffs:
    """a, b >= 1 and d, c_s, c_sample_s >= 0 minimising the squared relative error of step time.

    With a p-norm roofline the model is not linear in (a, b, d); but (A^p + B^p)^(1/p) is
    homogeneous of degree 1, so it equals gA A + gB B with gA = (A/t)^(p-1), gB = (B/t)^(p-1)
    (Euler): fixing the g's at the previous solution gives a linear fit, iterated to a fixed
    point (p = 1: g = 1, one pass)."""
    feats = []
    for r in rows:
        m = get_model(r.model)
        precision = Precision.FP32 if half_at_full_rate and r.precision.is_half else r.precision
        xc, xm, xv, xs = family_features(
            m,
            r.gpu,
            precision,
            r.batch,
            r.seq_len,
            peak_exponent=method.peak_exponent,
            bandwidth_exponent=method.bandwidth_exponent,
            sm_cap_bytes_per_cycle=method.sm_cap_bytes_per_cycle,
            cuda_flops_per_sm_cycle=method.cuda_flops_per_sm_cycle,
        )
        t = r.batch * r.num_gpus / (r.throughput / m.units_per_sample(r.seq_len))
        feats.append((xc, xm, xv, t, float(r.batch), xs))
    p = method.roofline_p
    coeffs = FamilyCoeffs(a=1.0, b=1.0, c_s=0.0)
    for _ in range(1 if p == 1.0 else 12):
        coeffs = _fit_family_once(feats, method, coeffs, len(rows))
    return replace(coeffs, half_at_full_rate=half_at_full_rate)


def _fit_family_once(
    feats: Sequence[tuple[float, float, float, float, float, float]],
    method: Method,
    prev: FamilyCoeffs,
    n_rows: int,
) -> FamilyCoeffs:
    p = method.roofline_p
    xs, ys, ws = [], [], []
    for xc, xm, xv, t, batch, x_sm in feats:
        ga = gb = 1.0
        if p != 1.0:
            big_a, big_b = prev.a * xc + prev.d * xv, prev.b * xm + prev.e * x_sm
            tr = (big_a**p + big_b**p) ** (1.0 / p)
            ga, gb = (big_a / tr) ** (p - 1.0), (big_b / tr) ** (p - 1.0)
        xs.append(
            [ga * xc, gb * xm, 1.0, ga * xv]
            + ([batch] if method.per_sample_term else [])
            + ([gb * x_sm] if method.sm_term else [])
        )
        ys.append(t - ga * xc - gb * xm - gb * method.sm_e_shared * x_sm)
        ws.append(1.0 / t)
    if method.host_ridge > 0:
        # pseudo-rows pulling the GPU-independent times toward 0, each in units of the median
        # step: host time is only credited where the GPUs' spread demands it
        t_med = float(np.median([f[3] for f in feats]))
        b_med = float(np.median([f[4] for f in feats]))
        n_cols = len(xs[0])
        host_cols = [2] + ([4] if method.per_sample_term else [])
        for col in host_cols:
            row = [0.0] * n_cols
            row[col] = b_med if col == 4 else 1.0
            xs.append(row)
            ys.append(0.0)
            ws.append(method.host_ridge * n_rows**0.5 / t_med)
    beta = _nnls_shifted(np.array(xs), np.array(ys), np.array(ws))
    return FamilyCoeffs(
        a=1.0 + beta[0],
        b=1.0 + beta[1],
        c_s=float(beta[2]),
        d=float(beta[3]),
        c_sample_s=float(beta[4]) if method.per_sample_term else 0.0,
        e=float(beta[-1]) if method.sm_term else method.sm_e_shared,
    )


def fit_llm(rows: Sequence[Row], k: Constants) -> LlmCoeffs:
    """Fit on the reference GPU's features times the transformer transfer ratio of each row's
    GPU, exactly as the estimator predicts."""
    ref = get_gpu(LLM_REFERENCE_GPU)
    xs, ys, ws = [], [], []
    for r in rows:
        m = get_model(r.model)
        assert r.seq_len is not None
        ratio = transformer_speed_ratio(r.gpu, r.precision, k, ref)
        feats = llm_training_features(
            m,
            ref,
            r.precision,
            Task.TRAINING,
            batch=r.batch,
            seq_len=r.seq_len,
            checkpointing=r.activation_checkpointing,
        )
        x_mm, x_mem = feats[0] * ratio, feats[2] * ratio
        # attention moves between GPUs as the estimator moves it (`attention_speed_ratio`)
        x_at = feats[1] * attention_speed_ratio(r.gpu, ref, r.precision, ratio)
        t = r.batch * r.seq_len * r.num_gpus / r.throughput
        xs.append([x_mm, x_at, x_mem, ratio])
        ys.append(t - x_mm - x_at)
        ws.append(1.0 / t)
    beta = _nnls_shifted(np.array(xs), np.array(ys), np.array(ws))
    return LlmCoeffs(
        a_gemm=1.0 + beta[0], a_attn=1.0 + beta[1], k_mem=float(beta[2]), c_s=float(beta[3])
    )


DEFAULT_COMM = CommCoeffs(
    nvlink_efficiency=0.8,
    pcie_efficiency=0.7,
    no_p2p_factor=0.5,
    overlap=0.5,
    sync_per_doubling=1.0,
    default_inter_node_gbps=100.0,
    inter_node_efficiency=0.8,
)


def predict(row: Row, k: Constants) -> float:
    return estimate(
        row.workload(),
        row.gpu,
        row.num_gpus,
        nodes=row.nodes,
        inter_node_gbps=row.inter_node_gbps,
        constants=k,
    ).throughput


def ape(pred: float, meas: float) -> float:
    return abs(pred - meas) / meas


def _scaling_rows(lambda_rows: Sequence[Row]) -> list[tuple[Row, float, float]]:
    """Multi-GPU rows with a 1-GPU row of the same GPU, model and precision:
    (row, measured n-GPU step s, 1-GPU step s at the row's batch). Scaling is fitted on the
    measured ratio, so single-GPU model error does not leak into the communication constants."""
    per_sample: dict[tuple[str, str, Precision], float] = {}
    for r in lambda_rows:
        if r.num_gpus == 1:
            ups = get_model(r.model).units_per_sample(r.seq_len)
            per_sample[(r.gpu.name, r.model, r.precision)] = 1.0 / (r.throughput / ups)
    out = []
    for r in lambda_rows:
        t1s = per_sample.get((r.gpu.name, r.model, r.precision))
        if r.num_gpus > 1 and t1s is not None:
            ups = get_model(r.model).units_per_sample(r.seq_len)
            out.append((r, r.batch * r.num_gpus / (r.throughput / ups), t1s * r.batch))
    return out


def _allreduce_s(r: Row, comm: CommCoeffs) -> float:
    """The gradient all-reduce seconds of one step of `r`, as `estimate()` computes them."""
    grad = get_model(r.model).num_params * (2.0 if r.precision.is_half else 4.0)
    return ddp_allreduce_time_s(
        grad, r.gpu, r.num_gpus, 1, comm, inter_node_gbps=None, interconnect=None
    )


SCALING_RIDGE = 2.0  # weight of the prior comm_scale = pooled, in rows' worth


def _sync_x(r: Row, t1: float, relative: bool) -> float:
    """What the fitted sync value multiplies: 1 s, or the 1-GPU step x log2(GPUs)."""
    return t1 * math.log2(r.num_gpus) if relative else 1.0


def fit_model_scaling(
    data: Sequence[tuple[Row, float, float]], comm: CommCoeffs, *, relative: bool = False
) -> tuple[dict[str, tuple[float, float]], float]:
    """Per model (comm_scale, sync_s) >= 0 minimising the squared relative error of the n-GPU
    step time, t_n = t_1 + comm_scale x allreduce_s + sync x (1 s, or t_1 x log2 n when
    `relative`); comm_scale is pulled toward the
    median of the per-model values (ridge, SCALING_RIDGE rows' worth). Returns the per-model
    values (by family key) and that pooled value (for models without multi-GPU rows)."""
    by_key: dict[str, list[tuple[float, float, float, float]]] = {}
    for r, tn, t1 in data:
        by_key.setdefault(get_model(r.model).key, []).append(
            (_allreduce_s(r, comm), tn, t1, _sync_x(r, t1, relative))
        )

    def solve(
        rows: list[tuple[float, float, float, float]], prior: float | None
    ) -> tuple[float, float]:
        x = [[xa, xs] for xa, _, _, xs in rows]
        y = [tn - t1 for _, tn, t1, _ in rows]
        w = [1.0 / tn for _, tn, _, _ in rows]
        if prior is not None:
            scale = float(np.median([xa / tn for xa, tn, _, _ in rows])) or 1e-9
            x.append([1.0, 0.0])
            y.append(prior)
            w.append(SCALING_RIDGE**0.5 * scale)
        beta = _nnls_shifted(np.array(x), np.array(y), np.array(w))
        return float(beta[0]), float(beta[1])

    raw = {key: solve(rows, None)[0] for key, rows in by_key.items()}
    pooled = float(np.median(list(raw.values()))) if raw else 1.0
    return {key: solve(rows, pooled) for key, rows in by_key.items()}, pooled


def fit_comm(
    lambda_rows: Sequence[Row], k: Constants, *, relative: bool = False
) -> tuple[CommCoeffs, dict[str, tuple[float, float]], float]:
    """Shared link constants by grid search (minimum mean APE of the n-GPU throughput given the
    measured 1-GPU one), each point refitting the per-model scaling terms. NVLink efficiency stays
    at the measured nccl-tests share (RESEARCH §6)."""
    data = _scaling_rows(lambda_rows)
    if not data:
        return k.comm, {}, 1.0
    base = replace(k.comm, overlap=0.0, sync_per_doubling=1.0)
    best: tuple[float, CommCoeffs, dict[str, tuple[float, float]], float] | None = None
    for cap, pcie, nop2p in itertools.product(
        (0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 25.0),
        (0.3, 0.5, 0.7, 0.8),
        (0.2, 0.5, 1.0),
    ):
        comm = replace(base, ddp_bus_gbps_cap=cap, pcie_efficiency=pcie, no_p2p_factor=nop2p)
        per_model, pooled = fit_model_scaling(data, comm, relative=relative)
        errs = []
        for r, tn, t1 in data:
            s, c = per_model[get_model(r.model).key]
            t_pred = t1 + s * _allreduce_s(r, comm) + c * _sync_x(r, t1, relative)
            errs.append(abs(tn / t_pred - 1.0))
        loss = float(np.mean(errs))
        if best is None or loss < best[0] - 1e-12:
            best = (loss, comm, per_model, pooled)
    assert best is not None
    _, comm, per_model, pooled = best
    return comm, per_model, pooled


# the free constants of the link-only scaling model and the values searched (coordinate descent)
LINK_GRID: dict[str, list[float]] = {
    "overlap": [i / 10 for i in range(11)],
    "pcie_efficiency": [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9],
    "no_p2p_factor": [0.1, 0.2, 0.3, 0.5, 0.7, 1.0],
    "sync_per_doubling": [0.90, 0.92, 0.94, 0.96, 0.97, 0.98, 0.99, 1.0],
}


def fit_comm_link(multi: Sequence[Row], k: Constants) -> CommCoeffs:
    """Link-only scaling (the bundled default): coordinate search over the four free
    communication constants (minimum median APE over the multi-GPU rows, so the reference data's
    poorly scaling NGC 22.09 rows do not decide them). NVLink efficiency stays at the measured
    nccl-tests share (RESEARCH §6)."""
    if not multi:
        return k.comm

    def loss(c: CommCoeffs) -> float:
        kk = replace(k, comm=c)
        # median: a few rows scale absurdly (tacotron2 at 0.09 per GPU on 4 GPUs) and would
        # otherwise decide the constants
        return float(np.median([ape(predict(r, kk), r.throughput) for r in multi]))

    return _grid_descent(k.comm, LINK_GRID, loss)


def _grid_descent(
    comm: CommCoeffs, grid: dict[str, Sequence[float]], loss: Callable[[CommCoeffs], float]
) -> CommCoeffs:
    """Two passes of coordinate descent over `grid`, one field at a time, keeping improvements."""
    best = loss(comm)
    for _ in range(2):
        for name, values in grid.items():
            for v in values:
                cand = replace(comm, **{name: v})
                val = loss(cand)
                if val < best - 1e-9:
                    best, comm = val, cand
    return comm


def precision_class(p: Precision) -> str:
    return "half" if p.is_half else "full"


def fit_all(
    lambda_rows: Sequence[Row],
    mosaic_rows: Sequence[Row],
    dle_rows: Sequence[Row] = (),
    provenance: dict[str, Any] | None = None,
    method: Method = Method(),
    fit_communication: bool = True,
) -> Constants:
    """Fit every constant on the given rows (single-GPU rows for the roofline terms)."""
    single = [r for r in lambda_rows if r.num_gpus == 1]
    families: dict[str, dict[str, FamilyCoeffs]] = {}
    for key in sorted({get_model(r.model).key for r in single}):
        mine = [r for r in single if get_model(r.model).key == key]
        gain = amp_gain(mine) if method.amp_check else None
        flat = gain is not None and gain < AMP_GAIN_MIN
        for cls in ("half", "full"):
            sub = [r for r in mine if method.pool_precisions or precision_class(r.precision) == cls]
            if len(sub) >= 2:
                families.setdefault(key, {})[cls] = fit_family(sub, method, half_at_full_rate=flat)
    default = {
        cls: fit_family([r for r in single if precision_class(r.precision) == cls], method)
        for cls in ("half", "full")
    }
    k0 = Constants(
        families=families,
        default_family=default,
        llm=LlmCoeffs(a_gemm=1.25, a_attn=2.0, k_mem=1.0, c_s=0.0),
        comm=DEFAULT_COMM,
        decode_bw_efficiency=0.8,
        peak_exponent=method.peak_exponent,
        bandwidth_exponent=method.bandwidth_exponent,
        roofline_p=method.roofline_p,
        sm_cap_bytes_per_cycle=method.sm_cap_bytes_per_cycle,
        cuda_flops_per_sm_cycle=method.cuda_flops_per_sm_cycle,
    )
    llm = (
        fit_llm(mosaic_rows, k0)
        if mosaic_rows
        else LlmCoeffs(a_gemm=1.25, a_attn=2.0, k_mem=1.0, c_s=0.0)
    )
    k = Constants(
        families=families,
        default_family=default,
        llm=llm,
        comm=DEFAULT_COMM,
        decode_bw_efficiency=0.8,
        provenance=provenance or {},
        peak_exponent=method.peak_exponent,
        bandwidth_exponent=method.bandwidth_exponent,
        roofline_p=method.roofline_p,
        sm_cap_bytes_per_cycle=method.sm_cap_bytes_per_cycle,
        cuda_flops_per_sm_cycle=method.cuda_flops_per_sm_cycle,
    )
    if fit_communication:
        k = fit_stacks(lambda_rows, dle_rows, k, method)
    return k


def fit_stacks(
    lambda_rows: Sequence[Row], dle_rows: Sequence[Row], k: Constants, method: Method
) -> Constants:
    """The per-stack constants: NGC 22.09's per-model scaling (fitted on Lambda's multi-GPU rows,
    all of that stack), the link-only model of the current stacks, NVIDIA DLE's speed factors."""
    if method.link_fit_on == "lambda-ratio":
        link = fit_comm_link_ratios(_scaling_rows(lambda_rows), k)
    elif method.link_fit_on == "dle" and any(r.num_gpus > 1 for r in dle_rows):
        link = fit_comm_scaling(_scaling_rows(dle_rows), k)
    else:
        link = fit_comm_link([r for r in lambda_rows if r.num_gpus > 1], k)
    old_comm, per_model, pooled = fit_comm(lambda_rows, k, relative=method.sync_relative)
    stacks = {
        Stack.NGC_22_09.value: StackCoeffs(
            description=Stack.NGC_22_09.description,
            comm=old_comm,
            scaling=per_model,
            default_scaling=(pooled, 0.0),
            sync_relative=method.sync_relative,
        ),
        Stack.NGC_24.value: StackCoeffs(description=Stack.NGC_24.description, comm=link),
    }
    k = replace(k, comm=link, stacks=stacks)
    speed = fit_stack(dle_rows, k) if dle_rows else {}
    stacks[Stack.NVIDIA_DLE.value] = StackCoeffs(
        description=Stack.NVIDIA_DLE.description, comm=link, speed=speed
    )
    return replace(k, stacks=stacks)


def _ratio_errors(
    data: Sequence[tuple[Row, float, float]], k: Constants, comm: CommCoeffs
) -> list[float]:
    """Relative errors of the n-GPU step predicted as the measured 1-GPU step over the predicted
    scaling efficiency of the link-only model (`comm`, default stack): single-GPU model error
    does not enter."""
    kk = replace(k, comm=comm, stacks={})
    errs = []
    for r, tn, t1 in data:
        eff = estimate(
            replace(r, stack=Stack.NGC_24).workload(),
            r.gpu,
            r.num_gpus,
            nodes=r.nodes,
            inter_node_gbps=r.inter_node_gbps,
            constants=kk,
        ).scaling_efficiency
        errs.append(abs(t1 / eff / tn - 1.0))
    return errs


def fit_comm_link_ratios(data: Sequence[tuple[Row, float, float]], k: Constants) -> CommCoeffs:
    """Link-only constants fitted as `fit_comm_link` (same grid, median loss) but on measured
    1 -> n GPU ratios (`_ratio_errors`), so single-GPU model error does not leak into the link."""
    if not data:
        return k.comm
    return _grid_descent(k.comm, LINK_GRID, lambda c: float(np.median(_ratio_errors(data, k, c))))


def fit_comm_scaling(data: Sequence[tuple[Row, float, float]], k: Constants) -> CommCoeffs:
    """Link-only constants (overlap, sync per doubling) from measured 1 -> n GPU ratios
    (`_ratio_errors`, minimum mean APE), so the single-GPU speed of the stack does not enter."""
    grid = {key: LINK_GRID[key] for key in ("overlap", "sync_per_doubling")}
    return _grid_descent(k.comm, grid, lambda c: float(np.mean(_ratio_errors(data, k, c))))


def fit_stack(dle_rows: Iterable[Row], k: Constants) -> dict[str, float]:
    """Median measured/predicted single-GPU throughput of NVIDIA's tuned stack per model key,
    predicted with the NGC speed (factor 1)."""
    ratios: dict[str, list[float]] = {}
    for r in dle_rows:
        if r.num_gpus == 1:
            ratios.setdefault(get_model(r.model).key, []).append(
                r.throughput / predict(replace(r, stack=Stack.NGC_24), k)
            )
    return {key: float(np.median(v)) for key, v in sorted(ratios.items())}


def constants_to_json(k: Constants) -> dict[str, Any]:
    def fc(c: FamilyCoeffs) -> dict[str, float | bool]:
        return {
            "a": round(c.a, 6),
            "b": round(c.b, 6),
            "c_s": round(c.c_s, 8),
            "d": round(c.d, 6),
            "c_sample_s": round(c.c_sample_s, 10),
            "comm_scale": round(c.comm_scale, 4),
            "sync_s": round(c.sync_s, 6),
            "e": round(c.e, 6),
            **({"half_at_full_rate": True} if c.half_at_full_rate else {}),
        }

    return {
        "provenance": k.provenance,
        "families": {key: {cls: fc(c) for cls, c in v.items()} for key, v in k.families.items()},
        "default_family": {cls: fc(c) for cls, c in k.default_family.items()},
        "llm": {f: round(getattr(k.llm, f), 8) for f in ("a_gemm", "a_attn", "k_mem", "c_s")},
        "comm": _comm_json(k.comm),
        "decode_bw_efficiency": k.decode_bw_efficiency,
        "gpu_scaling": {
            "peak_exponent": k.peak_exponent,
            "bandwidth_exponent": k.bandwidth_exponent,
        },
        "roofline_p": k.roofline_p,
        "sm_cap_bytes_per_cycle": k.sm_cap_bytes_per_cycle,
        "cuda_flops_per_sm_cycle": k.cuda_flops_per_sm_cycle,
        "stacks": {name: _stack_json(sk) for name, sk in k.stacks.items()},
    }


def _stack_json(sk: StackCoeffs) -> dict[str, Any]:
    sync_key = "sync_share_per_doubling" if sk.sync_relative else "sync_s"
    return {
        "description": sk.description,
        "comm": _comm_json(sk.comm),
        "scaling": {
            key: {"comm_scale": round(cs, 4), sync_key: round(sy, 6)}
            for key, (cs, sy) in sorted(sk.scaling.items())
        },
        "default_scaling": {
            "comm_scale": round(sk.default_scaling[0], 4),
            sync_key: round(sk.default_scaling[1], 6),
        },
        "speed": {key: round(v, 4) for key, v in sorted(sk.speed.items())},
        **({"sync_relative": True} if sk.sync_relative else {}),
    }


def _comm_json(c: CommCoeffs) -> dict[str, float]:
    """Every field, in declaration order (what `constants.parse_constants` reads back)."""
    return asdict(c)
