"""The hidden time and money of a plan (issue 15): setup time, billing rules, availability
confidence, commitment terms that `plan` and `pricing compare` bill alike, and `plan --csv`.
Through the CLI, on small --catalog files where exact prices matter."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from plan_cli import plan_json
from typer.testing import CliRunner

from gpurent.cli.main import app
from gpurent.cloud.billing import billing_rule
from gpurent.cloud.commitments import HOURS_PER_YEAR


def run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(app, list(args), env=env)


def catalog(tmp_path: Path, text: str) -> str:
    path = tmp_path / "offers.csv"
    path.write_text(text)
    return str(path)


HEADER = (
    "provider,instance_type,gpu,gpu_count,gpu_memory_gib,region,price_hour_usd,"
    "spot_price_hour_usd,network_gbps\n"
)
AWS = HEADER + "aws,g6e.xlarge,L40S,1,48,us-east-1,1.861,,\n"


# --- 1. setup time -----------------------------------------------------------------------


def test_setup_time_is_part_of_the_wall_time_and_each_part_has_a_source(tmp_path: Path):
    path = catalog(tmp_path, AWS)
    base = plan_json("--preset", "llama-lora", "--catalog", path, "--top", "1")["best"]
    more = plan_json(
        "--preset", "llama-lora", "--catalog", path, "--top", "1",
        "--dataset-gb", "100", "--model-gb", "16", "--download-gbps", "2",
    )["best"]  # fmt: skip
    s = more["setup"]
    assert s["dataset_s"] == pytest.approx(100 * 8 / 2)
    assert s["model_s"] == pytest.approx(16 * 8 / 2)
    assert s["provisioning_s"] == billing_rule("aws").provisioning_s
    assert more["time_s"] == pytest.approx(more["run_time_s"] + s["total_s"])
    assert more["time_s"] - base["time_s"] == pytest.approx(s["total_s"] - base["setup"]["total_s"])
    # billed as instance time, except provisioning (AWS bills from 'running')
    assert s["billed_s"] == pytest.approx(s["total_s"] - s["provisioning_s"])
    assert more["cost"]["setup_usd"] == pytest.approx(
        more["price_usd_per_hour"] * s["billed_s"] / 3600
    )
    assert set(s["sources"]) == {"provisioning", "image", "dataset", "model", "output"}
    assert "--dataset-gb" in s["sources"]["dataset"]


def test_multi_node_candidates_pay_setup_on_every_node(tmp_path: Path):
    text = HEADER + "aws,p5.48xlarge,H100,8,80,us-east-1,98.32,,3200\n"
    doc = plan_json(
        "--preset", "llama-lora", "--catalog", catalog(tmp_path, text),
        "--objective", "fastest", "--top", "1", "--model-gb", "16",
    )  # fmt: skip
    best = doc["best"]
    assert best["nodes"] > 1
    assert best["cost"]["setup_usd"] == pytest.approx(
        best["nodes"] * best["price_usd_per_hour"] * best["setup"]["billed_s"] / 3600
    )


def test_terminal_markdown_html_and_csv_show_the_breakdown(tmp_path: Path):
    path = catalog(tmp_path, AWS)
    args = ("plan", "--preset", "llama-lora", "--catalog", path, "--top", "1", "--egress-gb", "10")
    term = run(*args, env={"COLUMNS": "200"})
    assert term.exit_code == 0, term.stderr
    text = " ".join(term.stdout.split())
    assert "Where the time and money go" in text
    assert "setup" in text and "provisioning 2.0 min unbilled" in text
    assert "storage $" in text and "egress $0.900" in text  # 10 GB x AWS $0.09/GB
    md = run(*args, "--markdown")
    assert "## Where the time and money go" in md.stdout and "egress $0.900" in md.stdout
    html = tmp_path / "plan.html"
    assert run(*args, "--html", str(html)).exit_code == 0
    assert "Where the time and money go" in html.read_text()
    out = run(*args, "--csv")
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert len(rows) == 1 and rows[0]["provider"] == "aws"
    assert float(rows[0]["egress_usd"]) == pytest.approx(0.9)
    assert float(rows[0]["time_s"]) == pytest.approx(
        float(rows[0]["setup_s"]) + float(rows[0]["run_time_s"]), rel=1e-5
    )


# --- 2. billing rules --------------------------------------------------------------------


def test_egress_is_priced_by_destination(tmp_path: Path):
    path = catalog(tmp_path, AWS)
    common = ("--preset", "llama-lora", "--catalog", path, "--top", "1", "--egress-gb", "100")
    out = plan_json(*common)["best"]["cost"]["egress_usd"]
    region = plan_json(*common, "--egress-to", "region")["best"]["cost"]["egress_usd"]
    assert out == pytest.approx(9.0) and region == pytest.approx(2.0)
    bad = run("plan", *common, "--egress-to", "mars")
    assert bad.exit_code == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_billing_minimum_and_steps_are_the_providers():
    aws, lam = billing_rule("aws"), billing_rule("lambda")
    assert aws.billed_s(5) == 60 and aws.billed_s(61.2) == 62  # per second, 60 s minimum
    assert lam.billed_s(61) == 120  # per minute
    assert billing_rule("nosuch").provider == "others"


# --- 3. availability confidence ----------------------------------------------------------

MARKET = HEADER + (
    "acme,a,H100,1,80,r1,10,6,\n"
    "acme,b,H100,1,80,r2,10,6,\n"
    "acme,c,H100,1,80,r3,10,6,\n"
    "acme,cheap,H100,1,80,r4,10,1.5,\n"
)


def test_a_spot_price_far_below_the_usual_is_flagged_with_the_rate_assumed(tmp_path: Path):
    doc = plan_json(
        "--preset", "llama-lora", "--catalog", catalog(tmp_path, MARKET), "--pricing", "spot",
    )  # fmt: skip
    best = doc["best"]
    assert best["instance_type"] == "cheap"
    a = best["availability"]
    assert a["flag"] == "verify capacity; spot 85% off; usual 40% off"
    assert a["confidence"] == pytest.approx(0.15 / 0.6)
    assert a["interruptions_per_hour"] == pytest.approx(0.2)
    assert "spot defaults for acme" in a["interruption_rate_source"]
    usual = [c for c in doc["top"] if c["instance_type"] != "cheap"]
    assert usual and all(c["availability"]["flag"] == "" for c in usual)


def test_min_availability_drops_flagged_offers_and_passes_those_without_data(tmp_path: Path):
    path = catalog(tmp_path, MARKET)
    doc = plan_json(
        "--preset", "llama-lora", "--catalog", path, "--min-availability", "0.5",
    )  # fmt: skip
    assert all(c["instance_type"] != "cheap" or c["pricing"] == "on-demand" for c in doc["top"])
    assert any(c["pricing"] == "on-demand" for c in doc["top"])  # no data: passes
    only_cheap = catalog(tmp_path, HEADER + "acme,cheap,H100,1,80,r4,10,1.5,\n")
    none = run(
        "plan", "--preset", "llama-lora", "--catalog", only_cheap, "--pricing", "spot",
        "--min-availability", "0.5",
    )  # fmt: skip
    assert none.exit_code == 3 and "--min-availability" in none.stdout


# --- 4. commitment terms -----------------------------------------------------------------


def compare_committed(*args: str) -> dict:
    r = run("pricing", "compare", *args, "--json")
    assert r.exit_code == 0, r.stderr
    options = json.loads(r.stdout)["comparison"]["options"]
    return next(o for o in options if o["option"] == "committed")


@pytest.mark.parametrize(("term", "hours"), [("1y", HOURS_PER_YEAR), ("1d", 24.0)])
def test_plan_reserved_and_pricing_compare_bill_the_same_term_hours(term: str, hours: float):
    best = plan_json(
        "--preset", "llama-lora", "--provider", "aws", "--gpu", "L40S", "--max-nodes", "1",
        "--pricing", "reserved", "--commit-discount", "0.3", "--commit-term", term, "--top", "1",
    )["best"]  # fmt: skip
    job_h = best["time_s"] / 3600
    assert job_h < 24 and best["term_hours"] == pytest.approx(hours)
    plan_billed = best["cost"]["compute_usd"] / best["price_usd_per_hour"] / best["nodes"]
    committed = compare_committed(
        "--offer", f"aws/{best['instance_type']}/{best['region']}",
        "--commit-discount", "0.3", "--commit-term", term,
        "--hours-per-day", f"{job_h:.4f}", "--days-per-month", "1", "--months", "1",
    )  # fmt: skip
    assert plan_billed == pytest.approx(hours)
    assert committed["billed_hours"] == pytest.approx(plan_billed)
    assert committed["price_usd_per_hour"] == pytest.approx(best["price_usd_per_hour"])


def test_plan_uses_the_providers_shortest_term_by_default():
    best = plan_json(
        "--preset", "llama-lora", "--provider", "aws", "--gpu", "L40S", "--max-nodes", "1",
        "--pricing", "reserved", "--commit-discount", "0.3", "--top", "1",
    )["best"]  # fmt: skip
    assert best["term_hours"] == 24.0  # an EC2 Capacity Block, the shortest AWS term
    assert any("whole 24 h terms" in n for n in best["notes"])


def test_pricing_compare_names_the_terms_the_provider_sells():
    r = run(
        "pricing", "compare", "--offer", "aws/p3.2xlarge/us-east-1", "--commit-term", "1d",
        env={"COLUMNS": "200"},
    )  # fmt: skip
    assert r.exit_code == 0, r.stderr
    text = " ".join(r.stdout.split())
    assert "1-day term (EC2 Capacity Block for ML)" in text
    assert "terms aws sells (--commit-term): EC2 Capacity Block for ML, at least 1 day(s)" in text
    bad = run("pricing", "compare", "--on-demand", "3", "--commit-term", "soon")
    assert bad.exit_code == 2 and "--commit-term" in bad.stderr


def test_vast_prepay_discount_is_the_published_one(tmp_path: Path):
    text = HEADER + "vast,1x-L40S,L40S,1,48,EU,1.00,,\n"
    best = plan_json(
        "--preset", "llama-lora", "--catalog", catalog(tmp_path, text), "--pricing", "reserved",
    )["best"]  # fmt: skip
    assert best["price_usd_per_hour"] == pytest.approx(0.8)  # 20% off for 1 month
    assert best["term_hours"] == 730.0


def test_hybrid_line_uses_the_tables_on_demand_baseline():
    r = run(
        "pricing", "compare", "--on-demand", "3.06", "--spot", "0.92", "--commit-discount",
        "0.35", "--hybrid", "day:10:$3.06,night:14:$0.53", env={"COLUMNS": "200"},
    )  # fmt: skip
    assert r.exit_code == 0, r.stderr
    text = " ".join(r.stdout.split())
    # the table's on-demand row: 24 h x 30 d x 12 months x $3.06 = $26,438
    assert "on-demand │ 3.060 │ 3.060 │ 8,640 │ $26,438" in text
    assert "vs on-demand at the table's $3.06/h for the same 8,640 h $26,438 (48% less)" in text


# --- 5. tables readable at 80 columns ----------------------------------------------------

NARROW = {"COLUMNS": "80"}


def header_cells(out: str) -> list[str]:
    """The header row's cells of the first table in `out` (the line after the top border)."""
    lines = out.splitlines()
    top = next(i for i, line in enumerate(lines) if line.lstrip().startswith(("┏", "─")))
    row = lines[top + 1] if lines[top].lstrip().startswith("┏") else lines[top - 1]
    return [c.strip() for c in row.replace("┃", "│").split("│") if c.strip()] or row.split()


