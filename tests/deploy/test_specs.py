"""The renderers' Python API: a DeploySpec built directly (the Slurm API the multi-node tests
use), formats a candidate cannot be expressed in, and a rendered launch script that runs."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import run_cli

from gpurent.deploy import DeploySpec, SlurmOptions, render, render_slurm
from gpurent.errors import InputError


def cpu_spec(**changes: Any) -> DeploySpec:
    fields: dict[str, Any] = {
        "source": "test",
        "candidate_index": 1,
        "workload_name": "cpu job",
        "model": "tiny",
        "provider": "onprem",
        "instance_type": "cpu-node",
        "region": "lab",
        "gpu_name": "none",
        "gpu_short_name": "none",
        "gpu_memory_gib": 0.0,
        "gpus_per_node": 0,
        "nodes": 2,
        "procs_per_node": 2,
        "spot": False,
        "price_usd_per_hour": 0.0,
        "wall_time_s": 600.0,
        "checkpoint_dir": "/tmp/ckpt",
        "command": "python train.py --steps 10",
        "command_given": True,
    }
    fields.update(changes)
    return DeploySpec(**fields)


def test_slurm_api_for_a_cpu_job() -> None:
    (script,) = render_slurm(cpu_spec(), SlurmOptions(partition="debug", requeue=True))
    text = script.text
    assert script.path == "job.sbatch" and script.mode == 0o755
    assert "--gpus-per-node" not in text
    assert "#SBATCH --nodes=2\n" in text and "#SBATCH --partition=debug\n" in text
    assert "#SBATCH --requeue\n" in text
    assert "#SBATCH --time=0-00:43:00\n" in text  # 600 s x 1.25 + 1800 s = 42.5 min, rounded up
    # two nodes: one Slurm task each, every task gpurent run --nodes auto (rank $SLURM_PROCID)
    assert "#SBATCH --ntasks-per-node=1\n" in text
    srun = text.splitlines()[-1]
    assert srun.startswith("srun --kill-on-bad-exit=1 bash -c ")
    words = shlex.split(shlex.split(srun)[-1])
    assert words[:6] == ["gpurent", "run", "--nodes", "auto", "--nproc-per-node", "2"]
    assert words[words.index("--sync-dir") + 1] == "/tmp/ckpt/.gpurent-job/slurm-$SLURM_JOB_ID"
    assert words[words.index("--log") + 1] == "/tmp/ckpt/gpurent-run-node-$SLURM_PROCID.jsonl"
    assert words[words.index("--") :] == ["--", "python", "train.py", "--steps", "10"]
    assert "SLURM_NODEID" not in text and "torchrun" not in text
    assert subprocess.run(["bash", "-n"], input=text, text=True, check=False).returncode == 0
    (packed,) = render_slurm(cpu_spec(nodes=3), SlurmOptions(tasks_per_host=2))
    assert "#SBATCH --nodes=2\n#SBATCH --ntasks=3\n#SBATCH --ntasks-per-node=2\n" in packed.text
    with pytest.raises(InputError, match="tasks_per_host=3"):
        render_slurm(cpu_spec(), SlurmOptions(tasks_per_host=3))
    (no_gpus,) = render_slurm(cpu_spec(gpus_per_node=4), SlurmOptions(gpus=False))
    assert "--gpus-per-node" not in no_gpus.text and "--requeue" not in no_gpus.text


@pytest.mark.parametrize("fmt", ["skypilot", "dstack"])
def test_a_provider_the_engine_lacks_is_one_line(fmt: str, plan_file: Path, tmp_path: Path) -> None:
    doc = json.loads(plan_file.read_text())
    doc["top"][0]["provider"] = "tencentcloud"
    plan_file.write_text(json.dumps(doc))
    out = tmp_path / "o"
    code, _, stderr = run_cli("deploy", "render", str(plan_file), "--format", fmt, "-o", str(out))
    assert code == 2 and "'tencentcloud'" in stderr and "--candidate" in stderr
    assert stderr.count("\n") == 1 and not out.exists()


def test_wrong_host_count_is_refused() -> None:
    with pytest.raises(InputError, match="--hosts with 2 names"):
        render(cpu_spec(hosts=("a",)), "torchrun")
    with pytest.raises(InputError, match="--hosts with 1 names"):
        render(cpu_spec(nodes=1, hosts=("a", "b")), "torchrun")


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_rendered_launch_script_runs_the_job_under_gpurent_run(
    single_plan_file: Path, tmp_path: Path
) -> None:
    """One node, one process: the script execs `gpurent run -- COMMAND`, which runs it."""
    marker = tmp_path / "ran.txt"
    ckpt = tmp_path / "ckpt"
    job = f"{sys.executable} -c \"open('{marker}', 'w').write('ok')\""
    out = tmp_path / "job"
    code, _, stderr = run_cli(
        "deploy",
        "render",
        str(single_plan_file),
        "--format",
        "torchrun",
        "-o",
        str(out),
        "--command",
        job,
        "--checkpoint-dir",
        str(ckpt),
    )
    assert code == 0, stderr
    bindir = tmp_path / "bin"
    bindir.mkdir()
    shim = bindir / "gpurent"
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} -m gpurent "$@"\n')
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "NODE_RANK": "0"}
    done = subprocess.run(
        ["bash", str(out / "launch.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert marker.read_text() == "ok"
    assert (ckpt / "gpurent-run.jsonl").exists()


def test_plan_text_cannot_break_out_of_a_comment(single_plan_file: Path, tmp_path: Path) -> None:
    plan_file = single_plan_file
    """Values from the plan file go into shell-script comments: a newline stays in the comment."""
    doc = json.loads(plan_file.read_text())
    doc["top"][0]["instance_type"] = "x\ntouch /tmp/pwned\r\u2028y"
    doc["workload"]["name"] = "job\n#SBATCH --nodes=99"
    plan_file.write_text(json.dumps(doc))
    for fmt in ("slurm", "torchrun"):
        out = tmp_path / fmt
        code, _, stderr = run_cli("deploy", "render", str(plan_file), "-f", fmt, "-o", str(out))
        assert code == 0, stderr
        lines = next(out.iterdir()).read_text().splitlines()
        assert not [
            line for line in lines if "touch /tmp/pwned" in line and not line.startswith("#")
        ]
        assert "#SBATCH --nodes=99" not in lines
    code, _, stderr = run_cli(
        "deploy",
        "render",
        str(plan_file),
        "-f",
        "torchrun",
        "-o",
        str(tmp_path / "t2"),
        "--hosts",
        "a b",
    )
    assert code == 2 and "--hosts" in stderr
