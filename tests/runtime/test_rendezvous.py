"""Each engine's variables -> this node's rendezvous; bad or contradictory ones are one line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpurent.cli.main import app
from gpurent.errors import InputError
from gpurent.runtime.rendezvous import Rendezvous, count_nvidia_gpus, detect, expand_hostlist
from gpurent.runtime.supervisor import torchrun_argv


@pytest.mark.parametrize(
    ("text", "hosts"),
    [
        ("node[01-03,07]", ["node01", "node02", "node03", "node07"]),
        ("gpu7", ["gpu7"]),
        ("a[8-10],login", ["a8", "a9", "a10", "login"]),
        ("n[08-10]", ["n08", "n09", "n10"]),
        ("r[1-2]-n[1-2]", ["r1-n1", "r1-n2", "r2-n1", "r2-n2"]),
        ("x[3],y,z[0-1]", ["x3", "y", "z0", "z1"]),
    ],
)
def test_expand_hostlist(text: str, hosts: list[str]) -> None:
    assert expand_hostlist(text) == hosts


@pytest.mark.parametrize(
    "text", ["node[01-03", "node01]", "n[3-1]", "n[a-b]", "n[[1]]", "", "n[1-999999]"]
)
def test_bad_hostlist_is_input_error(text: str) -> None:
    with pytest.raises(InputError):
        expand_hostlist(text)


def test_skypilot() -> None:
    env = {
        "SKYPILOT_NODE_IPS": "10.0.0.5\n10.0.0.6\n10.0.0.7\n",
        "SKYPILOT_NODE_RANK": "2",
        "SKYPILOT_NUM_NODES": "3",
        "SKYPILOT_NUM_GPUS_PER_NODE": "8",
    }
    assert detect(env) == Rendezvous(
        source="skypilot", node_rank=2, nnodes=3, master_addr="10.0.0.5",
        master_port=29500, nproc_per_node=8,
    )  # fmt: skip


def test_dstack() -> None:
    env = {
        "DSTACK_NODES_IPS": "10.1.0.1\n10.1.0.2",
        "DSTACK_NODE_RANK": "1",
        "DSTACK_MASTER_NODE_IP": "10.1.0.1",
        "DSTACK_GPUS_PER_NODE": "4",
        "DSTACK_RUN_NAME": "train-7",
    }
    r = detect(env, nodes=2)
    assert (r.source, r.node_rank, r.nnodes, r.master_addr, r.nproc_per_node, r.job_id) == (
        "dstack", 1, 2, "10.1.0.1", 4, "train-7",
    )  # fmt: skip


def test_slurm_one_task_per_node() -> None:
    env = {
        "SLURM_JOB_ID": "4242",
        "SLURM_PROCID": "3",
        "SLURM_NTASKS": "4",
        "SLURM_NNODES": "4",
        "SLURM_NODEID": "3",
        "SLURM_JOB_NODELIST": "gpu[07-09,12]",
        "SLURM_GPUS_ON_NODE": "8",
        "SLURM_RESTART_COUNT": "1",
    }
    r = detect(env)
    assert (r.source, r.node_rank, r.nnodes, r.master_addr, r.nproc_per_node) == (
        "slurm", 3, 4, "gpu07", 8,
    )  # fmt: skip
    assert r.master_port == 20000 + 4242 % 20000
    assert r.job_id == "slurm-4242.1"
    assert detect({**env, "MASTER_PORT": "1234"}).master_port == 1234


def test_kubeflow_pet_and_plain_torchrun() -> None:
    pet = {"PET_NNODES": "2", "PET_NODE_RANK": "1", "PET_MASTER_ADDR": "job-master-0",
           "PET_MASTER_PORT": "23456", "PET_NPROC_PER_NODE": "4"}  # fmt: skip
    r = detect(pet)
    assert (r.node_rank, r.nnodes, r.master_addr, r.master_port, r.nproc_per_node) == (
        1, 2, "job-master-0", 23456, 4,
    )  # fmt: skip
    plain = {"MASTER_ADDR": "10.2.0.1", "MASTER_PORT": "29400", "WORLD_SIZE": "2", "RANK": "1"}
    r = detect(plain)
    assert (r.source, r.node_rank, r.nnodes, r.master_port) == ("torchrun", 1, 2, 29400)


def test_no_engine_is_one_node_and_gpus_from_cuda_visible_devices() -> None:
    r = detect({"CUDA_VISIBLE_DEVICES": "0,1,2"})
    assert (r.source, r.node_rank, r.nnodes, r.master_addr, r.nproc_per_node) == (
        "single", 0, 1, "127.0.0.1", 3,
    )  # fmt: skip
    assert detect({}).nproc_per_node == 1
    assert detect({}, local_gpus=8).nproc_per_node == 8  # what the driver lists
    assert detect({"CUDA_VISIBLE_DEVICES": "1"}, local_gpus=8).nproc_per_node == 1


def test_count_nvidia_gpus_lists_the_driver_folder(tmp_path: Path) -> None:
    for bus in ("0000:01:00.0", "0000:02:00.0"):
        (tmp_path / bus).mkdir()
    assert count_nvidia_gpus(str(tmp_path)) == 2
    assert count_nvidia_gpus(str(tmp_path / "absent")) is None


def test_run_nproc_auto_alone_is_one_node_with_the_visible_devices(tmp_path: Path) -> None:
    """The real CLI: read its start event, then stop it (SIGTERM: exit 75) without waiting for
    torchrun's workers."""
    env = {k: v for k, v in os.environ.items() if k not in {"MASTER_ADDR", "RANK", "NODE_RANK"}}
    env.update(
        {"CUDA_VISIBLE_DEVICES": "0,1", "WORLD_SIZE": "2", "PYTHONPATH": os.pathsep.join(sys.path)}
    )  # WORLD_SIZE: a stray variable; without --nodes this is one node all the same
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpurent", "run", "--notice", "none", "--nproc-per-node", "auto",
         "--json", "--grace", "1", "--", sys.executable, "-c", "pass"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    events: dict[str, dict[str, object]] = {}
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            record = json.loads(line)
            events.setdefault(record["event"], record)
            if record["event"] == "start":
                break
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        if proc.stdout is not None:
            proc.stdout.close()
    assert proc.returncode == 75
    rdzv, start = events["rendezvous"], events["start"]
    assert (rdzv["nnodes"], rdzv["nproc_per_node"]) == (1, 2)
    command = start["command"]
    assert isinstance(command, list)
    assert "--nproc-per-node=2" in command and "--nnodes=1" in command


