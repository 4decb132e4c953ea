"""Kubernetes: a PersistentVolumeClaim for checkpoints and a batch/v1 Job with the gpurent
exporter as a sidecar; several nodes are an Indexed Job (one pod per node, the completion index
is the node rank) behind a headless Service that gives pod 0 its rendezvous name.

Several nodes: every pod runs `gpurent run --nodes auto`, which reads the torchrun-style
variables the manifest sets: `PET_NODE_RANK` from the pod's completion-index annotation
(downward API; the value Kubernetes also gives as $JOB_COMPLETION_INDEX), `PET_NNODES`,
`PET_MASTER_ADDR` (pod 0 under the Service), `PET_MASTER_PORT`, and `GPURENT_JOB_ID` from the
Job's controller-uid label (the same on every pod and on a replaced pod, new for a new Job), which
names the sync directory on the shared checkpoint claim.

An Indexed Job is core Kubernetes (no JobSet or Kubeflow operator to install), so the manifests
check against the official schemas alone.
"""

from __future__ import annotations

from typing import Any

from gpurent.deploy.common import (
    EXPORTER_PORT,
    RDZV_PORT,
    RenderedFile,
    comment_block,
    dump_yaml,
    exporter_argv,
    multi_node_run_line,
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
# Set by the Job controller on each pod (Kubernetes 1.27+ names).
COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"


def _field(path: str) -> dict[str, Any]:
    return {"fieldRef": {"fieldPath": path}}


def _rendezvous_env(spec: DeploySpec) -> list[dict[str, Any]]:
    """The variables `gpurent run --nodes auto` reads (its torchrun/PET_* case), per pod."""
    return [
        {
            "name": "PET_NODE_RANK",
            "valueFrom": _field(f"metadata.annotations['{COMPLETION_INDEX_ANNOTATION}']"),
        },
        {"name": "PET_NNODES", "value": str(spec.nodes)},
        {"name": "PET_MASTER_ADDR", "value": f"{spec.name}-0.{spec.name}"},
        {"name": "PET_MASTER_PORT", "value": str(RDZV_PORT)},
        {
            "name": "GPURENT_JOB_ID",
            "valueFrom": _field(f"metadata.labels['{CONTROLLER_UID_LABEL}']"),
        },
    ]


def _labels(spec: DeploySpec) -> dict[str, str]:
    return {"app.kubernetes.io/name": spec.name, "app.kubernetes.io/managed-by": "gpurent"}


def manifests(spec: DeploySpec) -> list[dict[str, Any]]:
    """The Kubernetes manifests for the spec: checkpoint volume claim, service and job."""
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
                    "ports": [{"name": "rendezvous", "port": RDZV_PORT}],
                },
            }
        )
    env: list[dict[str, Any]] = [{"name": "GPURENT_CHECKPOINT_DIR", "value": spec.checkpoint_dir}]
    if spec.multi_node:
        job_cmd = multi_node_run_line(
            spec,
            nproc=str(spec.procs_per_node),
            node_rank='"$PET_NODE_RANK"',
            job_id='"$GPURENT_JOB_ID"',
        )
        env += _rendezvous_env(spec)
    else:
        job_cmd = run_line(
            spec, nnodes="1", node_rank="0", nproc=str(spec.procs_per_node), master_addr="127.0.0.1"
        )
    gpus = str(spec.gpus_per_node)
    trainer = {
        "name": "job",
        "image": IMAGE,
        "command": ["bash", "-c", f"{pip_install_line(spec)} && {job_cmd}"],
        "env": env,
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
    """The Kubernetes manifests file for the spec, with the exporter's secret to create first."""
    body = "---\n".join(dump_yaml(d) for d in manifests(spec))
    secret = (
        f"# The exporter sidecar serves on the pod's address with a bearer token: first\n"
        f"#   kubectl create secret generic {spec.name}-exporter "
        "--from-literal=token=$(openssl rand -hex 16)\n"
    )
    return (RenderedFile(FILE_NAME, comment_block(spec, "Kubernetes manifests") + secret + body),)
