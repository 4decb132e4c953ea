"""CLI verbs of the estimate room: `gpurent estimate`, `gpurent calibrate add|list|clear`."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from gpurent.cli.common import (
    checked,
    cli_errors,
    console,
    err_console,
    given_flags,
    print_json,
    print_json_line,
)
from gpurent.cli.serve_estimate import SERVE_EXAMPLES, SERVE_HELP, SET_HELP, serve_estimate
from gpurent.inputs import values as v
from gpurent.textsafe import clean

EXAMPLES = """
Examples:

  gpurent estimate --model resnet50 --gpu A100-SXM4-80GB --gpus 8 --precision amp --batch-size 256

  gpurent estimate --model llama3-8b --gpu H100 --gpus 8 --precision bf16 \\
      --batch-size 2 --seq-len 4096 --sharding zero3 --json

  gpurent estimate --preset llama-lora --gpu L40S

  gpurent estimate --model resnet50 --gpu H100 --gpus 8 --stack ngc-22.09

  gpurent estimate --model llama3-70b --gpu H100 --gpus 32 --nodes 4 --tp 8 --pp 4 --vp 2 \
      --grad-accum 16 --batch-size 1 --seq-len 8192 --recompute selective

  gpurent estimate --from-csv configs.csv --json
      (columns model,gpu,num_gpus,precision,batch_size and optionally nodes,
       inter_node_gbps, interconnect and every workload-file field: task, seq_len, tp, pp,
       vp, cp, sp, grad_accum, recompute, activation_checkpointing, sharding, cpu_offload,
       offload_params,
       fused_loss,
       optimizer, lora_rank, output_tokens, stack, ...; a row's nodes are estimated as given;
       layout=auto: the layout `gpurent plan` would choose)

