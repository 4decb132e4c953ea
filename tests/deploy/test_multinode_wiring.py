"""The rendered multi-node files run: each format's own job line, with the variables its engine
sets (as the engine documents them), started twice on 127.0.0.1 as two nodes. Both nodes must
find their rank through `gpurent run --nodes auto`, meet in one sync directory, and run the job
as one torchrun world of two processes (Slurm's script runs on a real cluster in
tests/runtime/test_slurm.py). A quick check without torch first: what each node's `gpurent run`
is given, and the rank it finds, Slurm's two tasks on one host included."""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from test_specs import cpu_spec

from gpurent.deploy import DeploySpec, render

JOB = """\
import json, os, sys
out = os.path.join(sys.argv[1], "rank-" + os.environ["RANK"] + ".json")
keys = ("RANK", "WORLD_SIZE", "GPURENT_NODE_RANK", "GPURENT_NNODES", "GPURENT_CHECKPOINT_DIR")
json.dump({k: os.environ.get(k) for k in keys}, open(out, "w"))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _node_lines(fmt: str, text: dict[str, str]) -> tuple[str, dict[str, str]]:
    """The shell text a node of `fmt` runs, and the variables the rendered file itself sets."""
    if fmt == "skypilot":
        task = yaml.safe_load(text["task.yaml"])
        return task["run"], {k: str(v) for k, v in task["envs"].items()}
    if fmt == "dstack":
        conf = yaml.safe_load(text[".dstack.yml"])
        env = dict(item.split("=", 1) for item in conf["env"])
        return conf["commands"][-1], env
    if fmt == "slurm":
        srun = text["job.sbatch"].rstrip("\n").splitlines()[-1]
        return shlex.split(srun)[-1], {"GPURENT_CHECKPOINT_DIR": "set by the script"}
    docs = list(yaml.safe_load_all(text["job.yaml"]))
    job = next(d for d in docs if d["kind"] == "Job")
    (container, _exporter) = job["spec"]["template"]["spec"]["containers"]
    _pip, _, line = container["command"][2].partition(" && ")
    return line, {e["name"]: e.get("value", "") for e in container["env"]}


def _downward_api(fmt: str, text: dict[str, str], rank: int) -> dict[str, str]:
    """What the Kubernetes Job controller gives each pod for the manifest's fieldRefs."""
    if fmt != "kubernetes":
        return {}
    docs = list(yaml.safe_load_all(text["job.yaml"]))
    job = next(d for d in docs if d["kind"] == "Job")
    pod = {
        "metadata.annotations['batch.kubernetes.io/job-completion-index']": str(rank),
        "metadata.labels['batch.kubernetes.io/controller-uid']": "0d5e-uid",
    }
    env = job["spec"]["template"]["spec"]["containers"][0]["env"]
    resolved = {
        e["name"]: pod[e["valueFrom"]["fieldRef"]["fieldPath"]] for e in env if "valueFrom" in e
    }
    # pod 0's name under the headless Service resolves to 127.0.0.1 here
    return {**resolved, "PET_MASTER_ADDR": "127.0.0.1"}


def _engine_env(fmt: str, rank: int) -> dict[str, str]:
    ips = "127.0.0.1\n127.0.0.1"
    if fmt == "skypilot":  # docs.skypilot.co, "Distributed Multi-Node Jobs"
        return {
            "SKYPILOT_NODE_IPS": ips,
            "SKYPILOT_NODE_RANK": str(rank),
            "SKYPILOT_NUM_NODES": "2",
            "SKYPILOT_NUM_GPUS_PER_NODE": "1",
            "SKYPILOT_TASK_ID": "sky-2026-12-01-job-7",
        }
    if fmt == "dstack":  # dstack docs, "Distributed tasks"
        return {
            "DSTACK_NODES_IPS": ips,
            "DSTACK_NODE_RANK": str(rank),
            "DSTACK_MASTER_NODE_IP": "127.0.0.1",
            "DSTACK_NODES_NUM": "2",
            "DSTACK_RUN_NAME": "gpurent-cpu-job-1",
        }
    if fmt == "torchrun":
        return {"NODE_RANK": str(rank)}
    if fmt == "slurm":  # what srun gives each of two tasks on one host (sbatch/srun man pages)
        return {
            "SLURM_JOB_ID": "4242",
            "SLURM_PROCID": str(rank),
            "SLURM_STEP_NUM_TASKS": "2",
            "SLURM_STEP_NODELIST": "localhost",
            "SLURM_NNODES": "1",
            "SLURM_NODEID": "0",  # the host's index: the same for both tasks
        }
    return {}


EXPECTED: dict[str, tuple[str, str]] = {  # format -> (rendezvous source, sync folder)
    "skypilot": ("skypilot", "sky-2026-12-01-job-7"),
    "dstack": ("dstack", "gpurent-cpu-job-1"),
    "kubernetes": ("torchrun", "0d5e-uid"),
    "torchrun": ("torchrun", "gpurent-job"),  # the job's name: no $GPURENT_JOB_ID given
    "slurm": ("slurm", "slurm-4242"),
}

GPURENT = f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m gpurent "$@"\n'
# Instead of gpurent: its argv and the rendezvous that `--nodes auto` would find, as JSON.
PROBE = (
    "import json, os, sys; from gpurent.runtime.rendezvous import detect; r = detect(os.environ); "
    "print(json.dumps({'argv': sys.argv[1:], 'rank': r.node_rank, 'nnodes': r.nnodes, "
    "'master': r.master_addr, 'source': r.source}))"
)


