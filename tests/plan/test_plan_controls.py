"""The plan controls people expect (issue 15): provider/region include and exclude, price caps,
memory and interconnect floors, and the precision plan and estimate share. Through the CLI, on
the bundled catalog (or a small --catalog file where the test needs exact prices)."""

from __future__ import annotations

import json
from pathlib import Path

from plan_cli import plan_json
from plan_cli import run_plan as run
from typer.testing import CliRunner

from gpurent.cli.main import app


def shown(doc: dict) -> list[dict]:
    return [*doc["top"], *doc["pareto"]]


def one_line(text: str) -> str:
    return " ".join(text.split())


# --- 1. providers and regions ------------------------------------------------------------


def test_unknown_region_hint_lists_whole_region_names_not_comma_pieces():
    r = run("--preset", "llama-lora", "--region", "ue-east")
    assert r.exit_code == 3
    out = one_line(r.stdout)
    assert "no offer in region ue-east" in out
    assert ", , " not in out and ": , CN" not in out  # the pieces of vast's "X, CN, AS" names
    (reason,) = plan_json("--preset", "llama-lora", "--region", "ue-east", code=3)[
        "infeasible_reasons"
    ]
    hint = reason.split("regions with offers: ", 1)[1]
    listed, more = hint.split(" (")
    names = listed.split("; ")  # separated so that commas stay inside names
    assert 1 <= len(names) <= 6
    assert names[0].startswith("us-east")  # the closest names first
    assert more.endswith(" regions in all)")


def test_vast_region_with_commas_is_one_region_case_insensitive():
    for given in ("Alberta, CA, NA", "alberta, ca, na"):
        doc = plan_json("--preset", "llama-lora", "--region", given, "--top", "3")
        assert doc["feasible"]
        assert {c["region"] for c in shown(doc)} == {"Alberta, CA, NA"}
        assert "regions: Alberta, CA, NA" in doc["constraints"]


def test_region_list_still_splits_on_commas_and_repeats_add():
    doc = plan_json("--preset", "llama-lora", "--region", "US-,europe-", "--top", "5")
    assert all(c["region"].lower().startswith(("us-", "europe-")) for c in shown(doc))
    doc = plan_json(
        "--preset", "llama-lora", "--region", "Alberta, CA, NA", "--region", "fin-", "--top", "20"
    )
    regions = {c["region"] for c in shown(doc)}
    assert regions <= {"Alberta, CA, NA", "FIN-01", "FIN-02", "FIN-03"}
    assert "Alberta, CA, NA" in regions or any(r.startswith("FIN-") for r in regions)


def test_exclude_provider_and_region():
    base = plan_json("--preset", "llama-lora", "--top", "5")
    first = base["top"][0]
    doc = plan_json("--preset", "llama-lora", "--top", "5", "--exclude-provider", first["provider"])
    assert doc["feasible"]
    assert all(c["provider"] != first["provider"] for c in shown(doc))
    assert f"excluded providers: {first['provider']}" in doc["constraints"]
    doc = plan_json("--preset", "llama-lora", "--top", "5", "--exclude-region", "FIN-,us-")
    assert all(not c["region"].lower().startswith(("fin-", "us-")) for c in shown(doc))
    assert "excluded regions: FIN-, us-" in doc["constraints"]


def test_excluding_a_provider_the_catalog_lacks_warns_on_stderr():
    r = run("--preset", "llama-lora", "--top", "1", "--exclude-provider", "nosuch,vast")
    assert r.exit_code == 0
    assert r.stderr.strip() == (
        "warning: --exclude-provider: no offer from nosuch in the catalog; nothing excluded for it"
    )


def test_excluding_every_provider_exits_3_with_the_reason():
    r = run("--preset", "llama-lora", "--provider", "aws", "--exclude-provider", "AWS")
    assert r.exit_code == 3
    assert "every offer from aws is excluded by --exclude-provider" in one_line(r.stdout)
    r = run("--preset", "llama-lora", "--region", "us-east-1", "--exclude-region", "us-")
    assert r.exit_code == 3
    assert "--exclude-region" in one_line(r.stdout)