Software stacks (--stack, non-LLM training): ngc-24 (default: current NGC PyTorch
containers, stock scripts), ngc-22.09 (the old container, whose multi-GPU all-reduce is
slow), nvidia-dle (NVIDIA's tuned DeepLearningExamples: DALI, channels-last), tuned
(MLPerf-grade code, fitted on MLPerf Training results; the one stack LLMs also read).
"""


LAYOUT_HELP = (
    "given (default): the layout the flags or the file give; auto: the layout `gpurent plan` "
    "would price, the first that fits with the cheapest communication (it chooses --sharding, "
    "--tp, --pp, --vp and --ep, so give none of them; recomputation and --batch-size are where "
    "it starts, changed only where needed to fit). A --from-csv row takes a `layout` column."
)


def _planner_layout(estimator: Any) -> Any:
    """The planner's layout choice as `gpurent.estimate.rows.LayOutFn`, for `estimator`."""
    from gpurent.plan.layouts import lay_out

    def choose(
        wl: Any, gpu: Any, num_gpus: int, nodes: int, inter_node_gbps: float | None
    ) -> tuple[Any, str]:
        laid = lay_out(
            estimator,
            wl,
            gpu=gpu,
            num_gpus=num_gpus,
            nodes=nodes,
            inter_node_gbps=inter_node_gbps,
        )
        return laid.workload, laid.note

    return choose


def _from_csv(path: Path, as_json: bool, stack: Any) -> None:
    from gpurent.estimate.calibration_file import load_estimator
    from gpurent.estimate.rows import check_header, estimate_rows, misspelt_columns
    from gpurent.inputs import files

    estimator = load_estimator()
    shown = files.shown(path)
    header, records = files.csv_records(files.read_text(path, what="CSV file"), shown)
    check_header(header, shown)
    for col, like in misspelt_columns(header):
        err_console.print(
            Text.assemble(
                ("warning: ", "yellow"),
                clean(
                    f"{shown}: column {col!r} is not an estimate input (did you mean {like}?): "
                    "it is passed through unread"
                ),
            ),
            highlight=False,
            soft_wrap=True,
        )
    results = []
    rows = estimate_rows(
        records, shown, estimator, default_stack=stack, lay_out=_planner_layout(estimator)
    )
    for res in rows:
        if as_json:
            print_json_line(res)
        else:
            results.append(res)
    if not as_json:
        from rich.table import Table

        table = Table(
            "model",
            "gpu",
            "n",
            "precision",
            "batch",
            "throughput (80% range)",
            "unit",
            "mem GiB",
            "fits",
            "bottleneck",
        )
        for r in results:
            if "error" in r:
                table.add_row(f"[red]{r['error']}[/]", *[""] * 9)
                continue
            table.add_row(
                r["model"],
                r["gpu"],
                str(r["num_gpus"]),
                r["precision"],
                str(r["batch_size"]),
                f"{r['throughput']:,.0f} ({r['throughput_low']:,.0f}-{r['throughput_high']:,.0f})",
                r["throughput_unit"],
                f"{r['memory_per_gpu_gib']:.1f}",
                "yes" if r["fits"] else "NO",
                r["bottleneck"],
            )
        console.print(table)


@checked(
    gpus=v.bounded(v.positive_int, most=v.MAX_GPUS),
    nodes=v.bounded(v.positive_int, most=v.MAX_NODES),
    inter_node_gbps=v.bounded(v.positive, most=1e6),
)
def estimate_cmd(  # noqa: PLR0917 - typer maps parameters to options
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            "-m",
            help="Zoo model (see --list-models) or custom:layers=..,hidden=..,heads=..,vocab=..",
        ),
    ] = None,
    gpu: Annotated[
        str | None, typer.Option("--gpu", "-g", help="GPU name, e.g. H100, A100-SXM4-80GB, L40S.")
    ] = None,
    gpus: Annotated[int, typer.Option("--gpus", "-n", help="Total number of GPUs.")] = 1,
    nodes: Annotated[int, typer.Option("--nodes", help="Nodes the GPUs are spread over.")] = 1,
    precision: Annotated[
        str | None,
        typer.Option(
            "--precision",
            "-p",
            help="fp32, strict-fp32, tf32, amp, fp16, bf16, fp8, fp8-tensorwise, fp8-rowwise, "
            "fp8-delayed, mxfp8 (Blackwell, CDNA4), nvfp4 (Blackwell) (aliases "
            "fp16_amp, fp32_or_tf32). Default: amp; bf16 for LLMs.",
        ),
    ] = None,
    batch_size: Annotated[
        int | None, typer.Option("--batch-size", "-b", help="Micro-batch per GPU.")
    ] = None,
    seq_len: Annotated[
        int | None, typer.Option("--seq-len", "-s", help="Tokens per sequence.")
    ] = None,
    task: Annotated[
        str | None,
        typer.Option(
            "--task", help="training, finetune-full, finetune-lora, finetune-qlora, inference."
        ),
    ] = None,
    sharding: Annotated[
        str | None,
        typer.Option(
            "--sharding",
            help="none, zero1, zero2, zero3 (= fsdp), hsdp (FSDP inside a node, replicas across).",
        ),
    ] = None,
    checkpointing: Annotated[
        bool | None,
        typer.Option(
            "--activation-checkpointing/--no-activation-checkpointing",
            help="Recompute activations in backward.",
        ),
    ] = None,
    tensor_parallel: Annotated[
        int | None, typer.Option("--tp", help="Tensor-parallel degree.")
    ] = None,
    pipeline_parallel: Annotated[
        int | None, typer.Option("--pp", help="Pipeline-parallel degree.")
    ] = None,
    virtual_stages: Annotated[
        int | None,
        typer.Option(
            "--vp", help="Virtual pipeline stages per GPU (interleaved 1F1B; needs --pp)."
        ),
    ] = None,
    context_parallel: Annotated[
        int | None,
        typer.Option("--cp", help="Context-parallel degree (ring attention; divides --seq-len)."),
    ] = None,
    expert_parallel: Annotated[
        int | None,
        typer.Option(
            "--ep",
            help="Expert-parallel degree of a mixture-of-experts model (divides its experts).",
        ),
    ] = None,
    layout_mode: Annotated[str, typer.Option("--layout", help=LAYOUT_HELP)] = "given",
    sequence_parallel: Annotated[
        bool | None,
        typer.Option(
            "--sequence-parallel/--no-sequence-parallel",
            help="Split activations outside the TP GEMMs over --tp ranks (default: on with --tp).",
        ),
    ] = None,
    fused_loss: Annotated[
        bool | None,
        typer.Option(
            "--fused-loss/--no-fused-loss",
            help="Cross-entropy fused with the output layer and chunked (Liger-Kernel, "
            "torchtune LinearCrossEntropyLoss): no full logits tensor. Default: the stack's (off).",
        ),
    ] = None,
    fp32_upcast: Annotated[
        bool | None,
        typer.Option(
            "--fp32-upcast/--no-fp32-upcast",
            help="LoRA/QLoRA with every unquantised parameter, activation and logit in fp32 "
            "(Hugging Face PEFT's prepare_model_for_kbit_training). Default: off.",
        ),
    ] = None,
    cpu_offload: Annotated[
        bool | None,
        typer.Option(
            "--cpu-offload/--no-cpu-offload",
            help="Optimizer states and gradients in host memory, the optimizer step on the CPU "
            "(DeepSpeed ZeRO-Offload, FSDP CPUOffload). Default: off.",
        ),
    ] = None,
    offload_params: Annotated[
        bool | None,
        typer.Option(
            "--offload-params/--no-offload-params",
            help="With --cpu-offload and ZeRO-3/FSDP/HSDP: the weight shards in host memory too "
            "(FSDP CPUOffload, DeepSpeed offload_param; the default) or on the GPU "
            "(--no-offload-params: DeepSpeed offload_optimizer alone).",
        ),
    ] = None,
    attention_kernel: Annotated[
        str | None,
        typer.Option(
            "--attention-kernel",
            help="Decoder-LLM training's attention kernel: auto (PyTorch SDPA's: "
            "FlashAttention-2, cuDNN on Blackwell), fa2, fa3 (Hopper), cudnn (Hopper, "
            "Blackwell), fa4 (Blackwell), fitted (the reference data's kernel, about "
            "FlashAttention-1's speed).",
        ),
    ] = None,
    recompute: Annotated[
        str | None,
        typer.Option(
            "--recompute",
            help="Activation recomputation: none, selective (attention core), mlp (each MLP "
            "or MoE expert block: Megatron's --recompute-modules mlp), full.",
        ),
    ] = None,
    grad_accum: Annotated[
        int | None,
        typer.Option("--grad-accum", help="Gradient-accumulation steps (pipeline micro-batches)."),
    ] = None,
    inter_node_gbps: Annotated[
        float | None,
        typer.Option("--inter-node-gbps", help="Network per node, Gbit/s (default 100)."),
    ] = None,
    interconnect: Annotated[
        str | None, typer.Option("--interconnect", help="Override the GPU link: nvlink or pcie.")
    ] = None,
    stack: Annotated[
        str | None,
        typer.Option(
            "--stack",
            help="Software stack of non-LLM training: ngc-24 (default), ngc-22.09, nvidia-dle; "
            "tuned (MLPerf-grade code, LLMs too). "
            "With --from-csv, the default for rows without a `stack` column.",
        ),
    ] = None,
    preset_name: Annotated[
        str | None, typer.Option("--preset", help="Start from a preset (see --list-presets).")
    ] = None,
    workload_file: Annotated[
        Path | None, typer.Option("--workload", "-w", help="TOML/YAML workload file.")
    ] = None,
    from_csv: Annotated[
        Path | None,
        typer.Option(
            "--from-csv", help="Estimate every row of a CSV (one JSON line per row with --json)."
        ),
    ] = None,
    no_measured: Annotated[
        bool, typer.Option("--no-measured", help="Ignore rows added with `gpurent calibrate add`.")
    ] = False,
    list_models_flag: Annotated[
        bool, typer.Option("--list-models", help="List zoo models and exit.")
    ] = False,
    list_presets_flag: Annotated[
        bool, typer.Option("--list-presets", help="List presets and exit.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")] = False,
    serve: Annotated[
        str | None, typer.Option("--serve", help=SERVE_HELP, metavar="PRESET|FILE|MODEL")
    ] = None,
    serve_set: Annotated[
        list[str] | None, typer.Option("--set", help=SET_HELP, metavar="KEY=VALUE")
    ] = None,
    html: Annotated[
        Path | None, typer.Option("--html", help="With --serve: also write an HTML report.")
    ] = None,
) -> None:
    """How fast, how big and how costly one job is on N GPUs of one kind.

    Throughput is the total across GPUs in the model's unit (images/s, sequences/s, tokens/s,
    ...); memory is per GPU with its breakdown; the bottleneck is compute, memory bandwidth,
    communication or memory capacity. Non-LLM training assumes PyTorch NGC 24.x containers with
    Lambda's stock scripts (`--stack` picks another), LLMs MosaicML llm-foundry (`--stack
    tuned`: MLPerf-grade code); your own
    measurements (`gpurent calibrate add`) take precedence for their GPU and model.
    """
    from dataclasses import replace

    from gpurent.catalog import get_gpu
    from gpurent.errors import InputError
    from gpurent.workload import get_model, list_models, list_presets, load_workload, preset
    from gpurent.workload.fields import workload_fields
    from gpurent.workload.models import default_precision
    from gpurent.workload.spec import Recompute, Stack, Workload, parse_stack

    if list_models_flag:
        names = list_models()
        print_json(names) if as_json else console.print("\n".join(names))
        return
    if list_presets_flag:
        names = list_presets()
        print_json(names) if as_json else console.print("\n".join(names))
        return
    if serve is not None:
        serve_estimate(
            serve,
            gpu=gpu,
            gpus=gpus,
            tensor_parallel=tensor_parallel,
            overrides=serve_set or [],
            as_json=as_json,
            html=html,
        )
        return
    if serve_set or html is not None:
        raise InputError("--set and --html go with --serve (a serving estimate)")
    stack_v = parse_stack(stack, "--stack") if stack is not None else None
    auto_layout = _check_layout_mode(
        layout_mode,
        {
            "--sharding": sharding,
            "--tp": tensor_parallel,
            "--pp": pipeline_parallel,
            "--vp": virtual_stages,
            "--ep": expert_parallel,
        },
        from_csv=from_csv is not None,
    )
    if from_csv is not None:
        _from_csv(from_csv, as_json, stack_v or Stack.NGC_24)
        return
    if gpu is None:
        raise InputError("--gpu is required (e.g. --gpu H100); see `gpurent gpus`")
    if workload_file is not None:
        wl = load_workload(workload_file)
    elif preset_name is not None:
        wl = preset(preset_name)
    elif model is not None:
        info = get_model(model)
        wl = Workload(
            model=info.name,
            precision=default_precision(info),  # --precision, if given, replaces it below
            batch_size_per_gpu=info.default_batch_size,
            shape=info.llm if model.lower().startswith("custom:") else None,
        )
    else:
        raise InputError("give --model, --preset or --workload (see --list-models)")
    raw, flags = given_flags(
        {  # Workload field: (parameter, value given)
            "precision": ("precision", precision),
            "batch_size_per_gpu": ("batch_size", batch_size),
            "seq_len": ("seq_len", seq_len),
            "task": ("task", task),
            "sharding": ("sharding", sharding),
            "activation_checkpointing": ("checkpointing", checkpointing),
            "recompute": ("recompute", recompute),
            "tensor_parallel": ("tensor_parallel", tensor_parallel),
            "pipeline_parallel": ("pipeline_parallel", pipeline_parallel),
            "virtual_pipeline_stages": ("virtual_stages", virtual_stages),
            "context_parallel": ("context_parallel", context_parallel),
            "expert_parallel": ("expert_parallel", expert_parallel),
            "sequence_parallel": ("sequence_parallel", sequence_parallel),
            "fused_loss": ("fused_loss", fused_loss),
            "fp32_upcast": ("fp32_upcast", fp32_upcast),
            "cpu_offload": ("cpu_offload", cpu_offload),
            "offload_params": ("offload_params", offload_params),
            "attention_kernel": ("attention_kernel", attention_kernel),
            "gradient_accumulation": ("grad_accum", grad_accum),
            "stack": ("stack", stack_v),
        }
    )
    changes = workload_fields(raw, "flags", flags=flags)
    if model is not None and (workload_file or preset_name):
        changes["model"] = get_model(model).name
    # a flag overrides the file's or preset's recomputation whole: --no-activation-checkpointing
    # turns off recompute too, --recompute sets activation_checkpointing to match
    if changes.get("activation_checkpointing") is False:
        changes.setdefault("recompute", Recompute.NONE)
    if "recompute" in changes:
        changes["activation_checkpointing"] = changes["recompute"] is Recompute.FULL
    wl = replace(wl, **changes)
    _single(
        wl,
        get_gpu(gpu),
        gpus,
        nodes=nodes,
        inter_node_gbps=inter_node_gbps,
        interconnect=interconnect,
        no_measured=no_measured,
        as_json=as_json,
        auto_layout=auto_layout,
    )


