"""Parallel layouts: the cheapest way to lay a workload out on n GPUs so that it fits in memory.

Layouts are tried in order of communication cost, and the first one that fits is kept (not all
of them: the planner needs one good layout per configuration, and each try is an estimator call):

training: plain data parallel; ZeRO-1 (optimizer states sharded), ZeRO-2 (+ gradients), on
several nodes HSDP (FSDP inside each node, replicas across: less network traffic than ZeRO-3),
ZeRO-3 / FSDP (+ weights); HSDP and ZeRO-3 with activation recomputation; tensor parallel inside
a node (2, 4, 8, dividing the GPUs per node and the attention heads; sequence parallel on, as
Megatron-LM and torchtitan run it) with ZeRO-1 across replicas; on several nodes, tensor parallel
over the node and pipeline parallel across nodes (big models), each micro-batch split into
single sequences so the 1F1B pipeline has micro-batches to fill its bubble, interleaved with 2
virtual stages first where the layers divide (a smaller bubble, slightly more memory), then
plain 1F1B. If none fits, the micro-batch is halved (gradient accumulation doubled, so the
global batch is unchanged) and the most memory-frugal layouts are tried again, down to a
micro-batch of 1.
inference: replicas; tensor parallel inside a node; pipeline across nodes.
A mixture-of-experts model trains every layout with expert parallelism: the largest divisor of
its experts that divides the data-parallel ranks and fits in a node beside the tensor-parallel
ranks (`_expert_degree`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Protocol

from gpurent.catalog.gpu import GpuSpec
from gpurent.errors import GpurentError, InputError
from gpurent.estimate.result import Estimate
from gpurent.workload.spec import Recompute, Sharding, Workload


class EstimatorFn(Protocol):
    """The estimator seam: how fast and how big `workload` is on `num_gpus` GPUs over `nodes`,
    and which GPU specs it knows (the planner looks offers' GPUs up here, never in a global
    table). `gpurent.estimate.Estimator` is one; the CLI builds it once, with the user's
    calibration, and passes it to `make_plan`."""

    def __call__(
        self,
        workload: Workload,
        gpu: GpuSpec,
        num_gpus: int,
        nodes: int,
        inter_node_gbps: float | None,
    ) -> Estimate:
        """The estimate for workload on num_gpus GPUs of gpu across nodes nodes."""

    def find_gpu(self, name: str) -> GpuSpec | None:
        """The spec of the GPU named `name`, or None when the estimator has none for it."""
        ...


class MemoryFitsFn(Protocol):
    """An optional seam an `EstimatorFn` may offer as its `memory_fits` method: whether the
    estimate of `workload` on `num_gpus` GPUs over `nodes` would fit in memory, answered
    without timing it, raising for a layout the estimator cannot model as its call would
    (`gpurent.estimate.Estimator.memory_fits`). `choose_layout` then times only a layout that
    fits; the layouts it chooses are the same with or without it."""

    def __call__(self, workload: Workload, gpu: GpuSpec, num_gpus: int, nodes: int) -> bool:
        """Whether `workload` on num_gpus GPUs of gpu across nodes nodes fits in memory."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Layout:
    """How the job is split over `num_gpus` GPUs."""

    num_gpus: int
    sharding: Sharding
    tensor_parallel: int
    pipeline_parallel: int
    activation_checkpointing: bool
    batch_size_per_gpu: int
    gradient_accumulation: int
    virtual_pipeline_stages: int = 1
    expert_parallel: int = 1  # MoE: experts spread over this many of the data-parallel ranks

    @property
    def data_parallel(self) -> int:
        """The data-parallel degree: GPUs divided by tensor times pipeline parallelism."""
        return self.num_gpus // (self.tensor_parallel * self.pipeline_parallel)

    @property
    def label(self) -> str:
        """Short description, e.g. 'ZeRO-3 DP8 +recompute' or 'TP4 PP2 DP1'."""
        parts = []
        if self.sharding is Sharding.HSDP:
            parts.append("HSDP")
        elif self.sharding is not Sharding.NONE:
            parts.append(f"ZeRO-{self.sharding.value[-1]}")
        if self.tensor_parallel > 1:
            parts.append(f"TP{self.tensor_parallel}")
        if self.pipeline_parallel > 1:
            parts.append(f"PP{self.pipeline_parallel}")
        if self.virtual_pipeline_stages > 1:
            parts.append(f"VP{self.virtual_pipeline_stages}")
        if self.expert_parallel > 1:
            parts.append(f"EP{self.expert_parallel}")
        if self.data_parallel > 1 or not parts:
            parts.append(f"DP{self.data_parallel}")
        if self.activation_checkpointing:
            parts.append("+recompute")
        return " ".join(parts)

    def apply(self, workload: Workload) -> Workload:
        """`workload` laid out this way (its recomputation follows the layout's, its sequence
        parallel setting is dropped where the layout has no tensor parallelism)."""
        recompute = workload.recompute
        if self.activation_checkpointing:
            recompute = Recompute.FULL
        elif recompute is Recompute.FULL:
            recompute = Recompute.NONE
        sp = workload.sequence_parallel if self.tensor_parallel > 1 else None
        return replace(
            workload,
            recompute=recompute,
            sequence_parallel=sp,
            sharding=self.sharding,
            tensor_parallel=self.tensor_parallel,
            pipeline_parallel=self.pipeline_parallel,
            activation_checkpointing=self.activation_checkpointing,
            batch_size_per_gpu=self.batch_size_per_gpu,
            gradient_accumulation=self.gradient_accumulation,
            virtual_pipeline_stages=self.virtual_pipeline_stages,
            expert_parallel=self.expert_parallel,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class LayoutChoice:
    """The first layout that fits, with its estimate; or the closest miss and why."""

    layout: Layout | None
    estimate: Estimate | None  # the fitting estimate, or the closest miss (least overshoot)
    tried: int  # estimator calls made
    reason: str = ""  # why nothing fits ("" when a layout fits)
    closest: Layout | None = None  # the layout of the closest miss when nothing fits


def _experts(workload: Workload) -> int:
    """Experts per layer of the workload's model (0: dense, or not a model the zoo knows)."""
    from gpurent.estimate.estimator import resolve_model

    try:
        llm = resolve_model(workload).llm
    except GpurentError:
        return 0
    return llm.experts if llm is not None else 0


def _expert_degree(experts: int, dp: int, per_node: int) -> int:
    """Expert parallelism for a MoE layout: the largest divisor of the experts that divides the
    data-parallel ranks and fits in a node beside the tensor-parallel ranks (its all-to-alls
    then stay on NVLink); 1 for a dense model."""
    for d in range(min(experts, dp, per_node), 1, -1):
        if experts % d == 0 and dp % d == 0:
            return d
    return 1


def _tp_degrees(workload: Workload, gpus_per_node: int) -> list[int]:
    heads = workload.shape.heads if workload.shape is not None else None
    return [
        t
        for t in (2, 4, 8)
        if t <= gpus_per_node and gpus_per_node % t == 0 and (heads is None or heads % t == 0)
    ]


def _layers(workload: Workload) -> int | None:
    """Decoder layers of the workload's LLM (None: not an LLM, or not a model the zoo knows)."""
    if workload.shape is not None:
        return workload.shape.layers
    from gpurent.errors import GpurentError
    from gpurent.estimate.estimator import resolve_model

    try:
        llm = resolve_model(workload).llm
    except GpurentError:
        return None
    return llm.layers if llm is not None else None


# (sharding, tp, pp, recompute, virtual stages, micro-batch, accumulation); 0 = the loop's own
_Option = tuple[Sharding, int, int, bool, int, int, int]


def candidate_layouts(workload: Workload, gpus_per_node: int, nodes: int) -> Iterator[Layout]:
    """Layouts to try, cheapest communication first (see the module doc)."""
    num_gpus = gpus_per_node * nodes
    seen: set[Layout] = set()
    batch = max(1, workload.batch_size_per_gpu)
    accumulation = max(1, workload.gradient_accumulation)
    trains = workload.task.trains
    layers = _layers(workload) if nodes > 1 else None
    experts = _experts(workload) if trains else 0
    first = True
    while True:
        options: list[_Option] = []
        if first and (workload.tensor_parallel > 1 or workload.pipeline_parallel > 1):
            tp, pp = workload.tensor_parallel, workload.pipeline_parallel
            if tp <= gpus_per_node and num_gpus % (tp * pp) == 0:
                options.append(
                    (
                        workload.sharding,
                        tp,
                        pp,
                        workload.activation_checkpointing,
                        workload.virtual_pipeline_stages,
                        0,
                        0,
                    )
                )
        if trains:
            ckpt = workload.activation_checkpointing
            shardings = [Sharding.NONE]
            if num_gpus > 1:
                shardings += [Sharding.ZERO1, Sharding.ZERO2]
                shardings += [Sharding.HSDP] if nodes > 1 else []
                shardings += [Sharding.ZERO3]
            if first:
                options += [(s, 1, 1, ckpt, 1, 0, 0) for s in shardings]
            if nodes > 1:
                options.append((Sharding.HSDP, 1, 1, True, 1, 0, 0))
            options.append((shardings[-1], 1, 1, True, 1, 0, 0))
            for tp in _tp_degrees(workload, gpus_per_node):
                dp_sharding = Sharding.ZERO1 if num_gpus // tp > 1 else Sharding.NONE
                options.append((dp_sharding, tp, 1, True, 1, 0, 0))
            if nodes > 1:
                # one sequence per micro-batch, as many micro-batches as the step had sequences
                mb, acc = 1, batch * accumulation
                if layers is not None and layers % (2 * nodes) == 0 and acc % nodes == 0:
                    options.append((Sharding.NONE, gpus_per_node, nodes, True, 2, mb, acc))
                options.append((Sharding.NONE, gpus_per_node, nodes, True, 1, mb, acc))
                options.append((Sharding.NONE, gpus_per_node, nodes, True, 1, 0, 0))
        else:
            options.append((Sharding.NONE, 1, 1, False, 1, 0, 0))
            options += [
                (Sharding.NONE, tp, 1, False, 1, 0, 0)
                for tp in _tp_degrees(workload, gpus_per_node)
            ]
            if nodes > 1:
                options.append((Sharding.NONE, gpus_per_node, nodes, False, 1, 0, 0))
        for sharding, tp, pp, ckpt, vp, mb, acc in options:
            if tp > 1 and gpus_per_node % tp:
                continue
            layout = Layout(
                num_gpus=num_gpus,
                sharding=sharding,
                tensor_parallel=tp,
                pipeline_parallel=pp,
                activation_checkpointing=ckpt,
                batch_size_per_gpu=mb or batch,
                gradient_accumulation=acc or accumulation,
                virtual_pipeline_stages=vp if pp > 1 else 1,
                expert_parallel=_expert_degree(
                    experts, num_gpus // (tp * pp), gpus_per_node // min(tp, gpus_per_node)
                ),
            )
            if layout not in seen:
                seen.add(layout)
                yield layout
        if batch == 1:
            return
        batch, accumulation, first = max(1, batch // 2), accumulation * 2, False


def choose_layout(
    estimator: EstimatorFn,
    workload: Workload,
    *,
    gpu: GpuSpec,
    gpus_per_node: int,
    nodes: int,
    inter_node_gbps: float | None,
    applied: dict[Layout, Workload] | None = None,
) -> LayoutChoice:
    """The first layout (in `candidate_layouts` order) whose estimate fits in GPU memory.

    With the estimator's `memory_fits` (`MemoryFitsFn`), layouts that do not fit are passed
    over untimed; only when none fits is every layout timed, to report the closest miss.
    `applied` memoizes `layout.apply(workload)` across calls for one workload (the planner
    tries the same layouts on every GPU with the same count per node)."""
    num_gpus = gpus_per_node * nodes
    fits: MemoryFitsFn | None = getattr(estimator, "memory_fits", None)
    if fits is not None:
        for tried, layout in enumerate(candidate_layouts(workload, gpus_per_node, nodes), 1):
            laid = applied.get(layout) if applied is not None else None
            if laid is None:
                laid = layout.apply(workload)
                if applied is not None:
                    applied[layout] = laid
            try:
                if not fits(laid, gpu, num_gpus, nodes):
                    continue
                est = estimator(laid, gpu, num_gpus, nodes, inter_node_gbps)
            except GpurentError:  # the search below records why
                continue
            if est.fits:
                return LayoutChoice(layout=layout, estimate=est, tried=tried)
    closest: Estimate | None = None
    closest_layout: Layout | None = None
    tried = 0
    errors: list[str] = []
    for layout in candidate_layouts(workload, gpus_per_node, nodes):
        tried += 1
        try:
            est = estimator(
                layout.apply(workload), gpu, gpus_per_node * nodes, nodes, inter_node_gbps
            )
        except GpurentError as exc:  # a layout the estimator cannot model (e.g. TP vs heads)
            errors.append(exc.message)
            continue
        if est.fits:
            return LayoutChoice(layout=layout, estimate=est, tried=tried)
        if closest is None or est.memory.headroom_gib > closest.memory.headroom_gib:
            closest, closest_layout = est, layout
    if closest is not None and closest_layout is not None:
        n = gpus_per_node * nodes
        reason = (
            f"needs {closest.memory.total_gib:.1f} GiB per GPU at best on "
            f"{n}x {gpu.name} ({closest_layout.label})"
            f", which has {closest.memory.capacity_gib:.0f} GiB "
            f"({closest.memory.total_gib * n:,.0f} GiB needed across the {n} GPUs, "
            f"{closest.memory.capacity_gib * n:,.0f} GiB there)"
        )
    else:
        reason = errors[0] if errors else "no layout applies"
    return LayoutChoice(
        layout=None, estimate=closest, tried=tried, reason=reason, closest=closest_layout
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class LaidOut:
    """A workload laid out as the planner would lay it out (`lay_out`)."""

    workload: Workload  # the workload with the chosen layout applied
    layout: Layout  # the first layout that fits, or the closest miss when none does
    fits: bool  # False: no layout fits, `layout` is the closest miss
    reason: str  # why none fits ("" when one does)
    estimate: Estimate | None  # the search's estimate of `layout` (no intra-node link given)

    @property
    def note(self) -> str:
        """One line for an estimate's notes: which layout was chosen and by what rule."""
        if self.fits:
            return (
                f"layout chosen as `gpurent plan` chooses it: {self.layout.label}, the first "
                "that fits in the order cheapest communication first (docs/plan.md)"
            )
        return f"no layout fits: {self.reason}; shown: the closest miss, {self.layout.label}"


def lay_out(
    estimator: EstimatorFn,
    workload: Workload,
    *,
    gpu: GpuSpec,
    num_gpus: int,
    nodes: int,
    inter_node_gbps: float | None,
) -> LaidOut:
    """`workload` on `num_gpus` GPUs of `gpu` over `nodes` with the layout `choose_layout`
    picks: the one `gpurent plan` would price (`gpurent estimate --layout auto`). The
    workload's sharding, tensor, pipeline, virtual-stage and expert degrees are replaced; its
    recomputation and micro-batch are the first tried and change only where needed to fit
    (gradient accumulation grows as the micro-batch shrinks: the global batch stays)."""
    if num_gpus % nodes:
        raise InputError(
            f"{num_gpus} GPUs do not split evenly over {nodes} nodes: give a GPU count that "
            "is a multiple of the nodes"
        )
    start = replace(
        workload,
        sharding=Sharding.NONE,
        tensor_parallel=1,
        pipeline_parallel=1,
        virtual_pipeline_stages=1,
        expert_parallel=1,
    )
    choice = choose_layout(
        estimator,
        start,
        gpu=gpu,
        gpus_per_node=num_gpus // nodes,
        nodes=nodes,
        inter_node_gbps=inter_node_gbps,
    )
    layout = choice.layout or choice.closest
    if layout is None:
        raise InputError(
            f"no layout of {workload.model} applies on {num_gpus}x {gpu.name}: {choice.reason}"
        )
    return LaidOut(
        workload=layout.apply(start),
        layout=layout,
        fits=choice.layout is not None,
        reason=choice.reason,
        estimate=choice.estimate,
    )


def with_layout_hint(
    estimator: EstimatorFn,
    estimate: Estimate,
    workload: Workload,
    *,
    gpu: GpuSpec,
    nodes: int,
    inter_node_gbps: float | None,
) -> Estimate:
    """`estimate` (of `workload` as laid out) with a note naming the layout `lay_out` would
    take and its memory per GPU, where `estimate` does not fit and some layout does on this
    machine; else `estimate` unchanged. `gpurent estimate` and POST /api/estimate both add it."""
    if estimate.fits:
        return estimate
    try:
        laid = lay_out(
            estimator,
            workload,
            gpu=gpu,
            num_gpus=estimate.num_gpus,
            nodes=nodes,
            inter_node_gbps=inter_node_gbps,
        )
    except GpurentError:
        return estimate
    if not laid.fits or laid.estimate is None:
        return estimate
    note = (
        f"this layout does not fit, {laid.layout.label} does "
        f"({laid.estimate.memory_per_gpu_gib:.1f} GiB per GPU): --layout auto estimates it"
    )
    return replace(estimate, notes=(*estimate.notes, note))
