"""A layout that does not divide the GPUs is a one-line error naming the numbers (issue 12), from
`estimate` flags and from workload files alike; layouts that do divide still estimate."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import one_line_error
from tests.conftest import run_cli as run

BASE = ("estimate", "--model", "llama3-8b", "--gpu", "H100")


@pytest.mark.parametrize(
    ("flags", "numbers"),
    [
        (("--gpus", "6", "--tp", "4"), ("6 GPUs", "4 x 1 = 4")),
        (("--gpus", "8", "--tp", "4", "--pp", "4"), ("8 GPUs", "4 x 4 = 16")),
        (("--gpus", "8", "--nodes", "3"), ("8 GPUs", "3 nodes")),
        (("--gpus", "16", "--nodes", "2", "--tp", "16"), ("tensor parallel 16", "8 GPUs per node")),
        (("--gpus", "12", "--nodes", "2", "--tp", "4"), ("tensor parallel 4", "6 GPUs per node")),
        (("--gpus", "6", "--tp", "3"), ("tensor parallel 3", "32 attention heads")),
        (("--gpus", "64", "--nodes", "8", "--pp", "64"), ("pipeline parallel 64", "32 layers")),
    ],
)
def test_layout_that_does_not_divide_is_a_one_line_input_error(
    flags: tuple[str, ...], numbers: tuple[str, ...]
) -> None:
    one_line_error(*run(*BASE, *flags), *numbers)


def test_workload_file_layout_is_checked_against_the_gpus(tmp_path: Path) -> None:
    wl = tmp_path / "job.toml"
    wl.write_text(
        'model = "llama3-8b"\ntask = "finetune-full"\ntensor_parallel = 4\npipeline_parallel = 2\n',
        encoding="utf-8",
    )
    code, out, err = run("estimate", "--workload", str(wl), "--gpu", "H100", "--gpus", "12")
    line = one_line_error(code, out, err, "12 GPUs", "4 x 2 = 8")
    assert "tensor_parallel" in line  # says where to change it in a workload file
    code, out, err = run(
        "estimate", "--workload", str(wl), "--gpu", "H100", "--gpus", "16", "--nodes", "2"
    )
    assert code == 0, err


@pytest.mark.parametrize(
    "flags",
    [
        ("--gpus", "16", "--nodes", "2", "--tp", "8", "--pp", "2"),
        ("--gpus", "8", "--tp", "8"),
        ("--gpus", "6", "--nodes", "3", "--tp", "2"),
        ("--gpus", "4", "--pp", "4"),
    ],
)
def test_layouts_that_divide_still_estimate(flags: tuple[str, ...]) -> None:
    code, out, err = run(*BASE, *flags)
    assert code == 0, err
    assert "tokens/s" in out