def _check_layout_mode(mode: str, chosen: dict[str, object], *, from_csv: bool) -> bool:
    """Whether --layout asks for the planner's layout; InputError for a value it does not
    know, for auto beside a flag it chooses, and for --layout with --from-csv."""
    from gpurent.errors import InputError

    value = mode.strip().lower()
    if value not in ("given", "auto"):
        raise InputError(f"--layout {mode!r}: use given or auto")
    if value == "given":
        return False
    if from_csv:
        raise InputError(
            "--layout auto goes with one estimate; a --from-csv row takes a layout column"
        )
    given = [flag for flag, val in chosen.items() if val is not None]
    if given:
        raise InputError(
            f"--layout auto chooses --sharding, --tp, --pp, --vp and --ep: drop {', '.join(given)} "
            "or use --layout given"
        )
    return True


def _figure(x: float) -> str:
    """A throughput bound: whole units from 100 up, else three significant digits."""
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def _single(
    wl: Any,
    gpu: Any,
    gpus: int,
    *,
    nodes: int,
    inter_node_gbps: float | None,
    interconnect: str | None,
    no_measured: bool,
    as_json: bool,
    auto_layout: bool = False,
) -> None:
    from gpurent.catalog.links import parse_estimated_link
    from gpurent.estimate.calibration_file import load_estimator
    from gpurent.units import format_duration

    link = parse_estimated_link(interconnect, "--interconnect") if interconnect else None
    estimator = load_estimator(use_calibration=not no_measured)
    layout_note = ""
    if auto_layout:
        wl, layout_note = _planner_layout(estimator)(wl, gpu, gpus, nodes, inter_node_gbps)
    est = estimator.estimate(
        wl,
        gpu,
        gpus,
        nodes=nodes,
        inter_node_gbps=inter_node_gbps,
        intra_node_interconnect=link,
    )
    if not auto_layout:
        from gpurent.plan.layouts import with_layout_hint

        est = with_layout_hint(
            estimator, est, wl, gpu=gpu, nodes=nodes, inter_node_gbps=inter_node_gbps
        )
    if as_json:
        doc = est.to_json()
        if layout_note:
            doc["layout_note"] = layout_note
            from gpurent.estimate.rows import layout_cells

            doc["layout"] = layout_cells(wl)
        print_json(doc)
        return
    m = est.memory
    fit = "[green]fits[/]" if est.fits else f"[red]does not fit by {-m.headroom_gib:.1f} GiB[/]"
    console.print(
        f"[bold]{est.model}[/] on {est.num_gpus}x {est.gpu} ({est.precision}, batch "
        f"{est.batch_size_per_gpu}/GPU{f', seq {est.seq_len}' if est.seq_len else ''})"
    )
    pct = f"{est.interval_coverage:.0%}"
    console.print(
        f"  throughput     {est.throughput:,.1f} {est.throughput_unit} ({pct}: "
        f"{_figure(est.throughput_low)}-{_figure(est.throughput_high)})"
        f"  ({est.samples_per_s:,.2f} samples/s)",
        highlight=False,
    )
    console.print(
        f"  step time      {est.step_time_s * 1000:,.1f} ms  (compute "
        f"{est.compute_time_s * 1000:,.1f}, memory {est.memory_time_s * 1000:,.1f}, "
        f"exposed comm {est.communication_time_s * 1000:,.1f})"
    )
    if est.num_gpus > 1:
        console.print(f"  scaling        {100 * est.scaling_efficiency:.0f}% of linear")
    if est.mfu is not None:
        console.print(f"  MFU            {100 * est.mfu:.0f}%")
    console.print(f"  bottleneck     {est.bottleneck.value}")
    if (layout := _layout_line(wl, est.num_gpus)) is not None:
        console.print(f"  layout         {layout}", highlight=False)
    if layout_note:
        console.print(f"  layout choice  {layout_note}", highlight=False)
    console.print(f"  memory/GPU     {m.total_gib:.1f} of {m.capacity_gib:g} GiB: {fit}")
    console.print(
        f"    weights {m.weights_gib:.2f}, gradients {m.gradients_gib:.2f}, optimizer "
        f"{m.optimizer_gib:.2f}, activations {m.activations_gib:.2f}, KV cache "
        f"{m.kv_cache_gib:.2f}, overhead {m.overhead_gib:.2f} GiB"
    )
    if est.time_to_finish_s is not None:
        lo, hi = est.time_to_finish_low_s, est.time_to_finish_high_s
        assert lo is not None and hi is not None
        console.print(
            f"  time to finish {format_duration(est.time_to_finish_s)} ({pct}: "
            f"{format_duration(lo)}-{format_duration(hi)})",
            highlight=False,
        )
    console.print(f"  basis          {est.basis}")
    console.print(
        f"  interval       {pct} range: the estimator's cross-validated error, class "
        f"{est.interval_class}",
        highlight=False,
    )
    for note in est.notes:
        console.print(f"  note: {note}", highlight=False)


