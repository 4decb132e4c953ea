"""`gpurent estimate` and `gpurent calibrate` end to end through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli as run


def test_single_estimate_json_has_the_contract_fields() -> None:
    code, out, err = run(
        "estimate",
        "--model",
        "resnet50",
        "--gpu",
        "A100-SXM4-80GB",
        "--gpus",
        "8",
        "--precision",
        "fp16_amp",
        "--batch-size",
        "256",
        "--json",
    )
    assert code == 0, err
    doc = json.loads(out)
    for key in (
        "throughput",
        "throughput_unit",
        "step_time_s",
        "memory_per_gpu_gib",
        "fits",
        "bottleneck",
        "mfu",
        "memory",
        "scaling_efficiency",
        "basis",
    ):
        assert key in doc
    assert doc["throughput_unit"] == "images/s" and doc["num_gpus"] == 8
    assert doc["precision"] == "amp" and doc["fits"] is True


def test_human_output_and_presets() -> None:
    code, out, _ = run("estimate", "--preset", "llama-lora", "--gpu", "L40S")
    assert code == 0 and "tokens/s" in out and "time to finish" in out and "MFU" in out
    code, out, _ = run(
        "estimate",
        "--model",
        "llama2-70b",
        "--gpu",
        "A100",
        "--seq-len",
        "2048",
        "--batch-size",
        "1",
    )
    assert code == 0 and "does not fit by" in out
    code, out, _ = run("estimate", "--list-models", "--json")
    assert "llama3.1-405b" in json.loads(out)


def test_workload_file(tmp_path: Path) -> None:
    f = tmp_path / "job.yaml"
    f.write_text(
        "model: mpt-7b\nprecision: bf16\nbatch_size_per_gpu: 4\nseq_len: 2048\nsharding: fsdp\n"
    )
    code, out, err = run("estimate", "--workload", str(f), "--gpu", "H100", "--gpus", "8", "--json")
    assert code == 0, err
    assert 0 < json.loads(out)["mfu"] < 1


def test_csv_batch_keeps_order_and_reports_bad_rows(tmp_path: Path) -> None:
    f = tmp_path / "rows.csv"
    f.write_text(
        "model,gpu,num_gpus,precision,batch_size,seq_len,activation_checkpointing,sharding\n"
        "resnet50,A100,1,fp32_or_tf32,256,,,\n"
        "nosuchmodel,A100,1,amp,1,,,\n"
        "mpt-7b,H100,8,bf16,4,2048,true,fsdp\n"
        "bert-large-squad,RTX 4090,2,amp,x,,,\n"
        "gnmt,B200,1,tf32,128,,maybe,\n"
    )
    code, out, err = run("estimate", "--from-csv", str(f), "--json")
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == 5
    assert lines[0]["model"] == "resnet50" and lines[0]["throughput"] > 0
    assert lines[0]["mfu"] is None and lines[2]["mfu"] > 0
    assert "unknown model" in lines[1]["error"] and "rows.csv:3" in lines[1]["error"]
    assert lines[2]["fits"] is True and lines[2]["throughput_unit"] == "tokens/s"
    assert "error" in lines[3] and "error" in lines[4]


def test_csv_with_missing_columns_is_an_error(tmp_path: Path) -> None:
    f = tmp_path / "bad.csv"
    f.write_text("model,gpu\nresnet50,A100\n")
    code, _, err = run("estimate", "--from-csv", str(f), "--json")
    assert code == 2 and "num_gpus" in err and "Traceback" not in err


def test_bad_flags_give_one_line_errors() -> None:
    for args, needle in (
        (("--model", "resnet50", "--gpu", "Z9000"), "unknown GPU"),
        (("--model", "resnet50", "--gpu", "A100", "--precision", "fp64"), "precision"),
        (("--model", "resnet50"), "--gpu"),
        (("--gpu", "A100"), "--model"),
        (("--model", "resnet50", "--gpu", "A100", "--batch-size", "0"), "batch"),
        (("--model", "resnet50", "--gpu", "A100", "--sharding", "zero9"), "sharding"),
        (("--model", "resnet50", "--gpu", "A100", "--interconnect", "smoke"), "interconnect"),
    ):
        code, _, err = run("estimate", *args)
        assert code == 2, (args, err)
        assert needle in err and "Traceback" not in err


def test_help_teaches_with_examples() -> None:
    code, out, _ = run("estimate", "--help")
    assert code == 0 and "--from-csv" in out and "Examples" in out


def test_csv_rows_with_a_bad_sharding_or_stack_report_it_and_the_others_run(tmp_path: Path) -> None:
    f = tmp_path / "rows.csv"
    f.write_text(
        "model,gpu,num_gpus,precision,batch_size,sharding,stack\n"
        "resnet50,A100,1,amp,64,zero9,\n"
        "resnet50,A100,1,amp,64,,ngc-99\n"
        "mpt-7b,H100,8,bf16,4,FULL_SHARD,\n"
    )
    code, out, err = run("estimate", "--from-csv", str(f), "--json")
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert (
        "rows.csv:2: sharding: unknown sharding 'zero9'" in lines[0]["error"]
        and "zero3" in lines[0]["error"]
    )
    assert "rows.csv:3: stack" in lines[1]["error"] and "ngc-24" in lines[1]["error"]
    assert lines[2]["throughput"] > 0


def test_calibrate_add_list_clear_and_measured_basis(tmp_path: Path) -> None:
    csv_file = tmp_path / "mine.csv"
    csv_file.write_text(
        "model,gpu,num_gpus,precision,batch_size,throughput\nresnet50,H100,1,amp,256,3000\n"
    )
    code, out, err = run("calibrate", "add", str(csv_file))
    assert code == 0, err
    bench = tmp_path / "bench.json"
    bench.write_text(
        json.dumps(
            {
                "calibration_rows": [
                    {
                        "model": "bert-large-squad",
                        "gpu": "H100",
                        "num_gpus": 1,
                        "precision": "amp",
                        "batch_size": 32,
                        "throughput": 400.0,
                        "seq_len": 384,
                    }
                ]
            }
        )
    )
    assert run("calibrate", "add", str(bench))[0] == 0
    code, out, _ = run("calibrate", "list", "--json")
    assert {r["model"] for r in json.loads(out)} == {"resnet50", "bert-large-squad"}
    code, out, _ = run(
        "estimate", "--model", "resnet50", "--gpu", "H100", "--batch-size", "256", "--json"
    )
    doc = json.loads(out)
    assert doc["basis"] == "measured" and abs(doc["throughput"] - 3000) < 1e-6
    code, out, _ = run(
        "estimate",
        "--model",
        "resnet50",
        "--gpu",
        "H100",
        "--batch-size",
        "256",
        "--no-measured",
        "--json",
    )
    assert json.loads(out)["basis"] == "calibrated"
    assert run("calibrate", "clear")[0] == 0
    code, out, _ = run("calibrate", "list")
    assert "no measurements" in out


def test_calibrate_rejects_bad_files(tmp_path: Path) -> None:
    cases = {
        "a.csv": "model,gpu\nresnet50,H100\n",
        "b.csv": "model,gpu,num_gpus,precision,batch_size,throughput\nresnet50,H100,1,amp,8,-1\n",
        "c.json": '{"rows": []}',
        "d.json": "{not json",
        "e.csv": "model,gpu,num_gpus,precision,batch_size,throughput\nresnet50,Z1,1,amp,8,10\n",
    }
    for name, text in cases.items():
        p = tmp_path / name
        p.write_text(text)
        code, _, err = run("calibrate", "add", str(p))
        assert code == 2, (name, err)
        assert name in err and "Traceback" not in err
    code, _, err = run("calibrate", "add", str(tmp_path / "missing.csv"))
    assert code != 0 and "no such file" in err


def test_calibrate_add_of_a_cpu_bench_result_says_why_nothing_was_learned(tmp_path: Path) -> None:
    bench = tmp_path / "cpu.json"
    bench.write_text(json.dumps({"schema_version": 1, "calibration_rows": []}))
    code, _out, err = run("calibrate", "add", str(bench))
    assert code == 2
    assert "no GPU model-benchmark rows" in err and "run `gpurent bench` on the GPU" in err
