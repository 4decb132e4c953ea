"""Ansible: an inventory and one playbook (`ansible-playbook -i inventory.ini playbook.yml`).

Tags: `driver` (the distribution's NVIDIA driver package, branch from the GPU generation),
`cuda` (CUDA environment file), `python` (a virtualenv with gpurent and the job's
requirements), `exporter` (the gpurent monitor exporter as a systemd unit), `job` (the job
under `gpurent run` as a systemd unit; several nodes: `gpurent run --nodes auto` on every host,
the rendezvous on the inventory's first host through the torchrun-style variables, the sync
directory in the checkpoint directory, which must be storage every host sees). Every path lies
under `gpurent_root` ("" on a real host), so the parts that need no GPU and no root can run
into a temporary directory.
"""

from __future__ import annotations

import shlex
from typing import Any

from gpurent.deploy.common import (
    RDZV_PORT,
    RenderedFile,
    comment_block,
    dump_yaml,
    exporter_argv,
    gpurent_run_prefix,
    multi_node_words,
    torchrun_list,
)
from gpurent.deploy.spec import DeploySpec

INVENTORY = "inventory.ini"
PLAYBOOK = "playbook.yml"
GROUP = "gpurent"

# The NVIDIA data-center driver branch per GPU architecture: the oldest long-lived branch that
# supports it (Blackwell needs R570 and the open kernel modules; Hopper and earlier run on the
# R535 LTS branch). Source: NVIDIA Data Center Driver release notes, "supported products".
DRIVER_BRANCH = {
    "Blackwell": "570",
    "Hopper": "535",
    "Ada": "535",
    "Ampere": "535",
    "Turing": "535",
    "Volta": "535",
    "Pascal": "535",
}
DEFAULT_DRIVER_BRANCH = "570"
OPEN_MODULES_FROM = {"Blackwell", "Hopper", "Ada", "Ampere", "Turing"}  # Volta, Pascal: proprietary


def driver_package(architecture: str | None) -> str:
    """Ubuntu's package for the architecture's branch, e.g. nvidia-driver-570-server-open."""
    branch = DRIVER_BRANCH.get(architecture or "", DEFAULT_DRIVER_BRANCH)
    flavour = (
        "server-open" if architecture in OPEN_MODULES_FROM or architecture is None else "server"
    )
    return f"nvidia-driver-{branch}-{flavour}"


def inventory(spec: DeploySpec) -> str:
    """The Ansible inventory (INI) of the rented hosts, placeholders when none are given."""
    hosts = spec.hosts or tuple(f"node-{i}.example.invalid" for i in range(spec.nodes))
    lines = [comment_block(spec, "Ansible inventory", prefix="; ").rstrip("\n")]
    if not spec.hosts:
        lines.append(
            f"; Replace the {spec.nodes} placeholder host(s) with the addresses of the rented "
            f"{spec.instance_type} instance(s) (or render with --hosts)."
        )
    lines.append(f"[{GROUP}]")
    lines.extend(hosts)
    return "\n".join(lines) + "\n"


def _unit(description: str, exec_start: str, env: dict[str, str], restart: str) -> str:
    lines = ["[Unit]", f"Description={description}", "After=network-online.target", "", "[Service]"]
    lines += [f'Environment="{k}={v}"' for k, v in env.items()]
    lines += [f"ExecStart={exec_start}", f"Restart={restart}", "", "[Install]"]
    lines.append("WantedBy=multi-user.target")
    return "\n".join(lines) + "\n"


def _grouped(words: list[str]) -> list[str]:
    """Shell words in lines of one option and its value each (for a readable script)."""
    lines: list[str] = []
    for w in words:
        last = lines[-1] if lines else ""
        if not w.startswith("-") and last.startswith("--") and last != "--" and " " not in last:
            lines[-1] += f" {w}"
        else:
            lines.append(w)
    return lines


def _torchrun_words(spec: DeploySpec) -> list[str]:
    """One node, several processes: the venv's torchrun under gpurent run."""
    launch = torchrun_list(
        spec, nnodes="1", node_rank="0", nproc=str(spec.procs_per_node), master_addr="127.0.0.1"
    )
    return ["{{ gpurent_venv }}/bin/torchrun", *launch[1:]]