@pytest.mark.parametrize(
    ("env", "nodes", "words"),
    [
        ({"SKYPILOT_NODE_IPS": "a\nb", "SKYPILOT_NODE_RANK": "2"}, None, "ranks 0..1"),
        (
            {"SKYPILOT_NODE_IPS": "a\nb", "SKYPILOT_NODE_RANK": "0", "SKYPILOT_NUM_NODES": "3"},
            None,
            "lists 2",
        ),
        ({"SKYPILOT_NODE_RANK": "0"}, None, "SKYPILOT_NODE_IPS is not"),
        (
            {"DSTACK_NODE_RANK": "0", "DSTACK_NODES_IPS": "a\nb", "DSTACK_MASTER_NODE_IP": "b"},
            None,
            "not the first",
        ),
        ({"SLURM_JOB_ID": "1", "SLURM_PROCID": "x", "SLURM_NTASKS": "2"}, None, "not a whole"),
        (
            {
                "SLURM_JOB_ID": "1",
                "SLURM_PROCID": "0",
                "SLURM_NTASKS": "2",
                "SLURM_JOB_NODELIST": "n[1-",
            },
            None,
            "not closed",
        ),
        ({"WORLD_SIZE": "2", "NODE_RANK": "1"}, None, "MASTER_ADDR"),
        ({"PET_NNODES": "1:4", "PET_MASTER_ADDR": "m"}, None, "elastic"),
        (
            {"MASTER_ADDR": "m", "WORLD_SIZE": "2", "RANK": "0", "MASTER_PORT": "70000"},
            None,
            "out of range",
        ),
        ({"MASTER_ADDR": "m", "WORLD_SIZE": "2", "RANK": "0"}, 4, "--nodes 4"),
        ({}, 2, "--nodes 2 but no engine"),
    ],
)
def test_bad_or_contradictory_env(env: dict[str, str], nodes: int | None, words: str) -> None:
    with pytest.raises(InputError, match=words.replace("..", r"\.\.")):
        detect(env, nodes=nodes)


def test_torchrun_argv_carries_the_rendezvous() -> None:
    r = detect({"MASTER_ADDR": "10.2.0.1", "WORLD_SIZE": "2", "NODE_RANK": "1"}, nproc_per_node=2)
    argv = torchrun_argv(["python", "train.py", "--lr", "1"], None, r)
    assert argv[1:3] == ["-m", "torch.distributed.run"]
    assert {"--nproc-per-node=2", "--nnodes=2", "--node-rank=1", "--master-addr=10.2.0.1",
            "--master-port=29500", "--max-restarts=0"} <= set(argv)  # fmt: skip
    assert argv[-3:] == ["train.py", "--lr", "1"]


@pytest.mark.parametrize(
    ("args", "env", "words"),
    [
        (["--nodes", "two"], {}, "--nodes must be auto or a whole number"),
        (["--nodes", "3"], {"MASTER_ADDR": "m", "WORLD_SIZE": "2", "RANK": "0"}, "says 2 node"),
        (["--nodes", "auto"], {"SKYPILOT_NODE_RANK": "1"}, "SKYPILOT_NODE_IPS"),
        (["--nproc-per-node", "0"], {}, "between 1 and"),
        (
            ["--nodes", "auto"],
            {"MASTER_ADDR": "m", "WORLD_SIZE": "2", "RANK": "0"},
            "needs --sync-dir",
        ),
        (["--sync-dir", "s"], {}, "for multi-node runs"),
    ],
)
def test_run_cli_bad_multinode_input_is_one_line_exit_2(
    args: list[str], env: dict[str, str], words: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("MASTER_ADDR", "WORLD_SIZE", "RANK", "NODE_RANK", "MASTER_PORT"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    r = CliRunner().invoke(app, ["run", "--notice", "none", *args, "--", "true"])
    assert r.exit_code == 2, r.output
    assert words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_run_with_an_unwritable_sync_dir_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    for key, value in {"MASTER_ADDR": "127.0.0.1", "WORLD_SIZE": "2", "NODE_RANK": "0"}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("MASTER_PORT", raising=False)
    r = CliRunner().invoke(
        app, ["run", "--notice", "none", "--nodes", "2", "--sync-dir", str(blocker / "sync"),
              "--", "true"],
    )  # fmt: skip
    assert r.exit_code == 2, r.output
    assert "cannot use the sync directory" in r.stderr and len(r.stderr.strip().splitlines()) == 1
