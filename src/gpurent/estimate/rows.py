"""Many estimates from rows of text cells (`gpurent estimate --from-csv`): each row a
workload (the fields a workload file takes, `gpurent.workload.fields`) and a machine (GPU,
count, nodes, network, link). Pure: the caller reads the file and renders the results."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any, Protocol

from gpurent.catalog.gpu import GpuSpec
from gpurent.catalog.links import parse_estimated_link
from gpurent.catalog.specs import get_gpu
from gpurent.errors import GpurentError, InputError
from gpurent.estimate.estimator import Estimator
from gpurent.inputs import values as v
from gpurent.workload.fields import workload_keys
from gpurent.workload.loader import workload_from_mapping
from gpurent.workload.models import MODELS, get_model
from gpurent.workload.spec import Stack, Workload

REQUIRED = ("model", "gpu", "num_gpus", "precision", "batch_size")
# columns about the machine rather than the workload (every other known column is a field of a
# workload file, `gpurent.workload.workload_from_mapping`)
MACHINE = ("gpu", "num_gpus", "nodes", "inter_node_gbps", "interconnect")
# `layout`: empty or `given` (estimate the row's layout cells as they are) or `auto` (the layout
# `gpurent plan` would choose: `LayOutFn`); with `auto` these cells must stay empty
LAYOUT_VALUES = ("given", "auto")
AUTO_CHOSEN_COLUMNS = ("sharding", "tp", "pp", "vp", "ep")


class LayOutFn(Protocol):
    """The planner's layout choice (`gpurent.plan.layouts.lay_out`, passed in by the CLI: the
    estimator does not depend on the planner): the workload laid out on the machine, and a note
    that says which layout was chosen."""

    def __call__(
        self,
        workload: Workload,
        gpu: GpuSpec,
        num_gpus: int,
        nodes: int,
        inter_node_gbps: float | None,
    ) -> tuple[Workload, str]:
        """`workload` with the chosen layout applied, and its one-line note."""


def check_header(header: Iterable[str], source: str) -> None:
    """InputError naming the required columns `header` lacks."""
    lacking = [c for c in REQUIRED if c not in set(header)]
    if lacking:
        raise InputError(f"{source}: CSV header lacks {', '.join(lacking)}")


def _workload_columns() -> frozenset[str]:
    """The workload file's fields a row may set (all but the shape and the name)."""
    return workload_keys() - {"shape", "name"}


def input_columns() -> frozenset[str]:
    """Every column `estimate_row` reads: the workload file's fields, the machine and `layout`."""
    return frozenset(_workload_columns() | set(MACHINE) | {"layout"})


def misspelt_columns(header: Iterable[str]) -> list[tuple[str, str]]:
    """(column, the input it looks like) for each column of `header` that is not an input but
    is close to one (`tpp` for `tp`): such a column is passed through unread, which a typo in a
    layout column would turn into a silently different estimate. Other extra columns (a
    measured value, a note) are the caller's and pass through without a word."""
    known = input_columns()
    out: list[tuple[str, str]] = []
    for col in header:
        name = col.strip()
        if not name or name in known:
            continue
        close = difflib.get_close_matches(name.lower(), sorted(known), n=1, cutoff=0.75)
        if close:
            out.append((name, close[0]))
    return out


def layout_cells(wl: Workload) -> dict[str, Any]:
    """The layout of `wl` by its CSV column names (what `layout=auto` chose): sharding, tp, pp,
    vp, ep, grad_accum and activation_checkpointing."""
    return {
        "sharding": wl.sharding.value,
        "tp": wl.tensor_parallel,
        "pp": wl.pipeline_parallel,
        "vp": wl.virtual_pipeline_stages,
        "ep": wl.expert_parallel,
        "grad_accum": wl.gradient_accumulation,
        "activation_checkpointing": wl.activation_checkpointing,
    }


def _layout_mode(row: Mapping[str, str], where: str, lay_out: LayOutFn | None) -> bool:
    """Whether the row asks for the planner's layout (`layout` = `auto`)."""
    mode = (row.get("layout") or "").strip().lower() or "given"
    if mode not in LAYOUT_VALUES:
        raise InputError(
            f"{where}: layout {mode!r} is not one of {', '.join(LAYOUT_VALUES)} (auto: the "
            "layout `gpurent plan` would choose)"
        )
    if mode == "given":
        return False
    given = [c for c in AUTO_CHOSEN_COLUMNS if (row.get(c) or "").strip()]
    if given:
        raise InputError(
            f"{where}: layout auto chooses {', '.join(AUTO_CHOSEN_COLUMNS)}, but the row gives "
            f"{', '.join(given)}: leave those cells empty or set layout to given"
        )
    if lay_out is None:
        raise InputError(f"{where}: layout auto needs the planner's layout choice here")
    return True


