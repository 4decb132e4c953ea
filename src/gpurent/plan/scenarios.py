"""The guide's scenario matrix (training / inference / cost-sensitive) as planner presets.

Source: the project's seed guide, "Selection framework" table (derived, not read at run time):

| | training | inference | cost-sensitive |
|---|---|---|---|
| GPU | A100/H100 80 GB | T4/A10 16-24 GB | V100 16 GB |
| memory | >= 32 GB | >= 8 GB | >= 16 GB |
| interconnect | NVLink/InfiniBand | PCIe 4.0 | PCIe 3.0 |
| storage | NVMe SSD >= 1 TB | SATA SSD >= 500 GB | HDD >= 1 TB |

A scenario sets the memory floor, the interconnect, the storage to price, the objective and a
default workload; its GPU column is *not* a filter: the plan ranks every GPU and then says where
its pick departs from the matrix's and by how much.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpurent.catalog.links import Interconnect
from gpurent.errors import NotFoundError
from gpurent.plan.constraints import Objective


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    """One scenario of the guide: its GPU matrix row, minimum memory, interconnect and defaults."""

    name: str
    matrix_gpus: tuple[str, ...]  # canonical GPU names of the matrix's GPU row
    matrix_gpu_text: str  # the row as the guide writes it
    min_gpu_memory_gib: float
    interconnect: Interconnect
    storage_gb_per_node: float
    objective: Objective  # when the user gives no --objective and no --deadline
    default_preset: str


SCENARIOS: dict[str, Scenario] = {
    "training": Scenario(
        name="training",
        matrix_gpus=("A100-SXM4-80GB", "A100-PCIe-80GB", "H100-SXM5-80GB", "H100-PCIe-80GB"),
        matrix_gpu_text="A100/H100 80 GB",
        min_gpu_memory_gib=32.0,
        interconnect=Interconnect.NVLINK,
        storage_gb_per_node=1000.0,
        objective=Objective.THROUGHPUT_PER_DOLLAR,
        default_preset="llama-lora",
    ),
    "inference": Scenario(
        name="inference",
        matrix_gpus=("T4", "A10", "A10G"),
        matrix_gpu_text="T4/A10 16-24 GB",
        min_gpu_memory_gib=8.0,
        interconnect=Interconnect.ANY,
        storage_gb_per_node=500.0,
        objective=Objective.THROUGHPUT_PER_DOLLAR,
        default_preset="llm-inference",
    ),
    "cost-sensitive": Scenario(
        name="cost-sensitive",
        matrix_gpus=("V100-SXM2-16GB", "V100-PCIe-16GB"),
        matrix_gpu_text="V100 16 GB",
        min_gpu_memory_gib=16.0,
        interconnect=Interconnect.ANY,
        storage_gb_per_node=1000.0,
        objective=Objective.CHEAPEST,
        default_preset="resnet50-imagenet",
    ),
}
"""The named planning scenarios (`plan --scenario`), by name."""


def get_scenario(name: str) -> Scenario:
    """The scenario called `name` (any case); `NotFoundError` with the closest names otherwise."""
    try:
        return SCENARIOS[name.lower()]
    except KeyError:
        raise NotFoundError("scenario", name, SCENARIOS) from None
