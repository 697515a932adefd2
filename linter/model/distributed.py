"""Distributed training jobs: which workloads run ranks that talk to each other, and what their
operators add to the pods at runtime (labels, default ports, the environment of MPI ranks).

A **distributed job** is a Kubeflow training job (PyTorchJob, TFJob, MPIJob, XGBoostJob,
PaddleJob, JAXJob), a Volcano Job or a JobSet that runs two or more pods in total. A Volcano Job
counts when its pods can find each other: it enables a plugin that connects them (``svc``,
``ssh``, ``pytorch``, ``mpi``, ``tensorflow``, ``ray``) or runs two or more task types (a
parameter server and workers, a master and workers); a single task without such a plugin is a
gang of independent pods (Volcano's batch use). Plain Jobs with ``parallelism`` are left out (they
are mostly sweeps whose pods never talk), as are Ray clusters (KubeRay names a RayJob's cluster
at runtime, so its pods' labels are not known).
"""

from __future__ import annotations

import re
from typing import Any

from msgspec import Struct

from mlops_lint.model.envvars import LITERAL, UNKNOWN, UNSET, EnvSetting, command_mentions, mpirun_exports, resolve
from mlops_lint.model.k8s import REPLICA_SPEC_FIELDS, Container, PodSpec, Workload
from mlops_lint.model.memo import once
from mlops_lint.model.placeholder import has_placeholder
from mlops_lint.model.position import Span
from mlops_lint.model.selectors import label_value, labels_of
from mlops_lint.model.tree import YMap

KUBEFLOW = "kubeflow.org"
DISTRIBUTED_KINDS = frozenset({
    *((KUBEFLOW, kind) for kind in REPLICA_SPEC_FIELDS),
    ("batch.volcano.sh", "Job"),
    ("jobset.x-k8s.io", "JobSet"),
})

# The container the Kubeflow training operator configures in each replica (ports, env), and
# that its webhook requires in every replica type.
DEFAULT_CONTAINER = {
    "PyTorchJob": "pytorch", "TFJob": "tensorflow", "MPIJob": "mpi", "XGBoostJob": "xgboost",
    "PaddleJob": "paddle", "JAXJob": "jax",
}
# Ports the training operator adds to the default container when it declares none of that name.
DEFAULT_PORTS = {"PyTorchJob": ("pytorchjob-port", 23456), "TFJob": ("tfjob-port", 2222),
                 "PaddleJob": ("master", 36543), "JAXJob": ("jaxjob-port", 6666)}

# Labels whose value differs from pod to pod of one template: a selector on them cannot be
# judged per template, so they are unknown (neither present with a known value nor absent).
PER_POD_LABELS = frozenset({
    "training.kubeflow.org/replica-index", "replica-index",
    "batch.kubernetes.io/job-completion-index", "apps.kubernetes.io/pod-index",
    "jobset.sigs.k8s.io/job-index", "jobset.sigs.k8s.io/job-global-index", "jobset.sigs.k8s.io/job-key",
    "batch.kubernetes.io/job-name", "job-name", "batch.kubernetes.io/controller-uid", "controller-uid",
    "statefulset.kubernetes.io/pod-name", "pod-template-hash",
})

# Extended resources that give a pod RDMA devices (InfiniBand / RoCE device plugins; AWS EFA, whose
# RDMA NCCL reaches through the aws-ofi-nccl plugin).
RDMA_RESOURCE_PREFIXES = ("rdma/", "nvidia.com/hostdev", "mellanox.com/", "nvidia.com/mlnxnics", "vpc.amazonaws.com/efa")


def is_distributed_kind(workload: Workload) -> bool:
    return (workload.obj.group, workload.kind) in DISTRIBUTED_KINDS


def pod_count(pod: PodSpec) -> int:
    """Pods a template runs at once (unknown counts as 1)."""
    return pod.replicas if isinstance(pod.replicas, int) else 1


# words of a command or environment that start or join a rendezvous of ranks
RENDEZVOUS = re.compile(r"\b(?:torchrun|torch\.distributed\.(?:run|launch)|deepspeed|mpirun|horovodrun|accelerate launch"
                        r"|MASTER_ADDR|MASTER_PORT|WORLD_SIZE|--nnodes|--num[_-]nodes|--node[_-]rank"
                        r"|TF_CONFIG|JAX_COORDINATOR_ADDRESS|--rdzv)")