def assert_fits(out: str, width: int = 80) -> None:
    assert max(len(line) for line in out.splitlines()) <= width
    assert "…" not in out  # nothing cut to an ellipsis


def test_gpus_at_80_columns_drops_columns_by_priority_instead_of_cutting_all():
    r = run("gpus", env=NARROW)
    assert r.exit_code == 0, r.stderr
    assert_fits(r.stdout)
    kept = r.stdout.splitlines()[2].split()
    assert kept[:3] == ["GPU", "arch", "GiB"] and "fp16/bf16" in kept
    assert "V100-SXM2-16GB" in r.stdout  # whole names
    assert "not shown at 80 columns:" in r.stdout and "PCIe" in " ".join(r.stdout.split())
    wide = run("gpus", env={"COLUMNS": "200"})
    assert "not shown" not in wide.stdout and "PCIe" in wide.stdout


def test_plan_at_80_columns_keeps_whole_words():
    r = run("plan", "--preset", "llama-lora", "--top", "3", env=NARROW)
    assert r.exit_code == 0, r.stderr
    assert_fits(r.stdout)
    assert all(h in header_cells(r.stdout) for h in ("offer", "pricing", "time", "cost"))
    doc = plan_json("--preset", "llama-lora", "--top", "3")
    for c in doc["top"]:  # instance names stay whole, not folded mid-word
        assert c["instance_type"] in r.stdout