def test_terminal_markdown_and_html_show_the_exclusions(tmp_path: Path):
    args = ("--preset", "llama-lora", "--top", "3", "--exclude-provider", "vast")
    r = run(*args)
    assert r.exit_code == 0, r.stderr
    assert "excluded providers: vast" in one_line(r.stdout)
    r = run(*args, "--markdown")
    assert "- excluded providers: vast" in r.stdout
    page = tmp_path / "plan.html"
    r = run(*args, "--html", str(page))
    assert r.exit_code == 0, r.stderr
    assert "excluded providers: vast" in page.read_text()


# --- 2. price caps -----------------------------------------------------------------------

OFFERS = (
    "provider,instance_type,gpu,gpu_count,gpu_memory_gib,region,price_hour_usd,"
    "spot_price_hour_usd,network_gbps\n"
    "acme,one-h100,H100,1,80,moon-1,10,1.5,\n"
    "acme,one-l4,L4,1,24,moon-1,3,,\n"
    "acme,eight-h100,H100,8,80,moon-1,40,12,400\n"
)


def catalog(tmp_path: Path) -> str:
    path = tmp_path / "offers.csv"
    path.write_text(OFFERS)
    return str(path)


def test_max_price_per_hour_caps_the_price_paid_spot_price_for_spot(tmp_path: Path):
    doc = plan_json(
        "--preset", "llama-lora", "--catalog", catalog(tmp_path), "--max-price-per-hour", "2"
    )
    assert doc["feasible"]
    rows = shown(doc)
    # the one-h100 on-demand ($10/h), the L4 ($3/h) and the eight-h100 are over the cap
    assert {(c["instance_type"], c["pricing"]) for c in rows} == {("one-h100", "spot")}
    assert all(c["price_usd_per_hour"] <= 2 for c in rows)
    assert "max price: $2.000/h per instance" in doc["constraints"]


def test_max_cluster_price_caps_all_nodes_together():
    cap = 25.0
    doc = plan_json(
        "--preset", "llama-lora", "--max-cluster-price-per-hour", f"{cap:g}",
        "--objective", "fastest", "--top", "10",
    )  # fmt: skip
    assert doc["feasible"]
    assert all(c["price_usd_per_hour"] * c["nodes"] <= cap + 1e-9 for c in shown(doc))
    assert max(c["price_usd_per_hour"] * c["nodes"] for c in shown(doc)) > cap / 4
    assert "max cluster price: $25.00/h (all nodes)" in doc["constraints"]
    uncapped = plan_json("--preset", "llama-lora", "--objective", "fastest", "--top", "1")
    best = uncapped["best"]
    assert best["price_usd_per_hour"] * best["nodes"] > cap  # the cap changed the answer


def test_a_price_cap_nothing_meets_exits_3_with_the_cheapest(tmp_path: Path):
    r = run("--preset", "llama-lora", "--catalog", catalog(tmp_path), "--max-price-per-hour", "1")
    assert r.exit_code == 3
    out = one_line(r.stdout)
    assert "no candidate costs at most $1.000/h per instance (--max-price-per-hour)" in out
    assert "the cheapest, acme one-h100 moon-1 spot, costs $1.500/h" in out
    doc = plan_json(
        "--preset", "llama-lora", "--catalog", catalog(tmp_path),
        "--max-cluster-price-per-hour", "1", code=3,
    )  # fmt: skip
    assert not doc["feasible"] and doc["best"] is None
    assert doc["top"] and doc["top"][0]["rank"] == 0  # the closest, unranked
    assert "(--max-cluster-price-per-hour)" in doc["infeasible_reasons"][0]


def test_bad_price_caps_are_one_line_exit_2():
    for flag in ("--max-price-per-hour", "--max-cluster-price-per-hour"):
        for bad in ("0", "-3", "nan", "inf", "cheap"):
            r = run("--preset", "llama-lora", flag, bad)
            assert r.exit_code == 2, (flag, bad, r.stdout)
            assert "Traceback" not in r.stderr
            assert len(r.stderr.strip().splitlines()) == 1, r.stderr
            assert flag in r.stderr


# --- 3. memory per GPU and the link between a node's GPUs --------------------------------


def link_of() -> dict[tuple[str, str], str]:
    from gpurent.catalog import bundled_offers

    return {(o.provider, o.instance_type): o.gpu_interconnect or "PCIe" for o in bundled_offers()}


