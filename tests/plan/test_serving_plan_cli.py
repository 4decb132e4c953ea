"""`gpurent plan --serve` and `--scenario inference` end to end through the real CLI, the
serving model and the bundled catalog."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from plan_cli import run_plan as run
from plan_cli import serve_json

ROOT = Path(__file__).resolve().parents[2]


def test_serve_preset_json_schema_and_price_provenance():
    doc = serve_json("--serve", "--preset", "llama3-8b-chat", "--top", "5")
    assert doc["kind"] == "serve-plan" and doc["schema_version"] == "1"
    assert doc["feasible"] and doc["best"] == doc["candidates"][0]
    assert len(doc["candidates"]) == 5
    best = doc["best"]
    assert best["replicas"] * best["load_per_replica_per_s"]["value"] * 0.9 >= 20
    assert best["interval"]["cost_low_usd_per_month"] <= best["cost_usd_per_month"]
    assert best["cost_usd_per_month"] <= best["interval"]["cost_high_usd_per_month"]
    assert best["as_of"] in doc["price_as_of"] and best["price_source"]
    assert isinstance(best["price_age_days"], int)
    assert doc["workload"]["slo"]["ttft_p99_ms"] == 500
    months = [c["cost_usd_per_month"] for c in doc["candidates"]]
    assert months == sorted(months)
    assert doc["explanation"]["headline"].startswith("Serve llama3-8b-chat at 20 req/s")


def test_flags_set_the_model_rate_lengths_and_slos():
    doc = serve_json(
        "--serve", "--model", "llama3-8b", "--rate", "5", "--prompt-tokens", "1024",
        "--output-tokens", "128", "--ttft-p99-ms", "800", "--tpot-ms", "60",
        "--engine", "sglang", "--quantization", "fp8", "--top", "3",
    )  # fmt: skip
    w = doc["workload"]
    assert (w["model"], w["engine"], w["weights"]) == ("llama3-8b", "sglang", "fp8")
    assert w["request_rate_per_s"] == 5 and w["prompt_tokens_mean"] == 1024
    assert w["slo"] == {"ttft_p50_ms": None, "ttft_p99_ms": 800, "tpot_ms": 60, "e2e_p99_s": None}
    # fp8 weights need fp8 tensor cores: no Ampere or older GPU is proposed
    assert all(
        not c["gpu_name"].startswith(("A100", "A10", "T4", "V100")) for c in doc["candidates"]
    )


def test_scenario_inference_is_a_serving_plan_compared_with_the_matrix():
    doc = serve_json("--scenario", "inference", "--top", "3")
    assert doc["kind"] == "serve-plan" and doc["workload"]["name"] == "llama3-8b-chat"
    matrix = doc["explanation"]["matrix"]
    assert matrix.startswith("the inference matrix says T4/A10 16-24 GB")
    assert all(c["gpu_memory_gib"] >= 8 for c in doc["candidates"])


def test_workload_file_with_a_serve_table(tmp_path):
    f = tmp_path / "chat.toml"
    f.write_text('[serve]\nmodel = "llama3-8b"\nrequest_rate = 3\nttft_p99_ms = 1000\n')
    doc = serve_json("--workload", str(f), "--top", "2")
    assert doc["workload"]["name"] == "chat" and doc["workload"]["request_rate_per_s"] == 3
    y = tmp_path / "chat.yaml"
    y.write_text("serve:\n  preset: llama3-8b-chat\n  request_rate: 4\n")
    doc = serve_json("--workload", str(y), "--top", "2")
    assert (
        doc["workload"]["name"] == "llama3-8b-chat" and doc["workload"]["request_rate_per_s"] == 4
    )


def test_an_slo_nothing_meets_exits_3_with_the_closest_in_one_line():
    r = run("--serve", "--preset", "llama3-8b-chat", "--ttft-p99-ms", "2")
    assert r.exit_code == 3
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1
    assert "no configuration meets ttft_p99_ms <= 2 ms: the closest" in err
    assert "x the target" in err


def test_a_quantization_no_offered_gpu_runs_exits_3_naming_why():
    r = run("--serve", "--preset", "llama3-8b-chat", "--gpu", "T4")
    assert r.exit_code == 3
    assert "no offer can run llama3-8b-chat: bf16 weights on T4" in r.stderr
    assert "T4 supports fp16" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_json_infeasible_document_then_exit_3():
    doc = serve_json("--serve", "--preset", "llama3-8b-chat", "--ttft-p99-ms", "2", code=3)
    assert not doc["feasible"] and doc["candidates"] == []
    assert doc["closest"]["limiting"] == "ttft_p99_ms" and doc["closest"]["miss"] > 1


def test_spot_prices_the_downtime_in():
    doc = serve_json("--serve", "--preset", "llama3-8b-chat", "--spot", "--top", "30")
    spot = [c for c in doc["candidates"] if c["pricing"] == "spot"]
    assert spot
    for c in spot:
        s = c["spot"]
        assert s["replicas"] == c["replicas"] > s["replicas_needed"] >= 1
        assert 0 < s["down_share"] < 0.1 and s["source"]
    assert any("spot replicas" in a for a in doc["assumptions"])


def test_traffic_profile_gives_the_schedule(tmp_path):
    f = tmp_path / "day.csv"
    rows = ["hour,share"] + [f"{h},{0.01 if h < 8 else 0.06}" for h in range(24)]
    f.write_text("\n".join(rows) + "\n")
    doc = serve_json(
        "--serve", "--preset", "llama3-8b-chat", "--traffic-profile", str(f), "--top", "3"
    )
    sch = doc["best"]["schedule"]
    assert [h["hour"] for h in sch["hours"]] == list(range(24))
    assert sch["hours"][0]["replicas"] < sch["hours"][12]["replicas"]
    assert sch["gpu_hours_free_per_day"] > 0 and 0 in sch["free_hours"]
    rates = [h["rate_per_s"] for h in sch["hours"]]
    assert sum(rates) / 24 == pytest.approx(20)
    r = run("--serve", "--preset", "llama3-8b-chat", "--traffic-profile", str(f))
    assert r.exit_code == 0 and "replica schedule of the pick" in r.stdout


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("hour,share\n0,1\n", "hours [1, 2, 3, 4, 5] missing"),
        ("when,share\n", "the header must be"),
        ("hour,req_s\n" + "".join(f"{h},0\n" for h in range(24)), "every hour is 0"),
        ("hour,req_s\n0,1\n0,2\n", "hour 0 given twice"),
        ("hour,req_s\n24,1\n", "hour"),
        ("hour,req_s\n0,-1\n", "req_s"),
    ],
)
def test_bad_traffic_profiles_are_one_line(tmp_path, text, needle):
    f = tmp_path / "p.csv"
    f.write_text(text)
    r = run("--serve", "--preset", "llama3-8b-chat", "--traffic-profile", str(f))
    assert r.exit_code == 2, r.stdout
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--serve", "--model", "llama3-8b"), "needs a request rate"),
        (("--serve",), "say what to serve"),
        (("--serve", "--preset", "llama3-8b-chat", "--headroom", "1"), "--headroom"),
        (("--serve", "--preset", "llama3-8b-chat", "--engine", "vlm"), "engine"),
        (("--serve", "--preset", "nope"), "serving preset"),
        (("--serve", "--preset", "llama3-8b-chat", "--rate", "-3"), "--rate"),
        (("--serve", "--preset", "llama3-8b-chat", "--emit", "skypilot", "-o", "x"), "--emit"),
        (("--serve", "--preset", "llama3-8b-chat", "--output-tokens", "lots"), "--output-tokens:"),
    ],
)
def test_bad_serving_input_is_one_line_exit_2(args, needle):
    r = run(*args)
    assert r.exit_code == 2, r.stdout
    assert needle in r.stderr and "Traceback" not in r.stderr


def test_markdown_csv_html_outputs(tmp_path):
    base = ("--serve", "--preset", "llama3-8b-chat", "--top", "4")
    md = run(*base, "--markdown")
    assert md.exit_code == 0 and md.stdout.startswith("# Serving plan: llama3-8b-chat")
    assert "## Pareto front" in md.stdout
    out = run(*base, "--csv")
    assert out.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert len(rows) == 4 and rows[0]["rank"] == "1"
    assert float(rows[0]["cost_usd_per_month"]) <= float(rows[-1]["cost_usd_per_month"])
    page = tmp_path / "serve.html"
    r = run(*base, "--html", str(page))
    assert r.exit_code == 0
    html = page.read_text()
    assert "<svg" in html and "p99 TTFT" in html


def test_terminal_output_fits_80_columns():
    r = run("--serve", "--preset", "llama3-8b-chat", "--top", "3")
    assert r.exit_code == 0
    assert "Serve llama3-8b-chat at 20 req/s" in r.stdout and "Assumptions" in r.stdout
    assert max(len(line) for line in r.stdout.splitlines()) <= 80