def test_monitor_findings_at_80_columns(tmp_path: Path):
    jl = tmp_path / "s.jsonl"
    jl.write_text(
        "\n".join(
            json.dumps(
                {"timestamp": i, "gpu": 0, "gpu_busy_pct": 100, "sm_util_pct": 20,
                 "cpu_util_pct": 97}
            )
            for i in range(5)
        )
    )  # fmt: skip
    r = run("monitor", "diagnose", str(jl), env={"COLUMNS": "40"})
    assert r.exit_code == 0, r.stderr
    assert_fits(r.stdout, 40)
    assert "activity" in r.stdout and "idle" in r.stdout


def test_pricing_compare_bills_each_launch_by_the_providers_rule_and_storage_while_stopped():
    r = run(
        "pricing", "compare", "--offer", "aws/p3.2xlarge/us-east-1", "--hours-per-day", "0.01",
        "--days-per-month", "10", "--months", "1", "--storage-gb", "100", "--json",
    )  # fmt: skip
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    od = next(o for o in doc["comparison"]["options"] if o["option"] == "on-demand")
    # 36 s a day is billed as AWS's 60 s minimum, ten launches
    assert od["billed_hours"] == pytest.approx(10 * 60 / 3600)
    assert doc["billing"]["provider"] == "aws" and doc["billing"]["minimum_s"] == 60
    assert doc["storage"]["cost_usd"] == pytest.approx(100 * 0.08 * 1)
    assert doc["storage"]["while_stopped"] is True