def test_min_vram_is_per_gpu_memory():
    doc = plan_json("--preset", "llama-lora", "--min-vram", "100", "--top", "5")
    assert doc["feasible"]
    assert all(c["gpu_memory_gib"] >= 100 for c in shown(doc))
    assert "min GPU memory: 100 GiB" in doc["constraints"]
    assert min(c["gpu_memory_gib"] for c in plan_json("--preset", "llama-lora")["top"]) < 100


def test_interconnect_filters_on_the_catalogs_link_names():
    links = link_of()
    for want, word in (("nvlink", "nvlink"), ("pcie", "pcie"), ("infinity-fabric", "infinity")):
        doc = plan_json(
            "--model", "llama3-8b", "--tokens", "1e8", "--interconnect", want, "--top", "10"
        )
        assert doc["feasible"], want
        multi = [c for c in shown(doc) if c["gpus_per_node"] > 1]
        assert all(word in links[(c["provider"], c["instance_type"])].lower() for c in multi)
        assert f"interconnect: {want}" in doc["constraints"]
    # AMD's Infinity Fabric is no longer taken for PCIe
    pcie = plan_json("--model", "llama3-8b", "--tokens", "1e8", "--interconnect", "pcie")
    assert all("infinity" not in links[(c["provider"], c["instance_type"])].lower()
               for c in shown(pcie) if c["gpus_per_node"] > 1)  # fmt: skip


def test_interconnect_nothing_meets_exits_3(tmp_path: Path):
    path = tmp_path / "offers.csv"
    path.write_text(
        "provider,instance_type,gpu,gpu_count,gpu_memory_gib,region,price_hour_usd\n"
        "acme,eight-h100,H100,8,80,moon-1,40\n"
    )
    r = run("--preset", "llama-lora", "--catalog", str(path), "--interconnect", "pcie")
    assert r.exit_code == 3
    assert "no multi-GPU offer with pcie between its GPUs" in one_line(r.stdout)


def test_bad_min_vram_and_interconnect_are_one_line_exit_2():
    for args in (("--min-vram", "-1"), ("--min-vram", "lots"), ("--interconnect", "infiniband")):
        r = run("--preset", "llama-lora", *args)
        assert r.exit_code == 2, (args, r.stdout)
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
        # the option's first name (--min-vram is an alias of --min-gpu-memory)
        assert ("--min-gpu-memory" if args[0] == "--min-vram" else "interconnect") in r.stderr


# --- 4. precision ------------------------------------------------------------------------


def estimate_precision(*args: str) -> str:
    r = CliRunner().invoke(app, ["estimate", "--gpu", "H100", "--gpus", "8", *args, "--json"])
    assert r.exit_code == 0, r.stderr or r.stdout
    return str(json.loads(r.stdout)["precision"])


def test_plan_and_estimate_pick_the_same_default_precision():
    for model, task in (("llama3-70b", "finetune-full"), ("resnet50", "training")):
        planned = plan_json("--model", model, "--task", task, "--top", "1", "--max-nodes", "1")
        assert planned["workload"]["precision"] == estimate_precision(
            "--model", model, "--task", task
        ), model
    assert planned["workload"]["precision"] == "amp"  # a CNN keeps AMP; an LLM gets bf16


def test_precision_overrides_the_default_in_plan():
    base = plan_json("--preset", "llama-lora", "--top", "1")
    assert base["workload"]["precision"] == "bf16"
    doc = plan_json("--preset", "llama-lora", "--top", "1", "--precision", "FP32")
    assert doc["workload"]["precision"] == "fp32"
    # fp32 weights and activations take more memory per GPU than bf16 on the same offer
    assert doc["best"]["memory"]["total_gib"] != base["best"]["memory"]["total_gib"]
    r = run("--model", "llama3-8b", "--tokens", "1e8", "--precision", "fp8", "--top", "1")
    assert r.exit_code == 0, r.stderr
    assert "llama3-8b training, fp8" in one_line(r.stdout)


def test_bad_precision_is_one_line_exit_2():
    r = run("--preset", "llama-lora", "--precision", "fp12")
    assert r.exit_code == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "precision" in r.stderr
