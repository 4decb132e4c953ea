"""Can the reference LLM rows tell full from causal attention counting? (round 11, issue 12)

    PYTHONPATH=src python benchmarks/compare_llm_attention_count.py --data-dir DIR

DIR is the reference data's throughput folder (MosaicML's MPT rows on A100, seq 512-65536).
With its own attention coefficient (`a_attn`, the bundled model) the LLM time model is linear in
the attention FLOPs, so halving them (causal counting) doubles the fitted `a_attn` and leaves
every prediction as it was: the count is a re-parameterisation there and the data cannot prefer
either. They can only tell the counts apart when attention runs at the matmuls' efficiency
(`a_attn` tied to `a_gemm`): this script cross-validates the three variants, leave-one-model-
size-out and in-sample, on the same rows and with the same non-LLM constants."""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from estimator_fit import (
    CHOSEN,
    VARIANTS,
    Row,
    _nnls_shifted,
    ape,
    fit_all,
    fit_llm,
    load_lambda,
    load_mosaic,
    predict,
)

from gpurent.catalog import get_gpu
from gpurent.estimate.constants import Constants, LlmCoeffs
from gpurent.estimate.estimator import LLM_REFERENCE_GPU, transformer_speed_ratio
from gpurent.estimate.perf import llm_training_features
from gpurent.workload.models import get_model
from gpurent.workload.spec import Task


def fit_tied(rows: Sequence[Row], k: Constants, attn_scale: float) -> LlmCoeffs:
    """`fit_llm` with one efficiency for matmuls and attention; `attn_scale` times the causal
    attention FLOPs are counted (1: causal, 2: the full square)."""
    ref = get_gpu(LLM_REFERENCE_GPU)
    xs, ys, ws = [], [], []
    for r in rows:
        assert r.seq_len is not None
        ratio = transformer_speed_ratio(r.gpu, r.precision, k, ref)
        feats = llm_training_features(
            get_model(r.model),
            ref,
            r.precision,
            Task.TRAINING,
            batch=r.batch,
            seq_len=r.seq_len,
            checkpointing=r.activation_checkpointing,
        )
        x_mm, x_at, x_mem = (f * ratio for f in feats[:3])
        x_flops = x_mm + attn_scale * x_at
        t = r.batch * r.seq_len * r.num_gpus / r.throughput
        xs.append([x_flops, x_mem, ratio])
        ys.append(t - x_flops)
        ws.append(1.0 / t)
    beta = _nnls_shifted(np.array(xs), np.array(ys), np.array(ws))
    a = 1.0 + float(beta[0])
    return LlmCoeffs(a_gemm=a, a_attn=a * attn_scale, k_mem=float(beta[1]), c_s=float(beta[2]))


Fitter = Callable[[Sequence[Row], Constants], LlmCoeffs]
FITTERS: dict[str, Fitter] = {
    "own a_attn (bundled; count-invariant)": fit_llm,
    "a_attn = a_gemm, causal count": lambda rows, k: fit_tied(rows, k, 1.0),
    "a_attn = a_gemm, full count": lambda rows, k: fit_tied(rows, k, 2.0),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data-dir", type=Path, required=True)
    args = ap.parse_args()
    lam, mos = load_lambda(args.data_dir), load_mosaic(args.data_dir)
    base = fit_all(lam, mos, method=VARIANTS[CHOSEN])
    long_rows = [r for r in mos if (r.seq_len or 0) >= 8192]
    print(f"MosaicML rows: {len(mos)} (seq >= 8192: {len(long_rows)})\n")
    print("| variant | leave-one-model-size-out | seq >= 8192 | in-sample | fitted |")
    print("|---|---|---|---|---|")
    for label, fitter in FITTERS.items():
        cv: list[float] = []
        cv_long: list[float] = []
        for m in sorted({r.model for r in mos}):
            k = replace(base, llm=fitter([r for r in mos if r.model != m], base))
            for r in mos:
                if r.model == m:
                    e = ape(predict(r, k), r.throughput)
                    cv.append(e)
                    if (r.seq_len or 0) >= 8192:
                        cv_long.append(e)
        c = fitter(mos, base)
        k = replace(base, llm=c)
        ins = [ape(predict(r, k), r.throughput) for r in mos]
        print(
            f"| {label} | {100 * statistics.fmean(cv):.1f}% | "
            f"{100 * statistics.fmean(cv_long):.1f}% | {100 * statistics.fmean(ins):.1f}% | "
            f"a_gemm {c.a_gemm:.3f}, a_attn {c.a_attn:.3f} |"
        )


if __name__ == "__main__":
    main()
