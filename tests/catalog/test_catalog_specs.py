"""GPU spec lookups through the public API and `gpurent gpus`."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from gpurent.catalog import all_gpus, find_gpu, get_gpu
from gpurent.cli.main import app
from gpurent.errors import NotFoundError

runner = CliRunner()


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("H100", "H100-SXM5-80GB"),
        ("h100-sxm", "H100-SXM5-80GB"),
        ("NVIDIA H100 80GB HBM3", "H100-SXM5-80GB"),
        ("H100-SXM5-80GB", "H100-SXM5-80GB"),
        ("A100 80GB SXM4", "A100-SXM4-80GB"),
        ("RTX 4090", "RTX-4090"),
        ("rtx4090", "RTX-4090"),
        ("a100-80gb-pcie", "A100-PCIe-80GB"),
        ("AMD Instinct MI300X", "MI300X"),
        ("H100-MEGA", "H100-SXM5-80GB"),
    ],
)
def test_issue_aliases_resolve(name: str, canonical: str) -> None:
    assert get_gpu(name).name == canonical


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("H100 80GB PCIe Gen5", "H100-PCIe-80GB"),  # Lambda's system names
        ("8x H100 80GB SXM5", "H100-SXM5-80GB"),
        ("LambdaCloud A100 40GB PCIe", "A100-PCIe-40GB"),
        ("B200 192GB", "B200-180GB"),  # early material's 192 GB, within 10 % of 180
        ("H100 SXM5", "H100-SXM5-80GB"),
        ("A100 PCIe 80GB", "A100-PCIe-80GB"),
        ("NVIDIA GeForce RTX 3090 24GB", "RTX-3090"),
        ("H100 94GB", "H100-NVL-94GB"),
        ("RTX 6000 Ada 48GB", "RTX-6000-Ada"),
        ("H100 80GB HBM3 SXM5", "H100-SXM5-80GB"),  # a memory type that agrees
        ("NVIDIA GH200 HBM3", "GH200-96GB"),
    ],
)
def test_names_in_other_word_orders_resolve_when_they_name_one_gpu(
    name: str, canonical: str
) -> None:
    assert get_gpu(name).name == canonical


@pytest.mark.parametrize(
    "name",
    [
        "Quadro RTX 8000",  # not in the catalog
        "V100 16GB PCIe SXM2",  # contradicts itself
        "LambdaCloud V100 16GB",  # SXM2 or PCIe: ambiguous
        "A100 96GB",  # no A100 has that memory
        "H100 80GB SXM5 pytorch_24.03",  # a word no name of the GPU uses
        "GH200 HBM3e",  # the 144 GB HBM3e GH200 (4.9 TB/s), not the catalog's 96 GB HBM3 one
        "RTX 4090 GDDR6",  # a memory type that contradicts the GPU's (GDDR6X)
    ],
)
def test_ambiguous_or_contradicting_names_are_not_guessed(name: str) -> None:
    assert find_gpu(name) is None
    with pytest.raises(NotFoundError):
        get_gpu(name)


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        # the spellings of the bundled offers (offers.csv `gpu`) that had no row before session 3
        ("RTX6000", "Quadro-RTX-6000"),  # Lambda's gpu_1x_rtx6000: the Turing card, 24 GB
        ("RTX5090", "RTX-5090"),
        ("RTXPRO6000", "RTX-PRO-6000-Blackwell"),
        ("A5000", "RTX-A5000"),
        ("A4000", "RTX-A4000"),
        ("RTX3070", "RTX-3070"),
        ("B300", "B300-288GB"),
        ("GB200", "GB200"),
        ("GB300", "GB300"),
        ("MI355X", "MI355X"),
        # the usual spellings
        ("Quadro RTX 6000", "Quadro-RTX-6000"),
        ("RTX 6000", "Quadro-RTX-6000"),  # without 'Ada' it is the Turing card
        ("NVIDIA Quadro RTX 6000 24GB", "Quadro-RTX-6000"),
        ("GeForce RTX 5090", "RTX-5090"),
        ("NVIDIA GeForce RTX 5090 32GB", "RTX-5090"),
        ("NVIDIA RTX PRO 6000 Blackwell", "RTX-PRO-6000-Blackwell"),
        ("NVIDIA RTX A5000", "RTX-A5000"),
        ("NVIDIA RTX A4000", "RTX-A4000"),
        ("GeForce RTX 3070", "RTX-3070"),
        ("HGX B300", "B300-288GB"),
        ("AMD Instinct MI355X", "MI355X"),
    ],
)
def test_session3_gpus_resolve(name: str, canonical: str) -> None:
    assert get_gpu(name).name == canonical


@pytest.mark.parametrize("name", ["RTX 6000 Ada", "RTX6000-Ada", "RTX 6000 Ada 48GB"])
def test_the_ada_card_keeps_its_names(name: str) -> None:
    assert get_gpu(name).name == "RTX-6000-Ada"


def test_every_bundled_offer_gpu_has_a_row() -> None:
    """Since session 16 the Pascal cards (P100, P40, P4) and the RTX 3060 have rows too."""
    from gpurent.catalog import bundled_offers

    unknown = {o.gpu_name for o in bundled_offers() if find_gpu(o.gpu_name) is None}
    assert not unknown, unknown


def test_plan_estimates_a_session3_gpu_on_the_bundled_catalog() -> None:
    r = runner.invoke(app, ["plan", "--preset", "resnet50-imagenet", "--gpu", "RTX5090", "--json"])
    assert r.exit_code == 0, r.stderr or r.stdout
    doc = json.loads(r.stdout)
    assert doc["feasible"] and doc["top"]
    assert {p["gpu_name"] for p in doc["top"]} == {"RTX-5090"}
    assert doc["best"]["time_s"] > 0 and doc["best"]["cost"]["total_usd"] > 0


def test_unknown_name_lists_closest() -> None:
    with pytest.raises(NotFoundError) as err:
        get_gpu("H10")
    assert "H100" in err.value.suggestions
    assert find_gpu("H10") is None


@given(st.sampled_from([a for g in all_gpus() for a in (g.name, *g.aliases)]), st.data())
def test_any_alias_resolves_whatever_the_case_and_separators(
    alias: str, data: st.DataObject
) -> None:
    flips = data.draw(st.lists(st.booleans(), min_size=len(alias), max_size=len(alias)))
    mangled = "".join(c.upper() if f else c.lower() for c, f in zip(alias, flips, strict=True))
    mangled = mangled.replace(" ", data.draw(st.sampled_from([" ", "-", "_", ""])))
    assert get_gpu(mangled) == get_gpu(alias)


def test_every_spec_is_complete_and_dense() -> None:
    specs = all_gpus()
    assert len(specs) >= 24
    assert len({g.name for g in specs}) == len(specs)
    for g in specs:
        assert g.memory_gib > 0 and g.memory_bandwidth_gbps > 0 and g.tdp_w > 0
        assert g.fp16_tflops >= g.fp32_tflops, g.name
        assert g.source and g.confidence in {"high", "medium", "low"}
        if g.fp8_tflops is not None:
            assert g.fp8_tflops >= g.fp16_tflops


def test_gpus_json_filters() -> None:
    r = runner.invoke(app, ["gpus", "--min-memory", "80", "--vendor", "nvidia", "--json"])
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["count"] == len(out["gpus"]) > 0
    assert all(g["memory_gib"] >= 80 and g["vendor"] == "nvidia" for g in out["gpus"])
    assert {"name", "fp16_tflops", "fp8_tflops", "interconnect", "pcie_gen", "tdp_w"} <= set(
        out["gpus"][0]
    )


def test_gpus_table_arch_and_name_filters() -> None:
    r = runner.invoke(app, ["gpus", "--arch", "hopper", "--name", "nvl"])
    assert r.exit_code == 0
    assert "H100-NVL" in r.stdout and "A100" not in r.stdout


def test_gpus_show_and_unknown() -> None:
    r = runner.invoke(app, ["gpus", "show", "NVIDIA H100 80GB HBM3", "--json"])
    assert r.exit_code == 0
    assert json.loads(r.stdout)["name"] == "H100-SXM5-80GB"
    bad = runner.invoke(app, ["gpus", "show", "RTX 4900"])
    assert bad.exit_code == 2
    assert bad.stderr.count("\n") == 1
    assert "unknown GPU 'RTX 4900'" in bad.stderr and "RTX 4090" in bad.stderr