def _start_nodes(
    fmt: str, tmp: Path, text: dict[str, str], gpurent: str = GPURENT
) -> list[subprocess.Popen[str]]:
    """Both nodes of `fmt`'s job, each as its engine would start it; `gpurent` is the script
    that the job line's `gpurent` runs."""
    bindir = tmp / "bin"
    bindir.mkdir()
    shim = bindir / "gpurent"
    shim.write_text(gpurent)
    shim.chmod(0o755)
    base = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PET_", "MASTER_"))},
        "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join(sys.path),
        "MASTER_PORT": str(_free_port()),
        "OMP_NUM_THREADS": "1",
    }
    procs = []
    for rank in (0, 1):
        env = {**base, **_engine_env(fmt, rank)}
        if fmt == "torchrun":
            launch = tmp / "launch.sh"
            launch.write_text(text["launch.sh"])
            argv = ["bash", str(launch)]
        else:
            line, own = _node_lines(fmt, text)
            env.update(own)
            env.update(_downward_api(fmt, text, rank))
            argv = ["bash", "-c", line]
        procs.append(
            subprocess.Popen(
                argv, env=env, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
            )
        )
    return procs


FORMATS = ("skypilot", "dstack", "kubernetes", "torchrun")


def _spec_for(fmt: str, tmp: Path) -> DeploySpec:
    job = tmp / "job.py"
    job.write_text(JOB)
    (tmp / "results").mkdir()
    return cpu_spec(
        provider="aws",  # one SkyPilot and dstack know; the files run here all the same
        instance_type="m6i.large",
        region="us-east-1",
        procs_per_node=1,
        checkpoint_dir=str(tmp / "ckpt"),
        command=_spec_for_command(tmp),
        hosts=("127.0.0.1", "127.0.0.1") if fmt == "torchrun" else (),
    )


def test_each_node_of_a_rendered_job_finds_its_own_rank(tmp_path: Path) -> None:
    probe = f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -c {shlex.quote(PROBE)} "$@"\n'
    for fmt in (*FORMATS, "slurm"):
        tmp = tmp_path / fmt
        tmp.mkdir()
        text = {f.path: f.text for f in render(_spec_for(fmt, tmp), fmt)}
        source, folder = EXPECTED[fmt]
        procs = _start_nodes(fmt, tmp, text, probe)
        outs = [p.communicate(timeout=60)[0] for p in procs]
        nproc = "auto" if fmt == "skypilot" else "1"  # SkyPilot: $SKYPILOT_NUM_GPUS_PER_NODE
        for rank, (proc, out) in enumerate(zip(procs, outs, strict=True)):
            assert proc.returncode == 0, f"{fmt}: {out[-2000:]}"
            # seen once in CI: a node exited 0 having printed nothing; say which one
            assert out.strip(), f"{fmt}: node {rank} exited 0 and printed nothing"
            seen = json.loads(out.strip().splitlines()[-1])
            assert (seen["source"], seen["rank"], seen["nnodes"]) == (source, rank, 2), fmt
            argv = seen["argv"]
            assert argv[:5] == ["run", "--nodes", "auto", "--nproc-per-node", nproc], fmt
            ckpt = tmp / "ckpt"
            assert argv[argv.index("--sync-dir") + 1] == f"{ckpt}/.gpurent-job/{folder}", fmt
            assert argv[argv.index("--log") + 1] == f"{ckpt}/gpurent-run-node-{rank}.jsonl", fmt
            assert argv[argv.index("--") + 1 :] == shlex.split(_spec_for_command(tmp)), fmt


def _spec_for_command(tmp: Path) -> str:
    return shlex.join([sys.executable, str(tmp / "job.py"), str(tmp / "results")])


@pytest.mark.slow  # 8 torchrun agents importing torch: 10-30 s on 2 busy cores
def test_rendered_multi_node_jobs_run_as_one_job_of_two_nodes(tmp_path: Path) -> None:
    """Every format at once (8 process trees; the CPU, not the waiting, is what they cost)."""
    pytest.importorskip("torch", reason="gpurent run --nodes auto starts torchrun")
    started: dict[str, list[subprocess.Popen[str]]] = {}
    try:
        for fmt in FORMATS:
            tmp = tmp_path / fmt
            tmp.mkdir()
            text = {f.path: f.text for f in render(_spec_for(fmt, tmp), fmt)}
            started[fmt] = _start_nodes(fmt, tmp, text)
        outs = {
            fmt: [p.communicate(timeout=180)[0] for p in procs] for fmt, procs in started.items()
        }
    finally:
        for procs in started.values():
            for p in procs:
                if p.poll() is None:
                    p.kill()
    for fmt, procs in started.items():
        for p, out in zip(procs, outs[fmt], strict=True):
            assert p.returncode == 0, f"{fmt}: {out[-3000:]}"
        _check(fmt, tmp_path / fmt)


def _check(fmt: str, tmp: Path) -> None:
    ckpt = tmp / "ckpt"
    source, folder = EXPECTED[fmt]
    for rank in (0, 1):
        seen = json.loads((tmp / "results" / f"rank-{rank}.json").read_text())
        assert seen == {
            "RANK": str(rank),
            "WORLD_SIZE": "2",
            "GPURENT_NODE_RANK": str(rank),
            "GPURENT_NNODES": "2",
            "GPURENT_CHECKPOINT_DIR": str(ckpt),
        }, fmt
        log = ckpt / f"gpurent-run-node-{rank}.jsonl"
        events = [json.loads(line) for line in log.read_text().splitlines()]
        rdzv = next(e for e in events if e["event"] == "rendezvous")
        assert (rdzv["source"], rdzv["node"], rdzv["nnodes"]) == (source, rank, 2), fmt
        assert rdzv["sync_dir"] == str(ckpt / ".gpurent-job" / folder), fmt
        agreed = [e for e in events if e["event"] == "agreed"]
        assert [(e["generation"], e["steps"]) for e in agreed] == [(1, [None, None])], fmt