def _layout_line(wl: Any, num_gpus: int) -> str | None:
    """The parallel layout and recomputation assumed, with the pipeline bubble, e.g.
    "TP8 (SP) x PP4 (VP2) x DP1, ZeRO none, recompute selective, bubble 8.6%"; None for a
    plain single-GPU job."""
    from gpurent.estimate.estimator import pipeline_bubble_fraction
    from gpurent.estimate.memory import data_parallel_degree

    tp, pp, cp = wl.tensor_parallel, wl.pipeline_parallel, wl.context_parallel
    mode = wl.recompute_mode.value
    if num_gpus == 1 and mode == "none" and wl.sharding.value == "none":
        return None
    parts = [f"TP{tp}{' (SP)' if wl.sequence_parallel_on else ''}"]
    if cp > 1:
        parts.append(f"CP{cp}")
    if wl.expert_parallel > 1:
        parts.append(f"EP{wl.expert_parallel}")
    vp = wl.virtual_pipeline_stages
    parts.append(f"PP{pp}{f' (VP{vp})' if vp > 1 else ''}")
    parts.append(f"DP{data_parallel_degree(wl, num_gpus)}")
    line = f"{' x '.join(parts)}, sharding {wl.sharding.value}, recompute {mode}"
    if wl.fused_loss_on:
        line += ", fused loss"
    if pp > 1:
        bubble = pipeline_bubble_fraction(pp, wl.gradient_accumulation, vp)
        line += f", {wl.gradient_accumulation} micro-batches, bubble {100 * bubble:.1f}%"
    return line


