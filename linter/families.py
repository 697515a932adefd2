"""Rule families: ``ml``, ``aks`` and ``k8s``, a selector for ``--select``/``--ignore`` and the
config's ``select``/``ignore`` (``--select ml,aks``), and the split of the summary line.

- ``ml``: what only a linter of ML workloads checks: GPUs and MIG, distributed training and
  NCCL, queues and gangs, shared memory and QoS of training pods, checkpoints, KAITO, training
  images, ML observability.
- ``aks``: what needs a model of the AKS cluster: node pools from ``az aks`` scripts,
  Terraform or NodePools, the autoscaler, the pods set against those pools, AKS storage classes.
- ``k8s``: generic Kubernetes and container hygiene (pod security, requests and limits, image
  tags and registries, schemas, Dockerfile basics, the linter's own LNT rules): much of it is
  what kube-linter, Checkov, Polaris or hadolint report too.

A rule of a third-party pack names its family with a tag (``tags=("ml", ...)``); without one it
is ``k8s``. The built-in rules' families are listed here, not in each module, so that one table
shows the split (a test keeps it covering every built-in rule).
"""

from __future__ import annotations

FAMILIES = ("ml", "aks", "k8s")
SIGNAL = ("ml", "aks")  # counted first in the summary line

# built-in rules by id prefix, then the exceptions by id
_BY_PREFIX = {
    "AKS": "aks", "XPL": "aks", "SHL": "aks", "NAP": "aks",
    "GPU": "ml", "DST": "ml", "QUE": "ml", "KAI": "ml", "OBS": "ml", "STO": "ml",
    "DKR": "k8s", "IMG": "k8s", "RES": "k8s", "SEC": "k8s", "SCH": "k8s", "LNT": "k8s", "ADM": "k8s",
    "REL": "k8s",
}
_BY_CODE = {
    "DKR003": "ml",  # a GPU Dockerfile on a CPU-only base
    "DKR005": "ml",  # datasets and checkpoints copied into the image
    "DKR006": "ml",  # SIGTERM reaching the trainer (its last checkpoint)
    "DKR008": "ml",  # NVIDIA drivers baked into a training image
    "IMG003": "ml",  # a GPU container on a CPU-only image
    "IMG005": "ml",  # a CUDA image on a training job without a GPU
    "RES004": "ml", "RES005": "ml", "RES006": "ml", "RES007": "ml",  # /dev/shm and QoS of training pods
    "QUE010": "k8s",  # a priority class that does not exist: any workload
    "OBS001": "k8s", "OBS002": "k8s",  # monitors that select nothing or scrape an unknown port: any workload
    "STO004": "aks",  # a StorageClass neither in the project nor built into AKS
    "SEC009": "aks",  # labels of AKS's reserved kubernetes.azure.com/ domain (Deployment Safeguards)
    "LNT005": "aks",  # a profile the project's own cluster (AKS Automatic or Standard) contradicts
    "STO007": "aks",  # mount options of the AKS Blob/Azure Files CSI drivers' other protocol
    "STO008": "aks",  # SMB mount options of the AKS Azure Files CSI driver that lock the pod's user out
    "STO009": "aks",  # multi-node access modes on Azure Disk (AKS CSI) classes without maxShares
    "STO010": "aks",  # Blob volumes on a cluster whose definition never enables the Blob CSI driver
}


def family_of(code: str, tags: tuple[str, ...] = ()) -> str:
    """The family of the rule ``code`` (a pack's rule: its family tag, else ``k8s``)."""
    for tag in tags:
        if tag in FAMILIES:
            return tag
    return _BY_CODE.get(code) or _BY_PREFIX.get(code[:3], "k8s")
