"""dstack, Kubernetes, Ansible and torchrun files, checked by the engines' own code."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from deploy_helpers import engine_python, engine_tool, first_index, render
from tests.conftest import run_cli

DSTACK = """
import json, sys, yaml
from dstack._internal.core.models.configurations import parse_run_configuration
conf = parse_run_configuration(yaml.safe_load(open(sys.argv[1])))
gpu = conf.resources.gpu
print(json.dumps({"type": conf.type, "nodes": conf.nodes, "gpu_names": gpu.name,
    "gpu_count": gpu.count.min, "spot_policy": conf.spot_policy.value,
    "max_price": conf.max_price, "retry_events": [e.value for e in conf.retry.on_events],
    "min_gpu_utilization": conf.utilization_policy.min_gpu_utilization,
    "max_duration_s": conf.max_duration, "backends": [b.value for b in conf.backends],
    "regions": conf.regions, "instance_types": conf.instance_types,
    "commands": conf.commands}))
"""


@pytest.mark.parametrize("multi_node", [False, True])
def test_dstack_configuration_models_accept_the_task(
    plan_file: Path, llama_plan: dict[str, Any], tmp_path: Path, multi_node: bool
) -> None:
    n = first_index(llama_plan, multi_node=multi_node)
    c = llama_plan["top"][n - 1]
    out = render(plan_file, "dstack", tmp_path / "job", "--candidate", str(n))
    done = engine_python(DSTACK, str(out / ".dstack.yml"))
    assert done.returncode == 0, done.stderr[-2000:]
    conf = json.loads(done.stdout)
    assert conf["type"] == "task"
    assert conf["nodes"] == c["nodes"]
    assert conf["gpu_count"] == c["gpus_per_node"]
    assert conf["spot_policy"] == ("spot" if c["pricing"] == "spot" else "on-demand")
    assert conf["max_price"] == pytest.approx(round(c["price_usd_per_hour"] * 1.10, 2))
    assert conf["retry_events"] == ["interruption", "error"]
    assert conf["regions"] == [c["region"]]
    assert conf["instance_types"] == [c["instance_type"]]
    assert conf["max_duration_s"] >= c["time_s"] * 1.25 + 1800
    assert any("gpurent run" in cmd for cmd in conf["commands"])


def test_dstack_rejects_a_broken_task(plan_file: Path, tmp_path: Path) -> None:
    """The check is real: dstack's models refuse the same file with a bad spot policy."""
    out = render(plan_file, "dstack", tmp_path / "job")
    path = out / ".dstack.yml"
    path.write_text(path.read_text().replace("spot_policy: spot", "spot_policy: sometimes"))
    assert engine_python(DSTACK, str(path)).returncode != 0


@pytest.mark.parametrize("multi_node", [False, True])
def test_kubernetes_manifests_pass_the_official_schemas(
    plan_file: Path, llama_plan: dict[str, Any], tmp_path: Path, multi_node: bool
) -> None:
    n = first_index(llama_plan, multi_node=multi_node)
    c = llama_plan["top"][n - 1]
    out = render(plan_file, "kubernetes", tmp_path / "job", "--candidate", str(n))
    done = engine_tool("kubernetes-validate", "--strict", str(out / "job.yaml"))
    assert done.returncode == 0, done.stdout + done.stderr
    kinds = [line for line in done.stdout.splitlines() if " passed for resource " in line]
    assert len(kinds) == (3 if multi_node else 2), done.stdout
    text = (out / "job.yaml").read_text()
    assert f"nvidia.com/gpu: '{c['gpus_per_node']}'" in text
    assert f"node.kubernetes.io/instance-type: {c['instance_type']}" in text
    assert ("completionMode: Indexed" in text) == multi_node
    assert "gpurent-exporter" in text
    assert f"--price-usd-per-hour {c['price_usd_per_hour']:g} --listen 0.0.0.0" in text
    assert "name: GPURENT_EXPORTER_TOKEN" in text and "secretKeyRef" in text


def test_kubernetes_validator_rejects_a_broken_manifest(plan_file: Path, tmp_path: Path) -> None:
    out = render(plan_file, "kubernetes", tmp_path / "job")
    path = out / "job.yaml"
    path.write_text(path.read_text().replace("backoffLimit: 3", "backoffLimit: three"))
    assert engine_tool("kubernetes-validate", "--strict", str(path)).returncode != 0


@pytest.fixture()
def ansible_out(plan_file: Path, llama_plan: dict[str, Any], tmp_path: Path) -> Path:
    n = first_index(llama_plan, multi_node=True)
    return render(
        plan_file,
        "ansible",
        tmp_path / "job",
        "--candidate",
        str(n),
        "--hosts",
        "10.0.0.1,10.0.0.2",
        "--requirements",
        "peft,datasets",
    )


