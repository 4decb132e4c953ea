"""`gpurent estimate --serve`: the serving estimate of one model on one GPU layout (parse,
call `estimate.serving.estimate_serving`, render with `report.serving_report`)."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from gpurent.cli.common import console, fail, print_json
from gpurent.errors import InputError
from gpurent.inputs import files

EXIT_INFEASIBLE = 3  # as `gpurent plan`: the request cannot be met (the estimate is printed)
SERVE_HELP = (
    "Estimate serving instead of a job: a serving preset (llama3-8b-chat, llama3-70b-chat), a "
    "TOML/YAML file with a [serve] table, or a zoo model; --set KEY=VALUE overrides its "
    "fields; --gpus / --tp give the replicas (gpus / tp) of tp GPUs each. See docs/serving.md."
)
SET_HELP = (
    "A serving field, KEY=VALUE (repeatable): engine, weights, kv_cache, request_rate, "
    "concurrency, prompt_tokens (512, 'uniform 128-2048', 'histogram FILE'), output_tokens, "
    "ttft_p50_ms, ttft_p99_ms, tpot_ms, e2e_p99_s, prefix_cache_hit_rate, speculative_tokens, "
    "acceptance_rate, tokens_per_step, max_num_seqs, chunk_tokens, gpu_memory_utilization."
)
SERVE_EXAMPLES = """
  gpurent estimate --serve llama3-8b-chat --gpu H100

  gpurent estimate --serve llama3-8b --gpu L4 --set weights=awq-int4 \\
      --set request_rate=5 --set ttft_p99_ms=800 --json

  gpurent estimate --serve llama3-70b-chat --gpu H100 --gpus 8 --tp 4 --html serve.html
"""


def serve_estimate(
    serve: str,
    *,
    gpu: str | None,
    gpus: int,
    tensor_parallel: int | None,
    overrides: list[str],
    as_json: bool,
    html: Path | None,
) -> None:
    """Resolve the serving workload and layout, estimate, render; exit 3 (after the estimate)
    when the model does not fit or not even a single request meets the SLOs."""
    from gpurent.catalog import get_gpu
    from gpurent.estimate.serving import estimate_serving
    from gpurent.report import serving_report as rep
    from gpurent.workload.serving import parse_overrides, serving_from_mapping
    from gpurent.workload.serving_named import named_serving

    if gpu is None:
        raise InputError("--gpu is required (e.g. --gpu H100); see `gpurent gpus`")
    wl = named_serving(serve)
    if overrides:
        wl = serving_from_mapping(parse_overrides(overrides), "--set", base=wl)
    tp = tensor_parallel if tensor_parallel is not None else gpus
    if gpus % tp:
        raise InputError(f"--gpus {gpus} is not a multiple of --tp {tp} (replicas = gpus / tp)")
    est = estimate_serving(wl, get_gpu(gpu), tp, replicas=gpus // tp)
    if html is not None:
        files.write_text(html, rep.serving_html(est))
    if as_json:
        print_json(rep.serving_json(est))
    else:
        console.print(rep.title(est), style="bold", markup=False, highlight=False)
        for line in rep.summary_lines(est):
            console.print(line, markup=False, highlight=False)
        if est.curve.rows:
            table = Table(
                title="one replica, closed loop at rising clients",
                caption=rep.interval_caption(est),
            )
            for h in rep.CURVE_HEADERS:
                table.add_column(h, justify="right")
            for row in rep.curve_rows(est):
                table.add_row(*row)
            console.print(table)
        if html is not None:
            console.print(f"wrote {files.shown(html)}", markup=False, highlight=False)
    if not est.load.met:
        raise fail(rep.unmet_line(est, wl, gpus, tp), EXIT_INFEASIBLE)
