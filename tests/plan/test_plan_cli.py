"""`gpurent plan` end to end through the real CLI, estimator and bundled catalog."""

from __future__ import annotations

import json

import pytest
from plan_cli import plan_json
from plan_cli import run_plan as run
from typer.testing import CliRunner

from gpurent.catalog import bundled_offers
from gpurent.cli.main import app
from gpurent.cli.plan_cmds import parse_duration_s


def test_quick_start_preset_plans_on_the_bundled_catalog():
    doc = plan_json("--preset", "llama-lora")
    assert doc["feasible"] and doc["best"] == doc["top"][0]
    assert doc["stats"]["catalog_offers"] == len(bundled_offers())
    assert doc["objective"] == "cheapest"
    best = doc["best"]
    assert best["memory"]["total_gib"] <= best["memory"]["capacity_gib"]
    costs = [c["cost"]["total_usd"] for c in doc["top"]]
    assert costs == sorted(costs)
    assert doc["explanation"]["alternatives"]


def test_terminal_output_has_table_front_panel_and_assumptions():
    r = run("--preset", "llama-lora", "--top", "3")
    assert r.exit_code == 0, r.stderr
    assert r.stderr == ""  # the bundled snapshot's documented skips are not warned about
    for part in (
        "Ranked candidates",
        "Pareto front",
        "Recommendation",
        "prices dated",
        "Assumptions",
    ):
        assert part in r.stdout


@pytest.mark.parametrize("scenario", ["training", "cost-sensitive"])
def test_scenarios_compare_with_the_matrix(scenario):
    # `--scenario inference` is a serving plan: tests/plan/test_serving_plan_cli.py
    doc = plan_json("--scenario", scenario, "--top", "3")
    assert doc["scenario"] == scenario
    matrix = doc["explanation"]["matrix"]
    assert matrix["scenario"] == scenario and matrix["summary"].startswith(f"the {scenario} matrix")
    if not matrix["agrees"] and matrix["matrix_best"] is not None:
        assert any(ch.isdigit() for ch in matrix["summary"])


def test_deadline_objective_meets_the_deadline():
    doc = plan_json("--preset", "bert-large-pretrain", "--deadline", "2d", "--pricing", "on-demand")
    assert doc["objective"] == "deadline"
    assert all(c["time_s"] <= 2 * 86400 for c in doc["top"])
    assert all(c["meets_deadline"] for c in doc["top"])


def test_infeasible_memory_floor_gives_reasons_and_exit_3():
    r = run("--preset", "llama-lora", "--min-gpu-memory", "400", "--region", "us-")
    assert r.exit_code == 3
    assert "No plan meets the request" in r.stdout
    assert "no offer has >= 400 GiB per GPU in region us-" in r.stdout.replace("\n", " ")


def test_infeasible_deadline_shows_closest_alternatives():
    doc = plan_json("--preset", "bert-large-pretrain", "--deadline", "1min", code=3)
    assert not doc["feasible"] and doc["top"]
    assert "deadline" in doc["infeasible_reasons"][0]


def test_markdown_and_html(tmp_path):
    out = tmp_path / "plan.html"
    r = run("--preset", "llama-lora", "--markdown", "--html", str(out))
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith("# Plan for llama-lora")
    page = out.read_text()
    assert "<svg" in page and 'class="best"' in page


def test_catalog_file_is_used(tmp_path):
    csv = tmp_path / "offers.csv"
    csv.write_text(
        "provider,instance_type,gpu,gpu_count,gpu_memory_gib,region,price_hour_usd\n"
        "acme,one-l4,L4,1,24,moon-1,0.5\n"
        "acme,eight-h100,H100,8,80,moon-1,20\n"
        "acme,broken,H100,0,80,moon-1,20\n"
    )
    r = run("--preset", "llama-lora", "--catalog", str(csv), "--max-nodes", "1", "--json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["stats"]["catalog_offers"] == 2
    assert {c["provider"] for c in doc["top"]} == {"acme"}
    assert "skipped 1 unusable row" in r.stderr and ":4:" in r.stderr


def test_unusable_catalog_file_is_one_line_exit_1(tmp_path):
    csv = tmp_path / "offers.csv"
    csv.write_text("foo,bar\n1,2\n")
    r = run("--preset", "llama-lora", "--catalog", str(csv))
    assert r.exit_code == 1, r.stdout
    assert "unknown catalog format" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--preset", "llama-lora", "--deadline", "soon"], "--deadline"),
        (["--preset", "llama-lora", "--pricing", "barter"], "unknown pricing"),
        (["--preset", "nope"], "unknown preset"),
        (["--preset", "llama-lora", "--objective", "deadline"], "needs --deadline"),
        (["--preset", "llama-lora", "--catalog", "/nonexistent.csv"], "no such file"),
        (["--preset", "llama-lora", "--scenario", "gaming"], "unknown scenario"),
        (["--preset", "llama-lora", "--model", "llama3-8b"], "not several"),
        (["--preset", "llama-lora", "--max-gpus", "0"], "--max-gpus"),
        (["--preset", "llama-lora", "--gpu", "H9000"], "unknown GPU"),
        (["--preset", "llama-lora", "--commit-discount", "2"], "--commit-discount"),
        (["--preset", "llama-lora", "--task", "juggling"], "unknown task"),
        (["--preset", "llama-lora", "--objective", "cheapest,fastest"], "takes one value"),
        (["--preset", "llama-lora", "--interconnect", "carrier-pigeon"], "unknown interconnect"),
        (["--preset", "llama-lora", "--interconnect", ","], "--interconnect takes one value"),
        (["--preset", "llama-lora", "--interconnect", "nvlink,pcie"], "takes one value"),
        (["--preset", "llama-lora", "--html", "/nonexistent/dir/plan.html"], "no such file"),
    ],
)
def test_bad_input_is_one_line_exit_2(args, message):
    r = run(*args)
    assert r.exit_code == 2, r.stdout
    assert message in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_reserved_without_terms_explains_the_discount_flag():
    # vast publishes prepay discounts (cloud/commitments.py); the clouds' terms need a discount
    r = run("--preset", "llama-lora", "--pricing", "reserved", "--exclude-provider", "vast")
    assert r.exit_code == 3 and "--commit-discount" in r.stdout.replace("\n", " ")
    doc = plan_json("--preset", "llama-lora", "--pricing", "reserved", "--commit-discount", "0.3")
    assert doc["best"]["pricing"] == "reserved"


def test_help_teaches_with_examples():
    r = CliRunner().invoke(app, ["plan", "--help"])
    assert r.exit_code == 0
    assert "gpurent plan --preset llama-lora" in r.stdout and "--objective" in r.stdout


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("3d", 259200),
        ("72h", 259200),
        ("90min", 5400),
        ("1.5", 5400),
        ("1w", 604800),
        ("30s", 30),
        ("2 days", 172800),
    ],
)
def test_parse_duration(text, seconds):
    assert parse_duration_s(text) == seconds


def test_no_workload_says_what_to_give():
    r = run()
    assert r.exit_code == 2
    assert "--preset" in r.stderr and "--scenario" in r.stderr


def test_suspect_catalog_prices_are_flagged():
    doc = plan_json(
        "--preset",
        "llama-lora",
        "--provider",
        "gcp",
        "--gpu",
        "A100",
        "--region",
        "asia-northeast1",
        "--pricing",
        "on-demand",
        "--max-nodes",
        "1",
    )
    assert any(n.startswith("price suspect") for n in doc["best"]["notes"])
