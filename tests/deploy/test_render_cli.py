"""`gpurent deploy render`: provenance, bad input as one line, nothing half-written."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from deploy_helpers import engines_bin, first_index
from tests.conftest import one_line_error, run_cli


def test_slurm_script_takes_every_value_from_the_plan(
    plan_file: Path, llama_plan: dict[str, Any], tmp_path: Path
) -> None:
    n = first_index(llama_plan, multi_node=True)
    c = llama_plan["top"][n - 1]
    out = tmp_path / "job"
    code, stdout, stderr = run_cli(
        "deploy",
        "render",
        str(plan_file),
        "--format",
        "slurm",
        "-o",
        str(out),
        "--candidate",
        str(n),
        "--command",
        "python finetune.py --lr 1e-4",
        "--checkpoint-dir",
        "/shared/ckpt",
    )
    assert code == 0, stderr
    assert f"plan candidate {n} of plan.json" in stdout
    text = (out / "job.sbatch").read_text()
    assert f"# From plan candidate {n} of plan.json: {c['provider']} {c['instance_type']}" in text
    assert f"#SBATCH --nodes={c['nodes']}\n" in text
    assert f"#SBATCH --gpus-per-node={c['gpus_per_node']}\n" in text
    assert ("#SBATCH --requeue\n" in text) == (c["pricing"] == "spot")
    limit = next(line for line in text.splitlines() if line.startswith("#SBATCH --time="))
    d, hms = limit.removeprefix("#SBATCH --time=").split("-")
    h, m, _ = hms.split(":")
    limit_s = int(d) * 86400 + int(h) * 3600 + int(m) * 60
    assert c["time_s"] * 1.25 + 1800 <= limit_s < c["time_s"] * 1.25 + 1800 + 60
    run = (
        f"gpurent run --nodes auto --nproc-per-node {c['gpus_per_node']} --checkpoint-dir "
        '/shared/ckpt --sync-dir /shared/ckpt/.gpurent-job/slurm-"$SLURM_JOB_ID" --log '
        '/shared/ckpt/gpurent-run-node-"$SLURM_PROCID".jsonl -- python finetune.py --lr 1e-4'
    )
    assert text.splitlines()[-1] == f"srun --kill-on-bad-exit=1 bash -c {shlex.quote(run)}"
    assert (out / "job.sbatch").stat().st_mode & 0o100


def test_json_result_names_the_candidate(plan_file: Path, tmp_path: Path) -> None:
    code, stdout, stderr = run_cli(
        "deploy",
        "render",
        str(plan_file),
        "--format",
        "slurm",
        "-o",
        str(tmp_path / "o"),
        "--json",
    )
    assert code == 0, stderr
    doc = json.loads(stdout)
    assert doc["candidate"]["index"] == 1
    assert doc["files"] == ["job.sbatch"]
    assert doc["command_given"] is False


def test_other_schema_version_is_one_line(plan_file: Path, tmp_path: Path) -> None:
    doc = json.loads(plan_file.read_text())
    doc["schema_version"] = "2"
    plan_file.write_text(json.dumps(doc))
    out = tmp_path / "o"
    one_line_error(
        *run_cli("deploy", "render", str(plan_file), "--format", "slurm", "-o", str(out)),
        "schema version '2'",
    )
    assert not out.exists()


def test_non_empty_directory_without_force_writes_nothing(plan_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    one_line_error(
        *run_cli("deploy", "render", str(plan_file), "--format", "slurm", "-o", str(out)),
        "not empty",
        "--force",
    )
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]
    code, _, stderr = run_cli(
        "deploy", "render", str(plan_file), "--format", "slurm", "-o", str(out), "--force"
    )
    assert code == 0, stderr
    assert sorted(p.name for p in out.iterdir()) == ["job.sbatch", "keep.txt"]


def test_unknown_format_and_candidate_out_of_range(plan_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    one_line_error(
        *run_cli("deploy", "render", str(plan_file), "--format", "slurmm", "-o", str(out)),
        "unknown format 'slurmm'",
        "slurm",
    )
    one_line_error(
        *run_cli(
            "deploy",
            "render",
            str(plan_file),
            "--format",
            "slurm",
            "-o",
            str(out),
            "--candidate",
            "999",
        ),
        "--candidate 999",
    )
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["plan.json"]  # no temp dir left behind


def test_not_a_plan_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    one_line_error(
        *run_cli("deploy", "render", str(bad), "--format", "slurm", "-o", str(tmp_path / "o")),
        "not a gpurent plan",
    )


@pytest.mark.parametrize(
    "fmt", ["skypilot", "dstack", "ansible", "kubernetes", "slurm", "torchrun"]
)
def test_plan_emit_writes_every_format_with_its_provenance(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, stdout, stderr = run_cli(
        "plan", "--preset", "llama-lora", "--json", "--emit", fmt, "-o", "job"
    )
    assert code == 0, stderr
    assert json.loads(stdout)["schema_version"] == "1"  # stdout stays the plan document
    assert f"wrote {fmt} to job/" in stderr and "plan candidate 1 of plan" in stderr
    written = list((tmp_path / "job").iterdir())
    assert written
    for path in written:
        assert "plan candidate 1 of plan:" in path.read_text()


def test_engine_tests_fail_in_ci_without_the_engines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPURENT_ENGINES_BIN", "/nonexistent/engines/bin")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="make engines"):
        engines_bin()
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception, match="make engines"):
        engines_bin()


def test_the_plans_storage_reaches_the_engines(tmp_path: Path) -> None:
    code, stdout, stderr = run_cli(
        "plan", "--preset", "llama-lora", "--storage-gb", "500", "--json"
    )
    assert code == 0, stderr
    doc = json.loads(stdout)
    assert doc["storage_gb_per_node"] == 500
    plan = tmp_path / "plan.json"
    plan.write_text(stdout)
    for fmt, expected in (("skypilot", "disk_size: 500\n"), ("dstack", "disk: 500GB\n")):
        out = tmp_path / fmt
        code, _, stderr = run_cli("deploy", "render", str(plan), "--format", fmt, "-o", str(out))
        assert code == 0, stderr
        assert expected in next(out.iterdir()).read_text()
    code, _, stderr = run_cli(
        "deploy",
        "render",
        str(plan),
        "--format",
        "kubernetes",
        "-o",
        str(tmp_path / "k"),
        "--storage-gb",
        "50",
    )
    assert code == 0, stderr
    assert "storage: 50G\n" in (tmp_path / "k" / "job.yaml").read_text()