def test_ansible_syntax_check_and_lint_pass(ansible_out: Path) -> None:
    syntax = engine_tool(
        "ansible-playbook",
        "-i",
        "inventory.ini",
        "--syntax-check",
        "playbook.yml",
        cwd=ansible_out,
    )
    assert syntax.returncode == 0, syntax.stdout + syntax.stderr
    lint = engine_tool("ansible-lint", "--offline", "playbook.yml", cwd=ansible_out)
    assert lint.returncode == 0, lint.stdout[-3000:] + lint.stderr[-3000:]
    inventory = engine_tool("ansible-inventory", "-i", "inventory.ini", "--list", cwd=ansible_out)
    assert inventory.returncode == 0, inventory.stderr
    assert json.loads(inventory.stdout)["gpurent"]["hosts"] == ["10.0.0.1", "10.0.0.2"]


def test_ansible_playbook_runs_on_localhost_into_a_temporary_root(
    ansible_out: Path, llama_plan: dict[str, Any], tmp_path: Path
) -> None:
    """The parts that need no GPU and no root: CUDA environment file, the Python environment
    (created; installing from PyPI is left out), the exporter unit, the job script and unit."""
    root = tmp_path / "root"
    local = ansible_out / "local.ini"
    python = engine_tool("python", "-c", "import sys; print(sys.executable)").stdout.strip()
    local.write_text(
        f"[gpurent]\nlocalhost ansible_connection=local ansible_python_interpreter={python}\n"
    )
    extra = json.dumps(
        {
            "gpurent_root": str(root),
            "gpurent_pip_packages": [],
            "gpurent_venv_options": "--without-pip",  # the test installs nothing into it
        }
    )
    done = engine_tool(
        "ansible-playbook",
        "-i",
        "local.ini",
        "playbook.yml",
        "--tags",
        "cuda,python,exporter,job",
        "-e",
        extra,
        cwd=ansible_out,
        timeout_s=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert (root / "opt/gpurent/venv/bin/python").exists()
    assert "/usr/local/cuda/bin" in (root / "etc/profile.d/cuda.sh").read_text()
    n = first_index(llama_plan, multi_node=True)
    c = llama_plan["top"][n - 1]
    exporter = (root / "etc/systemd/system/gpurent-exporter.service").read_text()
    assert f"--price-usd-per-hour {c['price_usd_per_hour']:g}" in exporter
    script = root / "opt/gpurent/job.sh"
    text = script.read_text()
    # every host runs gpurent run --nodes auto; the torchrun-style variables it reads come from
    # the inventory (this host's index, the first host)
    assert f"export PET_NNODES={c['nodes']} PET_NODE_RANK=0\n" in text
    assert "export PET_MASTER_ADDR=localhost PET_MASTER_PORT=29500\n" in text
    assert (
        f"gpurent/venv/bin/gpurent run \\\n  --nodes auto \\\n"
        f"  --nproc-per-node {c['gpus_per_node']} \\\n"
    ) in text
    assert "--sync-dir /checkpoints/.gpurent-job/gpurent-llama-lora \\\n" in text
    assert "--log /checkpoints/gpurent-run-node-0.jsonl \\\n" in text
    assert "torchrun" not in text  # gpurent run starts it, with the rendezvous it found
    assert subprocess.run(["bash", "-n", str(script)], check=False).returncode == 0
    unit = (root / "etc/systemd/system/gpurent-job.service").read_text()
    assert "ExecStart=/opt/gpurent/job.sh" in unit


def test_torchrun_multi_node_needs_the_hosts(
    plan_file: Path, llama_plan: dict[str, Any], tmp_path: Path
) -> None:
    n = first_index(llama_plan, multi_node=True)
    out = tmp_path / "job"
    code, _, stderr = run_cli(
        "deploy",
        "render",
        str(plan_file),
        "--format",
        "torchrun",
        "-o",
        str(out),
        "--candidate",
        str(n),
    )
    assert code == 2 and "--hosts" in stderr and stderr.count("\n") == 1
    assert not out.exists()
    render(plan_file, "torchrun", out, "--candidate", str(n), "--hosts", "10.0.0.1,10.0.0.2")
    text = (out / "launch.sh").read_text()
    assert "HOSTS=(10.0.0.1 10.0.0.2)" in text
    assert subprocess.run(["bash", "-n", str(out / "launch.sh")], check=False).returncode == 0
