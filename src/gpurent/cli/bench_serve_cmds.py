"""`gpurent bench serve --url URL`: load a live OpenAI-compatible endpoint and judge it.

Parse and validate the flags, call `bench.serve_load.run_serve` under a progress bar, judge,
render. aiohttp, rich.progress and the bench modules are imported inside the command.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpurent.cli.common import (
    checked,
    cli_errors,
    console,
    err_console,
    print_json,
    to_jsonable,
)
from gpurent.errors import InputError, require
from gpurent.inputs import values as v

if TYPE_CHECKING:
    from gpurent.bench.serve_config import ServeConfig
    from gpurent.bench.serve_result import ServeResult
    from gpurent.bench.serve_verdict import CurvePoint

EXAMPLES = (
    "Examples:\n\n"
    "  gpurent bench serve --url http://127.0.0.1:8000 --concurrency 1,4,16,64\n\n"
    "  gpurent bench serve --url http://host:8000/v1 --endpoint chat --rate 2,5,10 --json\n\n"
    "  gpurent bench serve --url URL --expect-ttft-ms 200 --expect-tok-s 2500\n\n"
    "  gpurent bench serve --url URL --gpu H100-SXM --engine vllm --calibrate\n\n"
    "  python -m gpurent.bench.serve_standin --port 8000   # a local stand-in for a dry run"
)


@cli_errors
@checked(
    max_requests=v.bounded(v.positive_int, most=10_000_000),
    duration=v.bounded(v.positive, most=v.MAX_SECONDS),
    timeout=v.bounded(v.positive, least=0.001, most=v.MAX_SECONDS),
    stall_timeout=v.bounded(v.positive, least=0.001, most=v.MAX_SECONDS),
    seed=v.bounded(v.non_negative_int, most=2**32),
    saturation_gain=v.percent,
    max_inflight=v.bounded(v.positive_int, most=100_000),
    expect_ttft_ms=v.positive,
    expect_tok_s=v.positive,
    min_ratio=v.bounded(v.positive, most=1.0),
)
def serve_cmd(
    *,
    url: Annotated[
        str, typer.Option("--url", help="The endpoint: http://HOST:PORT[/v1[/completions]].")
    ],
    endpoint: Annotated[
        str, typer.Option("--endpoint", help="completions (/v1/completions) or chat.")
    ] = "completions",
    model: Annotated[
        str,
        typer.Option("--model", help="Model name to send (default: the first of /v1/models)."),
    ] = "",
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key",
            envvar="GPURENT_API_KEY",
            show_envvar=True,
            show_default=False,
            help="Sent as `Authorization: Bearer KEY`; never printed, logged or saved.",
        ),
    ] = None,
    concurrency: Annotated[
        str | None,
        typer.Option(
            "--concurrency",
            help="Concurrency levels, comma-separated (default 1,2,4,8,16).",
            show_default=False,
        ),
    ] = None,
    rate: Annotated[
        str | None,
        typer.Option(
            "--rate",
            help="Request rates (req/s, Poisson arrivals, seeded) instead of --concurrency.",
            show_default=False,
        ),
    ] = None,
    prompt_tokens: Annotated[
        str, typer.Option("--prompt-tokens", help="Prompt tokens: 128, or a range 64-256.")
    ] = "128",
    output_tokens: Annotated[
        str, typer.Option("--output-tokens", help="Output tokens (max_tokens): 128 or 64-256.")
    ] = "128",
    max_requests: Annotated[
        int, typer.Option("--max-requests", help="Requests per level, at most.")
    ] = 100,
    duration: Annotated[
        float, typer.Option("--duration", help="Seconds per level, at most (no new request after).")
    ] = 60.0,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds per request, at most.")
    ] = 120.0,
    stall_timeout: Annotated[
        float, typer.Option("--stall-timeout", help="A request with no byte for this long stalled.")
    ] = 30.0,
    seed: Annotated[int, typer.Option("--seed", help="Seed of prompts, lengths and arrivals.")] = 0,
    ignore_eos: Annotated[
        bool,
        typer.Option(
            "--ignore-eos/--no-ignore-eos",
            help="Ask for exactly max_tokens (vLLM/SGLang `ignore_eos`); --no-ignore-eos for "
            "servers that refuse unknown fields.",
        ),
    ] = True,
    max_inflight: Annotated[
        int, typer.Option("--max-inflight", help="With --rate: requests in flight, at most.")
    ] = 1024,
    saturation_gain: Annotated[
        float,
        typer.Option(
            "--saturation-gain",
            help="Saturation: the level after which output tok/s rises by less than this many "
            "percent while latency rises.",
        ),
    ] = 10.0,
    expect_ttft_ms: Annotated[
        float | None,
        typer.Option(
            "--expect-ttft-ms", help="Expected p50 TTFT at the lowest level.", show_default=False
        ),
    ] = None,
    expect_tok_s: Annotated[
        float | None,
        typer.Option("--expect-tok-s", help="Expected peak output tokens/s.", show_default=False),
    ] = None,
    expect: Annotated[
        Path | None,
        typer.Option(
            "--expect",
            help="A serving estimate JSON (kind gpurent.estimate.serve) to compare "
            "each level with.",
            show_default=False,
        ),
    ] = None,
    min_ratio: Annotated[
        float,
        typer.Option(
            "--min-ratio",
            help="Pass when measured/expected >= this (latencies: <= 1/this).",
        ),
    ] = 0.8,
    gpu: Annotated[
        str | None,
        typer.Option(
            "--gpu", help="The endpoint's GPU (catalog name), for --calibrate.", show_default=False
        ),
    ] = None,
    engine: Annotated[
        str | None,
        typer.Option(
            "--engine",
            help="vllm, sglang, tensorrt-llm, tgi or other, for --calibrate.",
            show_default=False,
        ),
    ] = None,
    calibrate: Annotated[
        bool,
        typer.Option(
            "--calibrate",
            help="Add each level as a serving measurement ($GPURENT_HOME/serve_calibration.csv).",
        ),
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Result JSON path (default: $GPURENT_HOME/bench/serve-TIME.json)."
        ),
    ] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    markdown_: Annotated[bool, typer.Option("--markdown", help="Print Markdown.")] = False,
) -> None:
    """Load an OpenAI-compatible endpoint at rising concurrency (or request rates), stream the
    answers, and report TTFT, inter-token latency and throughput per level, the saturation
    point and a verdict."""
    require("aiohttp", "bench")
    from gpurent.bench.serve_config import (
        ServeConfig,
        check_config,
        endpoint_url,
        parse_levels,
        parse_token_range,
    )
    from gpurent.estimate.serve_calibration import check_engine, check_gpu

    if json_ and markdown_:
        raise InputError("--json and --markdown: choose one")
    if endpoint not in ("completions", "chat"):
        raise InputError(f"--endpoint must be completions or chat, got {endpoint!r}")
    if concurrency is not None and rate is not None:
        raise InputError("--concurrency and --rate: choose one")
    if calibrate and (gpu is None or engine is None):
        raise InputError("--calibrate needs --gpu NAME and --engine NAME (the rows' keys)")
    gpu_name = check_gpu(gpu) if gpu is not None else None
    engine_name = check_engine(engine) if engine is not None else None
    mode = "rate" if rate is not None else "concurrency"
    flag = "--rate" if rate is not None else "--concurrency"
    cfg = check_config(
        ServeConfig(
            url=endpoint_url(url, "chat" if endpoint == "chat" else "completions"),
            endpoint="chat" if endpoint == "chat" else "completions",
            model=model.strip(),
            mode="rate" if mode == "rate" else "concurrency",
            levels=parse_levels(rate or concurrency or "1,2,4,8,16", mode, flag),  # type: ignore[arg-type]
            prompt_tokens=parse_token_range(prompt_tokens, "--prompt-tokens"),
            output_tokens=parse_token_range(output_tokens, "--output-tokens"),
            max_requests=max_requests,
            duration_s=duration,
            timeout_s=timeout,
            stall_timeout_s=stall_timeout,
            seed=seed,
            ignore_eos=ignore_eos,
            max_inflight=max_inflight,
            saturation_gain=saturation_gain / 100.0,
        )
    )
    curve = _read_curve(expect) if expect is not None else ()
    result = _run_with_bar(cfg, api_key or None)
    _finish(
        result,
        cfg=cfg,
        expect_ttft_ms=expect_ttft_ms,
        expect_tok_s=expect_tok_s,
        curve=curve,
        curve_source=str(expect) if expect is not None else "",
        min_ratio=min_ratio,
        gpu=gpu_name,
        engine=engine_name,
        calibrate=calibrate,
        out=out,
        mode="json" if json_ else "markdown" if markdown_ else "table",
    )


def _read_curve(path: Path) -> tuple[CurvePoint, ...]:
    from gpurent.bench.serve_verdict import parse_curve
    from gpurent.inputs import files

    text = files.read_text(path, what="serving estimate")
    return parse_curve(files.parse_json(text, files.shown(path)), files.shown(path))


def _run_with_bar(cfg: ServeConfig, api_key: str | None) -> ServeResult:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from gpurent.bench.serve_load import run_serve

    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    ) as bar:
        task = bar.add_task("bench serve", total=cfg.max_requests)

        def progress(label: str, done: int, total: int | None) -> None:
            bar.update(task, description=f"bench serve: {label}", completed=done, total=total)

        return run_serve(
            cfg,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            api_key=api_key,
            progress=progress,
        )


def _finish(
    result: ServeResult,
    *,
    cfg: ServeConfig,
    expect_ttft_ms: float | None,
    expect_tok_s: float | None,
    curve: tuple[CurvePoint, ...],
    curve_source: str,
    min_ratio: float,
    gpu: str | None,
    engine: str | None,
    calibrate: bool,
    out: Path | None,
    mode: str,
) -> None:
    """Judge, attach calibration rows, save, render; exit 130 when interrupted."""
    from dataclasses import replace

    from gpurent.bench.serve_result import calibration_rows, result_to_dict
    from gpurent.bench.serve_verdict import judge
    from gpurent.estimate.serve_calibration import add_serve_rows
    from gpurent.inputs import files
    from gpurent.report.bench_serve import markdown, tables
    from gpurent.userdata import data_home

    rows, notes = judge(
        result.levels,
        result.mode,
        expect_ttft_ms=expect_ttft_ms,
        expect_tok_s=expect_tok_s,
        curve=curve,
        curve_source=curve_source,
        min_ratio=min_ratio,
    )
    cal = (
        calibration_rows(result, gpu=gpu, engine=engine, prompt_tokens_mean=cfg.prompt_tokens.mean)
        if gpu is not None and engine is not None
        else ()
    )
    result = replace(result, verdict=rows, calibration_rows=cal, notes=(*result.notes, *notes))
    stamp = result.created_at.replace("-", "").replace(":", "").split("+")[0]
    target = out or data_home() / "bench" / f"serve-{stamp}Z.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    files.write_text(target, json.dumps(to_jsonable(result_to_dict(result)), indent=2) + "\n")
    if mode == "json":
        print_json(result_to_dict(result))
    elif mode == "markdown":
        typer.echo(markdown(result), nl=False)
    else:
        for item in tables(result, width=console.width):
            console.print(item)
    err_console.print(f"saved {target}", highlight=False)
    if calibrate:
        path = add_serve_rows(cal)
        err_console.print(f"added {len(cal)} serving measurement(s) to {path}", highlight=False)
    if result.interrupted:
        raise typer.Exit(130)
