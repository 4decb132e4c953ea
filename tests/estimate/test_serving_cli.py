"""`gpurent estimate --serve` end to end (issue 19): JSON, HTML, the workload file's [serve]
table, and one-line errors with the right exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli


def test_serve_preset_json_has_memory_curve_and_max_load() -> None:
    code, out, err = run_cli("estimate", "--serve", "llama3-8b-chat", "--gpu", "H100", "--json")
    assert code == 0, err
    doc = json.loads(out)
    mem = doc["memory"]
    assert mem["weights_gib"] > 14 and mem["kv_bytes_per_token"] == 131072  # 128 KiB, bf16
    assert mem["max_concurrency"] >= 1 and mem["kv_at_max_concurrency_gib"] > 0
    curve = doc["curve"]
    assert [p["concurrency"] for p in curve][:3] == [1, 2, 4]
    tokens = [p["output_tokens_per_s"]["value"] for p in curve]
    assert tokens == sorted(tokens)
    for p in curve:
        f = p["ttft_p99_ms"]
        assert f["low"] <= f["value"] <= f["high"]
    load = doc["max_load"]
    assert load["met"] and load["request_rate_per_s"]["value"] > 0
    assert load["limiting"] in ("ttft_p99_ms", "tpot_ms", "capacity")
    assert doc["replicas_needed"] >= 1  # the preset asks 20 req/s


def test_serve_terminal_output_and_html_plot(tmp_path: Path) -> None:
    page = tmp_path / "serve.html"
    code, out, err = run_cli(
        "estimate", "--serve", "llama3-70b-chat", "--gpu", "H100", "--gpus", "8", "--tp", "4",
        "--html", str(page),
    )  # fmt: skip
    assert code == 0, err
    text = " ".join(out.split())  # the terminal wraps at 80 columns
    assert "KV cache" in text and "max load" in text and "2 replica(s) x 4 GPU(s)" in text
    html = page.read_text(encoding="utf-8")
    assert html.count("<svg") == 2 and "TTFT p99" in html and "output tokens/s" in html


def test_serve_flags_override_the_preset() -> None:
    code, out, _ = run_cli(
        "estimate", "--serve", "llama3-8b", "--gpu", "L4", "--json",
        "--set", "weights=awq-int4", "--set", "prompt_tokens=uniform 100-300",
        "--set", "output_tokens=128", "--set", "concurrency=4", "--set", "engine=sglang",
    )  # fmt: skip
    assert code == 0
    doc = json.loads(out)
    assert doc["workload"]["weights"] == "awq-int4" and doc["workload"]["engine"] == "sglang"
    assert doc["workload"]["prompt_tokens"]["mean"] == 200
    assert doc["workload"]["concurrency"] == 4
    assert doc["requested"]["concurrency"] == 4  # the point at the asked concurrency
    assert doc["memory"]["weights_gib"] < 6


def test_serve_workload_file_with_a_length_histogram(tmp_path: Path) -> None:
    (tmp_path / "lengths.csv").write_text("tokens,weight\n200,3\n1000,1\n", encoding="utf-8")
    wl = tmp_path / "chat.toml"
    wl.write_text(
        '[serve]\nmodel = "mistral-7b"\nengine = "vllm"\nweights = "fp8"\n'
        'prompt_tokens = "histogram lengths.csv"\noutput_tokens = [50, 150]\n'
        "request_rate = 2\nttft_p99_ms = 2000\n",
        encoding="utf-8",
    )
    code, out, err = run_cli("estimate", "--serve", str(wl), "--gpu", "L40S", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["workload"]["name"] == "chat"
    assert doc["workload"]["prompt_tokens"]["mean"] == 400  # (3 x 200 + 1000) / 4
    assert doc["workload"]["output_tokens"]["label"] == "uniform 50-150"


def test_fp8_on_a_t4_is_one_line_naming_what_it_supports() -> None:
    code, out, err = run_cli(
        "estimate", "--serve", "llama3-8b", "--gpu", "T4", "--set", "weights=fp8"
    )
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "T4" in err and "supports fp16, int8" in err


def test_nvfp4_before_blackwell_is_refused() -> None:
    code, _, err = run_cli(
        "estimate", "--serve", "llama3-8b", "--gpu", "H100", "--set", "weights=nvfp4"
    )
    assert code == 2 and "Blackwell" in err and err.count("\n") == 1


def test_unknown_engine_and_field_say_did_you_mean() -> None:
    code, _, err = run_cli(
        "estimate", "--serve", "llama3-8b", "--gpu", "H100", "--set", "engine=vlm"
    )
    assert code == 2 and "did you mean vllm?" in err and err.count("\n") == 1
    code, _, err = run_cli(
        "estimate", "--serve", "llama3-8b", "--gpu", "H100", "--set", "ttft_p99=500"
    )
    assert code == 2 and "did you mean ttft_p99_ms" in err
    code, _, err = run_cli("estimate", "--serve", "llama3-8b-chta", "--gpu", "H100")
    assert code == 2 and "llama3-8b-chat" in err


def test_bad_values_are_one_line() -> None:
    for setting in ("request_rate=-1", "prefix_cache_hit_rate=2", "prompt_tokens=uniform 9-3"):
        code, _, err = run_cli(
            "estimate", "--serve", "llama3-8b", "--gpu", "H100", "--set", setting
        )
        assert code == 2 and err.count("\n") == 1, (setting, err)
    code, _, err = run_cli("estimate", "--serve", "llama3-8b", "--gpu", "H100", "--set", "oops")
    assert code == 2 and "KEY=VALUE" in err
    code, _, err = run_cli("estimate", "--model", "llama3-8b", "--gpu", "H100", "--set", "a=1")
    assert code == 2 and "--serve" in err


def test_an_slo_nothing_meets_exits_3_with_the_miss() -> None:
    code, out, err = run_cli(
        "estimate", "--serve", "llama3-8b", "--gpu", "L4", "--json",
        "--set", "prompt_tokens=4000", "--set", "ttft_p99_ms=50",
    )  # fmt: skip
    assert code == 3
    assert json.loads(out)["max_load"]["met"] is False  # the estimate is still printed
    assert "misses ttft_p99_ms by" in err and err.count("\n") == 1


def test_a_model_that_does_not_fit_exits_3() -> None:
    code, _, err = run_cli("estimate", "--serve", "llama3-70b", "--gpu", "L4")
    assert code == 3 and "does not fit" in err


def test_bench_serve_reads_the_estimate_json_as_its_expected_curve(tmp_path: Path) -> None:
    """`gpurent bench serve --expect FILE` takes the document `estimate --serve --json`
    writes: every curve row parses, in concurrency order, with the estimate's values."""
    from gpurent.bench.serve_verdict import parse_curve

    code, out, err = run_cli("estimate", "--serve", "llama3-8b-chat", "--gpu", "A100", "--json")
    assert code == 0, err
    doc = json.loads(out)
    points = parse_curve(doc, "estimate.json")
    assert [p.concurrency for p in points] == [row["concurrency"] for row in doc["curve"]]
    first = doc["curve"][0]
    assert points[0].values["ttft_p50_ms"] == first["ttft_p50_ms"]["value"]
    assert points[0].values["output_tok_s"] == first["output_tokens_per_s"]["value"]