def playbook(spec: DeploySpec) -> list[dict[str, Any]]:
    """The playbook: install the driver and gpurent, run exporter and job as systemd units."""
    venv = "{{ gpurent_root }}/opt/gpurent/venv"
    units = "{{ gpurent_root }}/etc/systemd/system"
    exporter_cmd = " ".join(
        ["{{ gpurent_venv }}/bin/" + exporter_argv(spec)[0], *exporter_argv(spec)[1:]]
    )
    exports = ""
    if spec.multi_node:
        words = multi_node_words(
            spec,
            nproc=str(spec.procs_per_node),
            node_rank="{{ gpurent_node_rank }}",
            job_id="{{ gpurent_job_id }}",
        )
        words = ["exec {{ gpurent_venv }}/bin/gpurent run", *words[2:], spec.command]
        exports = (
            f"export PET_NNODES={spec.nodes} PET_NODE_RANK={{{{ gpurent_node_rank }}}}\n"
            "export PET_MASTER_ADDR={{ gpurent_master_addr }}"
            " PET_MASTER_PORT={{ gpurent_rendezvous_port }}\n"
        )
    else:
        words = ["exec", "{{ gpurent_venv }}/bin/gpurent"]
        words += [shlex.quote(w) for w in gpurent_run_prefix(spec)[1:]] + ["--"]
        words.append(spec.command)
        if spec.procs_per_node > 1:
            words[-1:] = _torchrun_words(spec)
    job_script = (
        "#!/bin/bash\n"
        f"# {spec.provenance()}\n"
        "set -euo pipefail\n"
        "source /etc/profile.d/cuda.sh 2>/dev/null || true\n"
        + exports
        + " \\\n  ".join(_grouped(words))
        + "\n"
    )
    job_path = "{{ gpurent_root }}/opt/gpurent/job.sh"
    env = {
        "GPURENT_CHECKPOINT_DIR": spec.checkpoint_dir,
        "PATH": "{{ gpurent_venv }}/bin:/usr/local/cuda/bin:/usr/bin:/bin",
    }
    requirements = ["gpurent[runtime,monitor]", *spec.requirements]
    tasks: list[dict[str, Any]] = [
        {
            "name": "Install the NVIDIA driver for the plan's GPU",
            "become": True,
            "tags": ["driver"],
            "ansible.builtin.apt": {
                "name": "{{ nvidia_driver_package }}",
                "state": "present",
                "update_cache": True,
            },
        },
        {
            "name": "Create the directories",
            "tags": ["cuda", "python", "exporter", "job"],
            "ansible.builtin.file": {"path": "{{ item }}", "state": "directory", "mode": "0755"},
            "loop": [
                "{{ gpurent_root }}/opt/gpurent",
                "{{ gpurent_root }}/etc/profile.d",
                units,
                "{{ gpurent_root }}" + spec.checkpoint_dir,
            ],
        },
        {
            "name": "Set the CUDA environment",
            "tags": ["cuda"],
            "ansible.builtin.copy": {
                "dest": "{{ gpurent_root }}/etc/profile.d/cuda.sh",
                "mode": "0644",
                "content": "export PATH=/usr/local/cuda/bin:$PATH\n"
                "export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}\n",
            },
        },
        {
            "name": "Create the Python environment",
            "tags": ["python"],
            "ansible.builtin.command": {
                "cmd": "python3 -m venv {{ gpurent_venv_options }} {{ gpurent_venv }}",
                "creates": "{{ gpurent_venv }}/bin/python",
            },
        },
        {
            "name": "Install gpurent and the job's requirements",
            "tags": ["python"],
            "when": "gpurent_pip_packages | length > 0",
            "ansible.builtin.pip": {
                "name": "{{ gpurent_pip_packages }}",
                "virtualenv": "{{ gpurent_venv }}",
            },
        },
        {
            "name": "Write the gpurent exporter unit",
            "tags": ["exporter"],
            "ansible.builtin.copy": {
                "dest": f"{units}/gpurent-exporter.service",
                "mode": "0644",
                "content": _unit("gpurent monitor exporter", exporter_cmd, {}, "always"),
            },
        },
        {
            "name": "Write the job script (gpurent run)",
            "tags": ["job"],
            "ansible.builtin.copy": {"dest": job_path, "mode": "0755", "content": job_script},
        },
        {
            "name": "Write the job unit",
            "tags": ["job"],
            "ansible.builtin.copy": {
                "dest": f"{units}/gpurent-job.service",
                "mode": "0644",
                "content": _unit(
                    f"{spec.name} under gpurent run", "/opt/gpurent/job.sh", env, "no"
                ),
            },
        },
        {
            "name": "Start the exporter and the job",
            "become": True,
            "tags": ["start"],
            "ansible.builtin.systemd_service": {
                "name": "{{ item }}",
                "state": "started",
                "enabled": True,
                "daemon_reload": True,
            },
            "loop": ["gpurent-exporter.service", "gpurent-job.service"],
        },
    ]
    return [
        {
            "name": f"Run {spec.name} under gpurent",
            "hosts": GROUP,
            "gather_facts": False,
            "vars": {
                "gpurent_root": "",
                "gpurent_venv": venv,
                # e.g. --system-site-packages on an image that ships CUDA torch already
                "gpurent_venv_options": "",
                "gpurent_pip_packages": requirements,
                "nvidia_driver_package": driver_package(spec.gpu_architecture),
                "gpurent_node_rank": f"{{{{ groups['{GROUP}'].index(inventory_hostname) }}}}",
                "gpurent_master_addr": (
                    f"{{{{ hostvars[groups['{GROUP}'][0]].ansible_host "
                    f"| default(groups['{GROUP}'][0]) }}}}"
                ),
                "gpurent_rendezvous_port": RDZV_PORT,
                # names this run's sync directory; give a new one (-e) for a new run
                "gpurent_job_id": spec.name,
            },
            "tasks": tasks,
        }
    ]


def render_ansible(spec: DeploySpec) -> tuple[RenderedFile, ...]:
    """The inventory and playbook files for the spec, each opened by its comment block."""
    note = (
        f"# Driver: {driver_package(spec.gpu_architecture)} for a "
        f"{spec.gpu_architecture or 'unknown'} GPU (the branch table in gpurent.deploy.ansible).\n"
    )
    book = comment_block(spec, "Ansible playbook") + note + "---\n" + dump_yaml(playbook(spec))
    return (RenderedFile(INVENTORY, inventory(spec)), RenderedFile(PLAYBOOK, book))