calibrate_app = typer.Typer(
    help="Your own throughput measurements; estimates prefer them for their GPU and model.",
    no_args_is_help=True,
)


@calibrate_app.command("add")
@cli_errors
def calibrate_add(
    file: Annotated[
        Path,
        typer.Argument(
            help="CSV (model,gpu,num_gpus,precision,batch_size,"
            "throughput[,seq_len,throughput_unit]), `gpurent bench` JSON, or `gpurent bench "
            "serve` JSON (to the serving store)."
        ),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the added rows as JSON.")] = False,
) -> None:
    """Add measurements, e.g. `gpurent calibrate add my_runs.csv`."""
    from gpurent.estimate.calibration_file import add_measurements, store_path
    from gpurent.estimate.serve_calibration import add_bench_serve_file

    served = add_bench_serve_file(file)  # a `gpurent bench serve` result: the serving store
    if served is not None:
        if as_json:
            print_json({"added": served[0], "store": str(served[1])})
        else:
            console.print(f"added {len(served[0])} serving measurement(s) to {served[1]}")
        return
    rows = add_measurements(file)
    if as_json:
        print_json({"added": rows, "store": str(store_path())})
    else:
        console.print(f"added {len(rows)} measurement(s) to {store_path()}")


@calibrate_app.command("list")
@cli_errors
def calibrate_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show stored measurements."""
    from rich.table import Table

    from gpurent.estimate.calibration_file import load_calibration

    rows = load_calibration().rows
    if as_json:
        print_json(rows)
        return
    if not rows:
        console.print("no measurements; add some with `gpurent calibrate add FILE`")
        return
    table = Table("model", "gpu", "n", "precision", "batch", "seq", "throughput")
    for r in rows:
        table.add_row(
            r.model,
            r.gpu,
            str(r.num_gpus),
            r.precision.value,
            str(r.batch_size),
            str(r.seq_len or ""),
            f"{r.throughput:,.1f} {r.throughput_unit}",
        )
    console.print(table)


@calibrate_app.command("clear")
@cli_errors
def calibrate_clear(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Delete every stored measurement."""
    from gpurent.estimate.calibration_file import clear_calibration

    n = clear_calibration()
    if as_json:
        print_json({"removed": n})
    else:
        console.print(f"removed {n} measurement(s)")


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the root app."""
    doc = inspect.cleandoc(estimate_cmd.__doc__ or "")
    examples = EXAMPLES + "\nServing (--serve, docs/serving.md):\n" + SERVE_EXAMPLES
    app.command("estimate", help=doc + "\n" + examples)(cli_errors(estimate_cmd))
    app.add_typer(calibrate_app, name="calibrate")