def estimate_row(
    row: Mapping[str, str],
    where: str,
    estimator: Estimator,
    *,
    default_stack: Stack,
    lay_out: LayOutFn | None = None,
) -> dict[str, Any]:
    """The row's cells (stripped) with its estimate's figures; `where` ("file:line") starts
    every error. `default_stack` is the stack of a row without a `stack` cell; a row whose
    `layout` is `auto` is laid out by `lay_out` (its note is the result's `layout_note`)."""
    missing = [c for c in REQUIRED if not (row.get(c) or "").strip()]
    if missing:
        raise InputError(f"{where}: missing {', '.join(missing)}")
    num_gpus = v.positive_int(row["num_gpus"], f"{where}: num_gpus", most=v.MAX_GPUS)
    nodes_raw = (row.get("nodes") or "").strip()
    nodes = v.positive_int(nodes_raw, f"{where}: nodes", most=v.MAX_NODES) if nodes_raw else 1
    net_raw = (row.get("inter_node_gbps") or "").strip()
    net = v.positive(net_raw, f"{where}: inter_node_gbps", most=1e6) if net_raw else None
    link_raw = (row.get("interconnect") or "").strip()
    link = parse_estimated_link(link_raw, f"{where}: interconnect") if link_raw else None
    keys = _workload_columns()
    fields: dict[str, Any] = {
        k: cell for k in row if k in keys and (cell := (row[k] or "").strip())
    }
    fields.setdefault("stack", default_stack)
    wl = workload_from_mapping(fields, where, text=True)
    model = get_model(row["model"])
    if model.llm is not None and model.name not in MODELS:  # custom:layers=..,hidden=..
        wl = replace(wl, shape=model.llm)
    gpu = get_gpu(row["gpu"])
    layout_note = ""
    if _layout_mode(row, where, lay_out):
        assert lay_out is not None
        wl, layout_note = lay_out(wl, gpu, num_gpus, nodes, net)
    est = estimator.estimate(
        wl, gpu, num_gpus, nodes=nodes, inter_node_gbps=net, intra_node_interconnect=link
    )
    out: dict[str, Any] = {k: (row.get(k) or "").strip() for k in row if k}
    out.update(
        model=row["model"],
        gpu=row["gpu"],
        num_gpus=num_gpus,
        nodes=est.nodes,
        precision=row["precision"],
        batch_size=wl.batch_size_per_gpu,
        seq_len=est.seq_len,
        throughput=est.throughput,
        throughput_unit=est.throughput_unit,
        throughput_low=est.throughput_low,
        throughput_high=est.throughput_high,
        interval_class=est.interval_class,
        step_time_s=est.step_time_s,
        memory_per_gpu_gib=est.memory_per_gpu_gib,
        fits=est.fits,
        bottleneck=est.bottleneck.value,
        mfu=est.mfu,
        samples_per_s=est.samples_per_s,
        scaling_efficiency=est.scaling_efficiency,
        communication_time_s=est.communication_time_s,
        basis=est.basis,
        efficiency_basis=est.efficiency_basis,
        stack=None if model.is_llm and wl.stack.value != "tuned" else wl.stack.value,
    )
    if layout_note:
        out.update(layout_cells(wl), batch_size=wl.batch_size_per_gpu, layout_note=layout_note)
    return out


def estimate_rows(
    records: Iterable[tuple[int, Mapping[str, str]]],
    source: str,
    estimator: Estimator,
    *,
    default_stack: Stack = Stack.NGC_24,
    lay_out: LayOutFn | None = None,
) -> Iterator[dict[str, Any]]:
    """`estimate_row` of each (line, row) of `source`; a row that cannot be estimated is
    `{"error": "source:line: ..."}` and the others still run."""
    for line, row in records:
        where = f"{source}:{line}"
        try:
            yield estimate_row(row, where, estimator, default_stack=default_stack, lay_out=lay_out)
        except GpurentError as exc:
            msg = exc.message if exc.message.startswith(source) else f"{where}: {exc.message}"
            yield {"error": msg}
