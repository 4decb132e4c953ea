"""The model zoo, presets and workload files, through the public API."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpurent.errors import InputError, NotFoundError
from gpurent.workload import (
    Sharding,
    Task,
    get_model,
    list_models,
    list_presets,
    load_workload,
    parse_shape,
    preset,
)

REQUIRED = [
    "resnet50",
    "ssd",
    "bert-base-squad",
    "bert-large-squad",
    "bert-large-pretrain",
    "gnmt",
    "tacotron2",
    "waveglow",
    "transformer-xl-base",
    "transformer-xl-large",
    "ncf",
    "vit-b16",
    "gpt2",
    "mpt-125m",
    "mpt-350m",
    "mpt-760m",
    "mpt-1b",
    "mpt-3b",
    "mpt-7b",
    "mpt-13b",
    "mpt-30b",
    "mpt-70b",
    "llama2-7b",
    "llama2-13b",
    "llama2-70b",
    "llama3-8b",
    "llama3-70b",
    "llama3.1-405b",
    "mistral-7b",
]


def test_zoo_has_every_model_of_the_issue() -> None:
    assert set(REQUIRED) <= set(list_models())


@pytest.mark.parametrize(
    ("name", "billions"),
    [
        ("mpt-7b", 6.65),  # MosaicML table: 6,658,859,008
        ("mpt-70b", 64.86),
        ("llama2-7b", 6.74),
        ("llama3-8b", 8.03),
        ("llama2-70b", 68.98),
        ("llama3.1-405b", 405.9),
        ("mistral-7b", 7.24),
        ("bert-large-squad", 0.335),
        ("gpt2", 0.124),
    ],
)
def test_parameter_counts_match_published_sizes(name: str, billions: float) -> None:
    assert get_model(name).num_params / 1e9 == pytest.approx(billions, rel=0.03)


def test_costs_follow_sequence_length() -> None:
    bert = get_model("bert-large-pretrain")
    assert bert.forward_flops(512) > 4 * bert.forward_flops(128)  # attention is quadratic
    llm = get_model("llama3-8b")
    assert llm.forward_flops(4096) > 2 * llm.forward_flops(2048)
    assert llm.activation_values(4096, flash=False) > llm.activation_values(4096, flash=True)


def test_lambda_task_names_and_case_are_accepted() -> None:
    assert get_model("BERT_LARGE_SQUAD").name == "bert-large-squad"
    assert get_model("transformerxlbase").name == "transformer-xl-base"


def test_unknown_model_suggests_close_names() -> None:
    with pytest.raises(NotFoundError, match="resnet50"):
        get_model("resnet5")


def test_custom_shape_and_its_errors() -> None:
    m = get_model("custom:layers=32,hidden=4096,heads=32,vocab=50368")
    assert m.num_params == pytest.approx(get_model("mpt-7b").num_params)
    assert parse_shape("layers=2,hidden=64,heads=4,vocab=10,kv_heads=2").kv_heads == 2
    for bad in (
        "layers=2,hidden=64",
        "layers=x,hidden=64,heads=4,vocab=1",
        "layers=2,hidden=63,heads=4,vocab=10",
        "layers=2,hidden=64,heads=4,vocab=10,colour=3",
        "nonsense",
    ):
        with pytest.raises(InputError):
            get_model(f"custom:{bad}")


def test_presets_carry_work_amounts() -> None:
    assert set(list_presets()) == {
        "resnet50-imagenet",
        "bert-large-pretrain",
        "llama-lora",
        "llm-inference",
    }
    assert preset("llama-lora").task is Task.FINETUNE_LORA
    assert preset("llama-lora").token_budget == 100e6
    assert preset("resnet50-imagenet").epochs == 90
    with pytest.raises(NotFoundError):
        preset("nope")


def test_load_toml_and_yaml(tmp_path: Path) -> None:
    toml = tmp_path / "job.toml"
    toml.write_text(
        'model = "llama3-8b"\ntask = "finetune-qlora"\nprecision = "bf16"\n'
        'batch_size = 2\nseq_len = 4096\nsharding = "fsdp"\n'
        "activation_checkpointing = true\n"
    )
    wl = load_workload(toml)
    assert (wl.model, wl.task, wl.batch_size_per_gpu, wl.sharding, wl.name) == (
        "llama3-8b",
        Task.FINETUNE_QLORA,
        2,
        Sharding.ZERO3,
        "job",
    )
    yml = tmp_path / "job.yaml"
    yml.write_text("workload:\n  preset: resnet50-imagenet\n  batch_size_per_gpu: 128\n")
    wl2 = load_workload(yml)
    assert (wl2.model, wl2.batch_size_per_gpu, wl2.epochs) == ("resnet50", 128, 90)
    shaped = tmp_path / "shape.toml"
    shaped.write_text('model = "tiny"\n[shape]\nlayers = 2\nhidden = 64\nheads = 4\nvocab = 100\n')
    assert load_workload(shaped).shape is not None


@pytest.mark.parametrize(
    ("name", "text", "match"),
    [
        ("a.toml", 'model = "resnet50"\ncolour = 3\n', "unknown field"),
        ("b.toml", 'model = "resnet50"\ntask = "dreaming"\n', "task"),
        ("c.toml", 'model = "resnet50"\nbatch_size = "many"\n', "batch_size"),
        ("d.toml", "model = [\n", "TOML"),
        ("e.yaml", "model: [\n", "YAML"),
        ("f.txt", "model = 1\n", "end in"),
        ("g.toml", 'precision = "fp64"\nmodel = "resnet50"\n', "precision"),
        ("h.toml", 'task = "training"\n', "needs a model"),
        ("i.toml", 'model = "resnet50"\nactivation_checkpointing = "yes"\n', "true or false"),
    ],
)
def test_bad_workload_files_name_the_problem(
    tmp_path: Path, name: str, text: str, match: str
) -> None:
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(InputError, match=match):
        load_workload(p)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('preset = "lama-lora"\n', "unknown preset 'lama-lora'; did you mean llama-lora"),
        ('model = "resnt50"\n', "unknown model 'resnt50'; did you mean resnet50"),
        (
            'model = "tiny"\n[shape]\nlayers = 2\nhidden = 63\nheads = 4\nvocab = 100\n',
            "hidden 63 is not a multiple of heads 4",
        ),
    ],
)
def test_workload_file_errors_name_the_file(tmp_path: Path, text: str, match: str) -> None:
    p = tmp_path / "job.toml"
    p.write_text(text)
    with pytest.raises(InputError) as err:
        load_workload(p)
    assert err.value.message.startswith(f"{p}: ") and match in err.value.message


def test_a_bad_sharding_in_a_workload_file_names_the_file_and_the_choices(tmp_path: Path) -> None:
    job = tmp_path / "job.toml"
    job.write_text('model = "llama3-8b"\nsharding = "zero4"\n')
    with pytest.raises(InputError) as err:
        load_workload(job)
    message = str(err.value)
    assert str(job) in message and "'zero4'" in message and "zero3" in message