def test_a_marketplace_listing_far_below_the_usual_on_demand_is_flagged(tmp_path: Path):
    text = HEADER + (
        "aws,one-h100,H100,1,80,us-east-1,10,,\n"
        "gcp,one-h100,H100,1,80,us-central1,12,,\n"
        "vast,1x-H100,H100,1,80,EU,2.5,,\n"
        "vast,1x-H100-b,H100,1,80,US,8,,\n"
    )
    doc = plan_json(
        "--preset", "llama-lora", "--catalog", catalog(tmp_path, text), "--pricing", "on-demand",
    )  # fmt: skip
    by_type = {c["instance_type"]: c["availability"] for c in doc["top"]}
    cheap = by_type["1x-H100"]  # $2.5 against the clouds' median $11/GPU-h
    assert cheap["flag"] == "verify capacity; marketplace price 77% off"
    assert cheap["confidence"] == pytest.approx(min(2.5 / 11, 2.5 / 11 / 0.3 * 0.5))
    assert by_type["1x-H100-b"]["flag"] == "" and by_type["1x-H100-b"]["confidence"] > 0.5
    assert by_type["one-h100"]["confidence"] is None  # a cloud's on-demand list price: no data


def test_each_spot_restore_repeats_a_long_setup(tmp_path: Path):
    path = catalog(tmp_path, MARKET)
    common = ("--preset", "llama-lora", "--catalog", path, "--pricing", "spot", "--top", "1")
    short = plan_json(*common)["best"]
    long = plan_json(*common, "--dataset-gb", "500", "--download-gbps", "1")["best"]
    assert short["setup"]["total_s"] < 600  # the default 600 s restart covers a short setup
    # a new instance downloads the 500 GB again (4000 s) before it resumes, every interruption
    assert long["setup"]["dataset_s"] == pytest.approx(4000)

    def per_restore(c: dict) -> float:  # the renewal model's restart time per interruption
        return c["spot"]["restart_time_s"] / c["spot"]["expected_interruptions"]

    assert per_restore(short) == pytest.approx(600, rel=0.1)
    assert per_restore(long) > 0.9 * long["setup"]["dataset_s"]
    assert per_restore(long) > 5 * per_restore(short)
    given = plan_json(*common, "--dataset-gb", "500", "--download-gbps", "1", "--restart-s", "60")
    assert given["best"]["spot"]["restart_time_s"] < long["spot"]["restart_time_s"]
