"""One parser for every enum a flag, a workload-file field or a CSV cell names: the same
one-line error shape, with "did you mean" and the choices, wherever the bad name comes from."""

from __future__ import annotations

import json
import re
from enum import StrEnum
from pathlib import Path

import pytest

from gpurent.errors import InputError, NotFoundError
from gpurent.inputs.choices import parse_choice, parse_choices
from tests.conftest import run_cli as run

# error: <where>: unknown <what> '<name>'; did you mean <a, b>? (one of <x, y, z>)
SHAPE = re.compile(
    r"(?P<where>.+): unknown (?P<what>[\w -]+) '(?P<name>[^']*)'; did you mean "
    r"(?P<suggested>[^?]+)\? \(one of (?P<choices>[^)]+)\)"
)


class Fruit(StrEnum):
    APPLE = "apple"
    PEAR = "pear"
    FIG = "fig"


def test_values_aliases_case_and_spaces() -> None:
    assert parse_choice(Fruit, " PEAR ", what="fruit") is Fruit.PEAR
    assert parse_choice(Fruit, Fruit.FIG, what="fruit") is Fruit.FIG
    assert parse_choice(Fruit, "Malus", what="fruit", aliases={"malus": Fruit.APPLE}) is Fruit.APPLE
    assert parse_choices(Fruit, "fig, apple,,", what="fruit", where="--f") == (
        Fruit.FIG,
        Fruit.APPLE,
    )


def test_unknown_name_is_an_input_error_with_the_shape() -> None:
    with pytest.raises(NotFoundError) as err:
        parse_choice(Fruit, "aple", what="fruit", where="--fruit")
    assert isinstance(err.value, InputError) and err.value.exit_code == 2
    m = SHAPE.fullmatch(err.value.message)
    assert m is not None, err.value.message
    assert m["where"] == "--fruit" and m["suggested"].split(", ")[0] == "apple"
    assert m["choices"] == "apple, pear, fig"


def test_only_narrows_the_members_accepted() -> None:
    with pytest.raises(NotFoundError, match=r"\(one of apple, fig\)$"):
        parse_choice(Fruit, "pear", what="fruit", only=(Fruit.APPLE, Fruit.FIG))


def test_aliases_are_suggested_only_where_no_value_is_close() -> None:
    with pytest.raises(NotFoundError, match="did you mean malus"):
        parse_choice(Fruit, "maluss", what="fruit", aliases={"malus": Fruit.APPLE})


ESTIMATE = ["estimate", "--model", "resnet50", "--gpu", "H100"]
PLAN = ["plan", "--preset", "llama-lora"]

# (command, flag, misspelt value, the suggestion it must get)
FLAGS = [
    (ESTIMATE, "--task", "trainin", "training"),
    (ESTIMATE, "--precision", "bf61", "bf16"),
    (ESTIMATE, "--sharding", "zer3", "zero3"),
    (ESTIMATE, "--recompute", "selectve", "selective"),
    (ESTIMATE, "--stack", "ngc-2409", "ngc-22.09"),
    (ESTIMATE, "--interconnect", "nvlnk", "nvlink"),
    (PLAN, "--task", "finetne-lora", "finetune-lora"),
    (PLAN, "--precision", "fp8-rowise", "fp8-rowwise"),
    (PLAN, "--objective", "cheapst", "cheapest"),
    (PLAN, "--pricing", "ondemand", "on-demand"),
    (PLAN, "--risk", "p09", "p90"),
    (PLAN, "--interconnect", "pcie4", "pcie"),
    (PLAN, "--egress-to", "internt", "internet"),
]


@pytest.mark.parametrize(("command", "flag", "bad", "hint"), FLAGS)
def test_every_enum_flag_gives_the_same_one_line_error(
    command: list[str], flag: str, bad: str, hint: str
) -> None:
    code, out, err = run(*command, flag, bad)
    assert code == 2, out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    m = SHAPE.fullmatch(lines[0].removeprefix("error: "))
    assert m is not None, lines[0]
    assert m["where"] == flag and m["name"] == bad
    assert hint in m["suggested"].split(", ")


# (workload field, misspelt value, suggestion)
FIELDS = [
    ("task", "inferense", "inference"),
    ("optimizer", "adamm", "adamw"),
    ("sharding", "zero4", "zero3"),
    ("recompute", "ful", "full"),
    ("precision", "bf61", "bf16"),
    ("stack", "nvidia-dl", "nvidia-dle"),
]


@pytest.mark.parametrize(("field", "bad", "hint"), FIELDS)
def test_every_enum_field_of_a_workload_file_gives_the_same_error(
    tmp_path: Path, field: str, bad: str, hint: str
) -> None:
    job = tmp_path / "job.toml"
    job.write_text(f'model = "resnet50"\n{field} = "{bad}"\n')
    code, out, err = run(*ESTIMATE[:1], "--workload", str(job), "--gpu", "H100")
    assert code == 2, out
    m = SHAPE.fullmatch(err.strip().removeprefix("error: "))
    assert m is not None, err
    assert m["where"] == f"{job}: {field}" and m["name"] == bad
    assert hint in m["suggested"].split(", ")


@pytest.mark.parametrize(("field", "bad", "hint"), [*FIELDS, ("interconnect", "pcei", "pcie")])
def test_every_enum_column_of_a_csv_row_gives_the_same_error(
    tmp_path: Path, field: str, bad: str, hint: str
) -> None:
    rows = tmp_path / "rows.csv"
    cells = {"model": "resnet50", "gpu": "H100", "num_gpus": "1", "precision": "amp"}
    cells |= {"batch_size": "64", field: bad}
    rows.write_text(",".join(cells) + "\n" + ",".join(cells.values()) + "\n")
    code, out, err = run("estimate", "--from-csv", str(rows), "--json")
    assert code == 0, err
    message = json.loads(out.splitlines()[0])["error"]
    m = SHAPE.fullmatch(message)
    assert m is not None, message
    assert m["where"] == f"{rows}:2: {field}" and m["name"] == bad
    assert hint in m["suggested"].split(", ")