def job_pods_talk(workload: Workload) -> bool:
    """A batch Job's pods find each other, so they must run together: an Indexed Job with a
    ``subdomain`` (a headless Service gives the ranks their names), or a command or environment
    that starts or joins a rendezvous (QUE013, XPL007)."""
    spec = workload.obj.body.get_map("spec")
    for pod in workload.pods:
        if spec is not None and spec.get("completionMode") == "Indexed" and isinstance(pod.spec.get("subdomain"), str):
            return True
        for container in pod.app_containers:
            texts = [*container.command_strings, *(v.name for v in container.env),
                     *(v.value for v in container.env if isinstance(v.value, str))]
            if any(RENDEZVOUS.search(text) for text in texts):
                return True
    return False


# Volcano job plugins that let the pods of a job address each other (hosts files, headless
# Service, SSH keys, framework rendezvous variables).
VOLCANO_CONNECTING_PLUGINS = frozenset({"svc", "ssh", "pytorch", "mpi", "tensorflow", "ray"})


def is_distributed(workload: Workload) -> bool:
    """A distributed job's kind, running two or more pods in total (see the module docs)."""
    if not is_distributed_kind(workload) or sum(pod_count(p) for p in workload.pods) < 2:
        return False
    if workload.obj.group == "batch.volcano.sh":
        spec = workload.obj.body.get_map("spec")
        plugins = spec.get("plugins") if spec is not None else None
        connected = isinstance(plugins, dict) and bool(VOLCANO_CONNECTING_PLUGINS & set(map(str, plugins)))
        return connected or sum(1 for p in workload.pods if pod_count(p) > 0) >= 2
    return True


def default_container(pod: PodSpec) -> Container | None:
    """The replica's framework container (``pytorch``, ``tensorflow`` …), else its first app container."""
    apps = pod.app_containers
    wanted = DEFAULT_CONTAINER.get(pod.obj.kind) if pod.obj.group == KUBEFLOW else None
    for container in apps:
        if wanted is not None and container.name == wanted:
            return container
    return apps[0] if apps else None


class ReplicaSpec(Struct, frozen=True):
    """One entry of a Kubeflow job's ``<framework>ReplicaSpecs`` map (with or without a template)."""

    role: str
    body: YMap
    key_span: Span
    path: tuple[str | int, ...]


def replica_specs(obj: Any) -> list[ReplicaSpec]:
    """The replica types of a Kubeflow training job, in document order."""
    field = REPLICA_SPEC_FIELDS.get(obj.kind) if obj.group == KUBEFLOW else None
    spec = obj.body.get_map("spec")
    specs = spec.get_map(field) if spec is not None and field else None
    if specs is None:
        return []
    return [ReplicaSpec(str(role), body, specs.key_span(role), ("spec", field, role))
            for role, body in specs.items() if isinstance(body, YMap)]


def replicas_phrase(pods) -> str:
    """``Master and Worker replicas`` (each template once, in order); ``pod template`` without roles."""
    roles = list(dict.fromkeys(p.role or "" for p in pods))
    if not all(roles):
        return " and ".join(dict.fromkeys(p.describe() for p in pods))
    listed = roles[0] if len(roles) == 1 else ", ".join(roles[:-1]) + " and " + roles[-1]
    return f"{listed} replicas"


def template_anchor(pod: PodSpec) -> tuple[Span, tuple[str | int, ...]]:
    """Where a finding about a template's pods points: its ``labels:`` key (what selectors see),
    else its ``metadata:`` key, else its ``spec:`` key; with the node path."""
    base = pod.path[:-1] if pod.template is not None else ()
    meta = pod.metadata
    if meta is not None and "labels" in meta.kspans:
        return meta.kspans["labels"], base + ("metadata", "labels")
    if pod.template is not None and "metadata" in pod.template.kspans:
        return pod.template.kspans["metadata"], base + ("metadata",)
    return pod.span, pod.path


# ---------------------------------------------------------------------------------------------
# What the operators add at runtime


