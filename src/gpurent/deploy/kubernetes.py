"""Kubernetes: a PersistentVolumeClaim for checkpoints and a batch/v1 Job with the gpurent
exporter as a sidecar; several nodes are an Indexed Job (one pod per node, the completion index
is the node rank) behind a headless Service that gives pod 0 its rendezvous name.

An Indexed Job is core Kubernetes (no JobSet or Kubeflow operator to install), so the manifests
check against the official schemas alone.
"""

from __future__ import annotations

from typing import Any

from gpurent.deploy.common import (
    EXPORTER_PORT,
    RenderedFile,
    comment_block,
    dump_yaml,
    exporter_argv,
    pip_install_line,
    run_line,
)
from gpurent.deploy.spec import DeploySpec

FILE_NAME = "job.yaml"
IMAGE = "nvcr.io/nvidia/pytorch:24.12-py3"  # NGC PyTorch: CUDA, NCCL, torch, torchrun
BACKOFF_LIMIT = 3
# Labels set by NVIDIA GPU feature discovery (GPU operator: the architecture, lower case) and
# by every cloud's kubelet (the instance type).
GPU_FAMILY_LABEL = "nvidia.com/gpu.family"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"


def _labels(spec: DeploySpec) -> dict[str, str]:
    return {"app.kubernetes.io/name": spec.name, "app.kubernetes.io/managed-by": "gpurent"}


def manifests(spec: DeploySpec) -> list[dict[str, Any]]:
    labels = _labels(spec)
    claim = f"{spec.name}-checkpoints"
    pvc = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": claim, "labels": labels},
        "spec": {
            "accessModes": ["ReadWriteMany" if spec.multi_node else "ReadWriteOnce"],
            "resources": {"requests": {"storage": f"{spec.storage_gb_per_node:g}G"}},
        },
    }
    docs: list[dict[str, Any]] = [pvc]
    if spec.multi_node:
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": spec.name, "labels": labels},
                "spec": {
                    "clusterIP": "None",
                    "selector": {"job-name": spec.name},
                    "ports": [{"name": "rendezvous", "port": 29500}],
                },
            }
        )
    # pod 0's name under the headless Service; one pod is its own rendezvous
    master = f"{spec.name}-0.{spec.name}" if spec.multi_node else "127.0.0.1"
    job_cmd = run_line(
        spec,
        nnodes=str(spec.nodes),
        node_rank="${JOB_COMPLETION_INDEX:-0}",
        nproc=str(spec.procs_per_node),
        master_addr=master,
    )
    gpus = str(spec.gpus_per_node)
    trainer = {
        "name": "job",
        "image": IMAGE,
        "command": ["bash", "-c", f"{pip_install_line(spec)} && {job_cmd}"],
        "env": [{"name": "GPURENT_CHECKPOINT_DIR", "value": spec.checkpoint_dir}],
        "resources": {"limits": {"nvidia.com/gpu": gpus}, "requests": {"nvidia.com/gpu": gpus}},
        "volumeMounts": [
            {"name": "checkpoints", "mountPath": spec.checkpoint_dir},
            {"name": "dshm", "mountPath": "/dev/shm"},
        ],
    }
    exporter = {
        "name": "gpurent-exporter",
        "image": IMAGE,
        "command": [
            "bash",
            "-c",
            "python3 -m pip install 'gpurent[monitor]' && exec "
            + " ".join([*exporter_argv(spec), "--listen", "0.0.0.0"]),
        ],
        "ports": [{"name": "metrics", "containerPort": EXPORTER_PORT}],
        "env": [
            {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
            {  # scrapers send it as a bearer token (gpurent monitor --token)
                "name": "GPURENT_EXPORTER_TOKEN",
                "valueFrom": {"secretKeyRef": {"name": f"{spec.name}-exporter", "key": "token"}},
            },
        ],
    }
    pod_spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "nodeSelector": {INSTANCE_TYPE_LABEL: spec.instance_type},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "containers": [trainer, exporter],
        "volumes": [
            {"name": "checkpoints", "persistentVolumeClaim": {"claimName": claim}},
            {"name": "dshm", "emptyDir": {"medium": "Memory"}},
        ],
    }
    if spec.spot:  # the common spot taints: GKE, AKS, EKS managed node groups via Karpenter
        pod_spec["tolerations"].append(
            {"key": "cloud.google.com/gke-spot", "operator": "Exists", "effect": "NoSchedule"}
        )
        pod_spec["tolerations"].append(
            {
                "key": "kubernetes.azure.com/scalesetpriority",
                "operator": "Equal",
                "value": "spot",
                "effect": "NoSchedule",
            }
        )
    if spec.gpu_architecture:
        pod_spec["nodeSelector"][GPU_FAMILY_LABEL] = spec.gpu_architecture.lower()
    if spec.multi_node:
        pod_spec["subdomain"] = spec.name
    job_spec: dict[str, Any] = {
        "backoffLimit": BACKOFF_LIMIT,
        "template": {"metadata": {"labels": labels}, "spec": pod_spec},
    }
    if spec.multi_node:
        job_spec.update(
            {"completionMode": "Indexed", "completions": spec.nodes, "parallelism": spec.nodes}
        )
    limit = spec.time_limit_s()
    if limit is not None:
        job_spec["activeDeadlineSeconds"] = int(limit)
    docs.append(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": spec.name, "labels": labels},
            "spec": job_spec,
        }
    )
    return docs


def render_kubernetes(spec: DeploySpec) -> tuple[RenderedFile, ...]:
    body = "---\n".join(dump_yaml(d) for d in manifests(spec))
    secret = (
        f"# The exporter sidecar serves on the pod's address with a bearer token: first\n"
        f"#   kubectl create secret generic {spec.name}-exporter "
        "--from-literal=token=$(openssl rand -hex 16)\n"
    )
    return (RenderedFile(FILE_NAME, comment_block(spec, "Kubernetes manifests") + secret + body),)
