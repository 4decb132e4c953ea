"""One converter from raw values to Workload fields, behind workload files, CSV rows and the
CLI's workload flags: the same bad value gives the same message wherever it comes from."""

from __future__ import annotations

import dataclasses
import json
from enum import Enum
from pathlib import Path

import pytest
from tests.conftest import run_cli as run

from gpurent.errors import InputError
from gpurent.workload import Workload, list_presets, preset
from gpurent.workload.fields import KEY_ALIASES, workload_fields, workload_keys

ESTIMATE = ["estimate", "--model", "llama3-8b", "--gpu", "H100"]

# (a Workload field or its short name, the estimate flag that sets it, a bad value, the message
# after the location)
BAD = [
    ("batch_size", "--batch-size", "0", "must be >= 1, got 0"),
    ("seq_len", "--seq-len", "0", "must be >= 1, got 0"),
    ("tensor_parallel", "--tp", "5000", "must be at most 4096, got 5000"),
    ("pipeline_parallel", "--pp", "0", "must be >= 1, got 0"),
    ("virtual_pipeline_stages", "--vp", "0", "must be >= 1, got 0"),
    ("context_parallel", "--cp", "0", "must be >= 1, got 0"),
    ("expert_parallel", "--ep", "-1", "must be >= 1, got -1"),
    ("gradient_accumulation", "--grad-accum", "0", "must be >= 1, got 0"),
    ("task", "--task", "trainin", "unknown task 'trainin'; did you mean training?"),
    ("sharding", "--sharding", "zero4", "unknown sharding 'zero4'; did you mean zero3"),
]


def _error(args: list[str]) -> str:
    code, out, err = run(*args)
    assert code == 2, out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0].removeprefix("error: ")


@pytest.mark.parametrize(("field", "flag", "bad", "body"), BAD)
def test_the_same_bad_value_gives_the_same_error_from_a_file_a_csv_row_and_a_flag(
    tmp_path: Path, field: str, flag: str, bad: str, body: str
) -> None:
    from_flag = _error([*ESTIMATE, flag, bad])
    assert from_flag.startswith(f"{flag} {body}") or from_flag.startswith(f"{flag}: {body}")
    tail = from_flag.removeprefix(flag)

    job = tmp_path / "job.toml"
    value = bad if bad.lstrip("-").isdigit() else f'"{bad}"'
    job.write_text(f'model = "llama3-8b"\n{field} = {value}\n')
    assert _error(["estimate", "--workload", str(job), "--gpu", "H100"]) == f"{job}: {field}{tail}"

    rows = tmp_path / "rows.csv"
    cells = {"model": "llama3-8b", "gpu": "H100", "num_gpus": "1", "precision": "bf16"}
    cells |= {"batch_size": "1", field: bad}
    rows.write_text(",".join(cells) + "\n" + ",".join(cells.values()) + "\n")
    code, out, err = run("estimate", "--from-csv", str(rows), "--json")
    assert code == 0, err
    assert json.loads(out)["error"] == f"{rows}:2: {field}{tail}"


def test_a_boolean_reads_the_same_in_a_file_and_a_csv_row(tmp_path: Path) -> None:
    job = tmp_path / "job.toml"
    job.write_text('model = "llama3-8b"\ncpu_offload = "maybe"\n')
    from_file = _error(["estimate", "--workload", str(job), "--gpu", "H100"])
    rows = tmp_path / "rows.csv"
    rows.write_text("model,gpu,num_gpus,precision,batch_size,cpu_offload\n")
    rows.write_text(rows.read_text() + "llama3-8b,H100,1,bf16,1,maybe\n")
    _, out, _ = run("estimate", "--from-csv", str(rows), "--json")
    assert from_file == f"{job}: cpu_offload must be true or false, got 'maybe'"
    assert json.loads(out)["error"] == f"{rows}:2: cpu_offload must be true or false, got 'maybe'"


def test_unknown_keys_are_named(tmp_path: Path) -> None:
    job = tmp_path / "job.toml"
    job.write_text('model = "llama3-8b"\nbatch_sise = 4\n')
    message = _error(["plan", "--workload", str(job)])
    assert message == f"{job}: unknown field 'batch_sise'; did you mean batch_size?"
    job.write_text('model = "llama3-8b"\nfoo = 1\nbar = 2\n')
    assert _error(["plan", "--workload", str(job)]) == f"{job}: unknown fields 'foo', 'bar'"
    base = 'model = "x"\n[shape]\nlayers = 2\nhidden = 64\nheads = 4\nvocab = 9\n'
    job.write_text(base + "width = 3\n")
    assert _error(["plan", "--workload", str(job)]).startswith(
        f"{job}: unknown shape field 'width'"
    )
    job.write_text(base + "experts = 8\n")  # MoE shapes come from the zoo
    assert _error(["plan", "--workload", str(job)]).startswith(
        f"{job}: unknown shape field 'experts'"
    )
    job.write_text('model = "x"\n[shape]\nlayers = 2\nhidden = 64\n')
    assert _error(["plan", "--workload", str(job)]) == f"{job}: shape lacks heads, vocab"


def test_two_keys_for_one_field_are_refused(tmp_path: Path) -> None:
    job = tmp_path / "job.toml"
    job.write_text('model = "llama3-8b"\ntp = 2\ntensor_parallel = 4\n')
    message = _error(["plan", "--workload", str(job)])
    assert message == f"{job}: tp and tensor_parallel both set tensor_parallel; give one of them"


def test_a_null_is_refused_where_the_field_cannot_be_none() -> None:
    with pytest.raises(InputError, match=r"^job: tensor_parallel must be a number, got null$"):
        workload_fields({"tensor_parallel": None}, "job")
    assert workload_fields({"seq_len": None, "fused_loss": None}, "job") == {
        "seq_len": None,
        "fused_loss": None,
    }


def _as_file(value: object) -> object:
    if isinstance(value, Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: _as_file(x) for k, x in dataclasses.asdict(value).items() if x is not None}
    return value


@pytest.mark.parametrize("name", list_presets())
def test_every_field_of_every_preset_converts_back_to_it(name: str) -> None:
    wl = preset(name)
    raw = {f.name: _as_file(getattr(wl, f.name)) for f in dataclasses.fields(Workload)}
    assert Workload(**workload_fields(raw, "p")) == wl
    # and as CSV text, every value a string
    text = {k: str(x).lower() if isinstance(x, bool) else str(x) for k, x in raw.items()}
    text = {k: x for k, x in text.items() if x != "None" and k != "shape"}
    assert Workload(**workload_fields(text, "p", text=True)) == dataclasses.replace(wl, shape=None)


def test_every_workload_field_and_short_name_is_a_key() -> None:
    names = {f.name for f in dataclasses.fields(Workload)}
    assert workload_keys() == names | set(KEY_ALIASES)
    assert set(KEY_ALIASES.values()) <= names