def operator_labels(pod: PodSpec) -> dict[str, str]:
    """Labels every pod of this template gets from its operator, on top of the template's own.

    Kubeflow training operator: ``training.kubeflow.org/job-name`` and ``…/replica-type`` (the
    replica type in lower case), ``…/job-role: master`` on a PyTorch Master or TF Chief/Master;
    the MPI operator (``kubeflow.org/v2beta1``) labels ``…/job-role: launcher|worker`` instead.
    Volcano: ``volcano.sh/job-name``, ``volcano.sh/job-namespace``, ``volcano.sh/task-spec``.
    JobSet: ``jobset.sigs.k8s.io/jobset-name`` and ``…/replicatedjob-name``. Labels that differ
    per pod (replica and completion indexes, child Job names) are in :data:`PER_POD_LABELS`.
    """
    obj, role = pod.obj, pod.role or ""
    labels: dict[str, str] = {}
    if obj.group == KUBEFLOW and obj.kind in REPLICA_SPEC_FIELDS:
        labels["training.kubeflow.org/job-name"] = obj.name
        if obj.kind == "MPIJob" and obj.api_version.endswith("/v2beta1"):
            labels["training.kubeflow.org/job-role"] = role.lower()
        else:
            labels["training.kubeflow.org/replica-type"] = role.lower()
            if (obj.kind, role) in (("PyTorchJob", "Master"), ("TFJob", "Chief"), ("TFJob", "Master")):
                labels["training.kubeflow.org/job-role"] = "master"
    elif obj.group == "batch.volcano.sh" and obj.kind == "Job":
        labels.update({"volcano.sh/job-name": obj.name, "volcano.sh/job-namespace": obj.namespace or "default",
                       "volcano.sh/task-spec": role})
    elif obj.group == "jobset.x-k8s.io" and obj.kind == "JobSet":
        labels.update({"jobset.sigs.k8s.io/jobset-name": obj.name, "jobset.sigs.k8s.io/replicatedjob-name": role})
    return labels


def pod_labels(pod: PodSpec) -> dict[str, str]:
    """The labels of this template's pods: the template's, then the operator's (which win)."""
    return {**labels_of(pod.labels), **operator_labels(pod)}


class ContainerPort(Struct, frozen=True):
    name: str
    port: int
    protocol: str


def container_ports(pod: PodSpec) -> tuple[ContainerPort, ...]:
    """Ports the pod's app and sidecar containers declare, plus the operator's default port."""
    found: list[ContainerPort] = []
    for container in pod.containers:
        if container.is_ephemeral or (container.is_init and not container.is_sidecar):
            continue
        ports = container.body.get_seq("ports")
        for _, port in ports.maps() if ports is not None else ():
            number = port.get("containerPort")
            if isinstance(number, int) and not isinstance(number, bool):
                found.append(ContainerPort(label_value(port.get("name")), number, str(port.get("protocol") or "TCP")))
    default = DEFAULT_PORTS.get(pod.obj.kind) if pod.obj.group == KUBEFLOW else None
    main = default_container(pod)
    if default is not None and main is not None and main.name == DEFAULT_CONTAINER.get(pod.obj.kind):
        if not any(p.name == default[0] for p in found):
            found.append(ContainerPort(default[0], default[1], "TCP"))
    return tuple(found)


def uses_rdma(pod: PodSpec) -> bool:
    """Whether any container asks for an RDMA device (``rdma/…``, ``nvidia.com/hostdev``,
    ``vpc.amazonaws.com/efa`` …)."""
    return any(name.startswith(RDMA_RESOURCE_PREFIXES)
               for c in pod.containers for name in (*c.requests, *c.limits))


# ---------------------------------------------------------------------------------------------
# The environment of a rank


def launchers(pod: PodSpec) -> list[Container]:
    """For an MPIJob worker: the launcher's containers, whose ``mpirun -x`` sets the rank's env."""
    workload = pod.workload
    if workload is None or pod.obj.kind != "MPIJob" or pod.obj.group != KUBEFLOW or (pod.role or "").lower() == "launcher":
        return []
    return [c for p in workload.pods if (p.role or "").lower() == "launcher" for c in p.app_containers]


