"""A real Slurm cluster (.ci/slurm-up.sh: slurmctld, slurmd, munge on 127.0.0.1) runs sbatch
scripts rendered by `gpurent.deploy.render_slurm`, with the job under `gpurent run`.

Without a running cluster these tests are skipped, and fail under CI=true (.ci/run starts one).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpurent.deploy import DeploySpec, SlurmOptions, render_slurm

HERE = Path(__file__).parent
pytestmark = pytest.mark.slurm


def _need_slurm() -> None:
    reason = ""
    if shutil.which("sbatch") is None or shutil.which("sinfo") is None:
        reason = "Slurm is not installed; run .ci/slurm-up.sh (root, Debian) first"
    else:
        states = subprocess.run(
            ["sinfo", "-h", "-N", "-o", "%T"], capture_output=True, text=True, timeout=30,
            check=False,
        )  # fmt: skip
        usable = {"idle", "mixed", "allocated", "completing"}  # a busy node queues the job
        seen = {word.strip("*~#$@+") for word in states.stdout.split()}
        if states.returncode != 0 or not seen & usable:
            reason = f"no usable Slurm node ({(states.stdout + states.stderr).strip()[:120]})"
    if reason:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)
        pytest.skip(reason)


def _spec(tmp: Path, command: str, procs: int) -> DeploySpec:
    return DeploySpec(
        source="test", candidate_index=1, workload_name="tiny", model="linear",
        provider="onprem", instance_type="localhost", region="local",
        gpu_name="none", gpu_short_name="none", gpu_memory_gib=0.0,
        gpus_per_node=0, nodes=1, procs_per_node=procs, spot=False,
        price_usd_per_hour=0.0, wall_time_s=60.0,
        checkpoint_dir=str(tmp / "ckpt"), command=command, command_given=True,
        name="gpurent-test",
    )  # fmt: skip


def _submit(tmp: Path, spec: DeploySpec, options: SlurmOptions, env: dict[str, str]) -> str:
    """sbatch the rendered script and wait until the job ends."""
    (rendered,) = render_slurm(spec, options)
    script = tmp / rendered.path
    script.write_text(rendered.text)
    script.chmod(rendered.mode)
    return _sbatch(tmp, script, env)


def _sbatch(tmp: Path, script: Path, env: dict[str, str]) -> str:
    """sbatch `script` and wait until the job ends (polling `scontrol`, faster than
    `sbatch --wait`); a requeued job is made eligible at once instead of Slurm's delay."""
    full = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": os.pathsep.join(sys.path),
        "JOB_RESULT_DIR": str(tmp),
        "OMP_NUM_THREADS": "1",
        **env,
    }
    submitted = subprocess.run(
        ["sbatch", "--parsable", str(script)],
        cwd=tmp, env=full, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    job_id = submitted.stdout.strip().split(";")[0]
    deadline = time.monotonic() + 120
    kicked = False
    while (state := _job_field(job_id, "JobState")) not in FINAL:
        if state == "PENDING" and _job_field(job_id, "Restarts") not in {"", "0"} and not kicked:
            _scontrol("update", f"JobId={job_id}", "StartTime=now")
            kicked = True
        if time.monotonic() > deadline:
            _scontrol("cancel", job_id)
            pytest.fail(f"Slurm job {job_id} still {state} after 120 s\n{_logs(tmp)}")
        time.sleep(0.3)
    assert state == "COMPLETED", f"Slurm job {job_id} ended {state}\n{_logs(tmp)}"
    return job_id


FINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL"}


def _logs(tmp: Path) -> str:
    return "\n".join(p.read_text()[-4000:] for p in tmp.glob("*.out"))


def _scontrol(*args: str) -> str:
    return subprocess.run(
        ["scontrol", *args], capture_output=True, text=True, timeout=30, check=False
    ).stdout


def _job_field(job_id: str, field: str) -> str:
    match = re.search(rf"\b{field}=(\S+)", _scontrol("show", "job", job_id))
    return match.group(1) if match else ""


def test_rendered_sbatch_runs_a_two_process_cpu_job_under_gpurent_run(tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="the job trains a tiny torch model")
    _need_slurm()
    from .ddp_job import reference

    spec = _spec(tmp_path, f"{sys.executable} {HERE / 'ddp_job.py'} 6", procs=2)
    _submit(tmp_path, spec, SlurmOptions(gpus=False, requeue=False), {})
    expected = reference(6)
    for rank in (0, 1):
        result = json.loads((tmp_path / f"rank-{rank}.json").read_text())
        assert result["params"] == expected
    events = [
        json.loads(line)
        for line in (tmp_path / "ckpt" / "gpurent-run.jsonl").read_text().splitlines()
    ]
    assert [e["event"] for e in events if e["event"] in {"start", "done"}] == ["start", "done"]


def test_rendered_sbatch_requeued_after_its_first_attempt_resumes_and_completes(
    tmp_path: Path,
) -> None:
    _need_slurm()
    from .slurm_job import expected_total

    spec = _spec(tmp_path, f"{sys.executable} {HERE / 'slurm_job.py'} 12", procs=1)
    started = time.monotonic()
    job_id = _submit(
        tmp_path, spec, SlurmOptions(gpus=False, requeue=True), {"JOB_REQUEUE_AT": "5"}
    )
    assert _job_field(job_id, "Restarts") == "1"
    result = json.loads((tmp_path / "result.json").read_text())
    assert result == {
        "step": 12, "total": expected_total(12), "resumed_from": 5, "restart_count": 1,
    }  # fmt: skip
    assert time.monotonic() - started < 120


def test_rendezvous_from_the_environment_slurm_gives_each_task(tmp_path: Path) -> None:
    """`srun --ntasks=2` on the real cluster: each task's own variables map to its rank."""
    _need_slurm()
    code = (
        "import json, os; from gpurent.runtime.rendezvous import detect; "
        "r = detect(os.environ, nodes=2); "
        "print(json.dumps([r.source, r.node_rank, r.nnodes, r.master_addr, r.job_id]))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("MASTER_PORT", None)
    ran = subprocess.run(
        ["srun", "--ntasks=2", "--job-name=gpurent-rdzv", sys.executable, "-c", code],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    seen = sorted(json.loads(line) for line in ran.stdout.splitlines())
    assert [s[:4] for s in seen] == [["slurm", 0, 2, "localhost"], ["slurm", 1, 2, "localhost"]]
    assert seen[0][4] == seen[1][4] and str(seen[0][4]).startswith("slurm-")


def test_rendered_two_node_sbatch_restarts_both_tasks_from_the_step_both_can_load(
    tmp_path: Path,
) -> None:
    """A rendered 2-node script, both nodes' tasks on the one host (`tasks_per_host=2`): each
    task is a `gpurent run --nodes auto` node with its rank from Slurm's own variables; node 1's
    job fails at step 7 of the first generation, the whole job restarts from the step-5
    checkpoint (node 0 saves it into the shared directory, both load it) and both nodes finish
    with the exact result."""
    _need_slurm()
    from .slurm_job import expected_total

    spec = dataclasses.replace(
        _spec(tmp_path, f"{sys.executable} {HERE / 'slurm_job.py'} 12", procs=1), nodes=2
    )
    options = SlurmOptions(
        gpus=False,
        requeue=False,
        tasks_per_host=2,
        run_options=("--notice", "none", "--poll", "0.2", "--backoff", "0"),
    )
    env = {"JOB_FAIL_AT": "7", "JOB_FAIL_NODE": "1", "JOB_SAVE_NODE": "0"}
    job_id = _submit(tmp_path, spec, options, env)
    for rank in (0, 1):
        result = json.loads((tmp_path / f"result-node{rank}.json").read_text())
        assert (result["step"], result["total"]) == (12, expected_total(12))
        assert result["resumed_from"] == 5
        events = [
            json.loads(line)
            for line in (tmp_path / "ckpt" / f"gpurent-run-node-{rank}.jsonl")
            .read_text()
            .splitlines()
        ]
        rdzv = next(e for e in events if e["event"] == "rendezvous")
        assert (rdzv["source"], rdzv["node"], rdzv["nnodes"]) == ("slurm", rank, 2)
        assert rdzv["sync_dir"] == str(tmp_path / "ckpt" / ".gpurent-job" / f"slurm-{job_id}")
        agreed = [e for e in events if e["event"] == "agreed"]
        assert [(e["generation"], e["steps"], e["resume_step"]) for e in agreed] == [
            (1, [None, None], None),
            (2, [5, 5], 5),
        ]