def rank_env(container: Container, name: str) -> EnvSetting:
    """``name`` as the training process in ``container`` sees it.

    The container's own ``env``/``envFrom`` first; then, for an MPIJob worker, ``mpirun -x`` on
    the launcher (``-x NAME=VALUE`` is a literal, ``-x NAME`` forwards the launcher's value); and a
    name the container's or launcher's command line mentions otherwise is unknown (a script may
    export it).
    """
    setting = resolve(container, name)
    if not setting.is_unset:
        return setting
    for launcher in launchers(container.pod):
        for export in mpirun_exports(launcher):
            if export.name != name:
                continue
            if export.value is not None:
                return EnvSetting(name, LITERAL, export.value, None, export.span, "mpirun -x")
            forwarded = resolve(launcher, name)
            if forwarded.is_literal:
                return EnvSetting(name, LITERAL, forwarded.value, forwarded.var, forwarded.span, "mpirun -x")
            return EnvSetting(name, UNKNOWN, span=export.span, reason="mpirun -x")
    for holder in (container, *launchers(container.pod)):
        if command_mentions(holder, name):
            return EnvSetting(name, UNKNOWN, reason="the command line")
    return EnvSetting(name, UNSET)


# ---------------------------------------------------------------------------------------------
# Which collective backend a rank uses: NCCL settings matter only where NCCL is it

# ``--backend gloo``, ``--dist-backend=mpi``, ``--dist_backend nccl``, ``--distributed-backend gloo``
_BACKEND_FLAG = re.compile(r"--(?:dist[-_]|distributed[-_])?backend(?:=|\s+)[\"']?([A-Za-z][A-Za-z0-9_:,]*)")
# ``backend="gloo"`` / ``backend='mpi'`` in ``python -c`` or an inline script, and
# ``init_process_group("gloo", …)``
_BACKEND_ARGUMENT = re.compile(r"\bbackend\s*=\s*[\"']([A-Za-z][A-Za-z0-9_:,]*)[\"']"
                               r"|init_process_group\(\s*[\"']([A-Za-z][A-Za-z0-9_:,]*)[\"']")
# an env var whose name says it holds the backend (``BACKEND``, ``DIST_BACKEND``, ``PET_BACKEND``)
_BACKEND_VARIABLE = re.compile(r"(?:^|_)(?:DIST_|DDP_|DISTRIBUTED_)?BACKEND$")


def _backend_names(text: str) -> set[str]:
    """``nccl`` from ``nccl``, and both from the device map ``cpu:gloo,cuda:nccl``."""
    return {part.rsplit(":", 1)[-1].lower() for part in text.split(",") if part.strip()}


def collective_backends(container: Container) -> frozenset[str] | None:
    """The torch.distributed backends the container names (``gloo``, ``mpi``, ``nccl``, …), or None
    when it names none (the framework's default, NCCL on GPUs, is then assumed). Read from the
    ``command``/``args`` items (a flag as one item or two, or inside a ``sh -c``/``python -c``
    string) and from env vars whose name ends in ``BACKEND`` with a literal value. Found once per
    container view (DST005, DST006 and others ask)."""
    return once(container, "collective_backends", lambda: _collective_backends(container))


def _collective_backends(container: Container) -> frozenset[str] | None:
    named: set[str] = set()
    text = " ".join(container.command_strings)
    for match in _BACKEND_FLAG.finditer(text):
        named |= _backend_names(match.group(1))
    for match in _BACKEND_ARGUMENT.finditer(text):
        named |= _backend_names(match.group(1) or match.group(2))
    for var in container.env:
        if (_BACKEND_VARIABLE.search(var.name.upper()) and not var.from_ref and isinstance(var.value, str)
                and not has_placeholder(var.value)):
            named |= _backend_names(var.value)
    return frozenset(named) if named else None


def uses_nccl(container: Container) -> bool:
    """Whether NCCL may be the backend: neither the container nor (for an MPIJob worker) its
    launcher's command line names a backend, or one of them names ``nccl``. A container that
    chooses only gloo, MPI or another backend is not asked for NCCL settings."""
    named: set[str] = set()
    for holder in (container, *launchers(container.pod)):
        named |= collective_backends(holder) or set()
    return not named or "nccl" in named


__all__ = [
    "DISTRIBUTED_KINDS", "PER_POD_LABELS", "RDMA_RESOURCE_PREFIXES", "ContainerPort", "ReplicaSpec",
    "collective_backends", "container_ports", "default_container", "is_distributed", "is_distributed_kind", "launchers",
    "operator_labels", "pod_count", "pod_labels", "rank_env", "replica_specs", "replicas_phrase", "template_anchor", "uses_nccl", "uses_rdma",
]
