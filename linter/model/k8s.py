"""Typed views over Kubernetes objects that carry pods.

This is the one place that knows where each kind keeps its pod templates
(``spec.template.spec``, ``spec.jobTemplate.spec.template.spec``,
``spec.pytorchReplicaSpecs.<role>.template.spec``, ``spec.tasks[i].template.spec`` …), like
kube-linter's ``extract`` package. Rules receive :class:`Workload`, :class:`PodSpec` and
:class:`Container` views and never walk raw paths themselves.

Every view records its ``path`` inside the object (for baseline fingerprints) and the spans a
finding needs: the bad value, else its key, else (for a missing field) the parent key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Any, Iterator

from linter.model.document import K8sObject
from linter.model.position import Span
from linter.model.placeholder import has_placeholder
from linter.model.quantity import parse_quantity
from linter.model.selectors import Placement, placement_of
from linter.model.tree import YMap, YSeq

Path = tuple[str | int, ...]

# Kinds whose single pod template sits at spec.template (apps/v1, batch/v1, v1).
_TEMPLATE_KINDS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job"}
# Kubeflow training operator: kind -> the field holding {role: ReplicaSpec}.
REPLICA_SPEC_FIELDS = {
    "PyTorchJob": "pytorchReplicaSpecs",
    "TFJob": "tfReplicaSpecs",
    "MPIJob": "mpiReplicaSpecs",
    "XGBoostJob": "xgbReplicaSpecs",
    "PaddleJob": "paddleReplicaSpecs",
    "JAXJob": "jaxReplicaSpecs",
}
CONTAINER_FIELDS = ("containers", "initContainers", "ephemeralContainers")


@dataclass(frozen=True, slots=True)
class Resource:
    """One entry of ``resources.requests`` or ``resources.limits``."""

    name: str
    raw: Any
    value: Fraction | None  # None when ``raw`` is not a valid quantity
    key_span: Span
    value_span: Span


@dataclass(frozen=True, slots=True)
class EnvVar:
    name: str
    value: Any  # the literal ``value``; None when absent
    from_ref: bool  # set through valueFrom (not a literal)
    span: Span  # the ``name:`` of the entry
    value_span: Span  # the literal value, else the entry
    path: Path


def _resources(section: Any) -> dict[str, Resource]:
    if not isinstance(section, YMap):
        return {}
    return {
        str(name): Resource(str(name), raw, parse_quantity(raw), section.key_span(name), section.value_span(name))
        for name, raw in section.items()
    }


@dataclass(slots=True, eq=False)
class Container:
    """A container, init container or ephemeral container of a pod template."""

    pod: "PodSpec"
    body: YMap
    field: str  # "containers" | "initContainers" | "ephemeralContainers"
    index: int
    path: Path
    # what is derived from the container alone, on first use (requests and limits, which dozens of
    # rules read; checkpoint evidence): views are read-only
    _sections: dict = field(default_factory=dict, repr=False)

    @property
    def obj(self) -> K8sObject:
        return self.pod.obj

    @property
    def name(self) -> str:
        name = self.body.get("name")
        return name if isinstance(name, str) else f"#{self.index}"

    @property
    def span(self) -> Span:
        """The container's ``name:`` key (where a reader finds it), else its first key."""
        return self.body.kspans.get("name") or self.pod.spec.value_span(self.field)

    @property
    def is_init(self) -> bool:
        return self.field == "initContainers"

    @property
    def is_ephemeral(self) -> bool:
        return self.field == "ephemeralContainers"

    @property
    def is_sidecar(self) -> bool:
        """A native sidecar: an init container with ``restartPolicy: Always`` (Kubernetes 1.28+)."""
        return self.is_init and self.body.get("restartPolicy") == "Always"

    @property
    def kind_label(self) -> str:
        if self.is_sidecar:
            return "sidecar container"
        return {"containers": "container", "initContainers": "init container"}.get(self.field, "ephemeral container")

    @property
    def image(self) -> str | None:
        image = self.body.get("image")
        return image if isinstance(image, str) else None

    @property
    def image_span(self) -> Span:
        return self.body.value_span("image") if "image" in self.body else self.span

    @property
    def resources_node(self) -> YMap | None:
        return self.body.get_map("resources")

    @property
    def resources_span(self) -> Span:
        """The ``resources:`` key, else the container (a missing field's parent)."""
        return self.body.kspans.get("resources") or self.span

    def section(self, which: str) -> YMap | None:
        resources = self.resources_node
        return resources.get_map(which) if resources is not None else None

    def section_span(self, which: str) -> Span:
        """``requests:``/``limits:`` key, else ``resources:``, else the container."""
        resources = self.resources_node
        if resources is not None and which in resources.kspans:
            return resources.kspans[which]
        return self.resources_span

    @property
    def requests(self) -> dict[str, Resource]:
        """``resources.requests`` parsed (shared by every rule: do not modify)."""
        found = self._sections.get("requests")
        if found is None:
            found = self._sections["requests"] = _resources(self.section("requests"))
        return found

    @property
    def limits(self) -> dict[str, Resource]:
        """``resources.limits`` parsed (shared by every rule: do not modify)."""
        found = self._sections.get("limits")
        if found is None:
            found = self._sections["limits"] = _resources(self.section("limits"))
        return found

    @property
    def env(self) -> list[EnvVar]:
        """The entries of ``env`` with a name (parsed once; a fresh list each call)."""
        found = self._sections.get("env")
        if found is None:
            found = self._sections["env"] = tuple(self._env())
        return list(found)

    def env_value(self, name: str) -> EnvVar | None:
        """The effective entry for ``name`` (the last one wins, as in Kubernetes)."""
        found = None
        for var in self._sections.get("env") or self.env:
            if var.name == name:
                found = var
        return found

    def _env(self) -> list[EnvVar]:
        env = self.body.get_seq("env")
        result: list[EnvVar] = []
        if env is None:
            return result
        for index, item in env.maps():
            name = item.get("name")
            if not isinstance(name, str):
                continue
            result.append(
                EnvVar(
                    name=name,
                    value=item.get("value"),
                    from_ref="valueFrom" in item,
                    span=item.kspans.get("name", env.item_span(index)),
                    value_span=item.vspans.get("value") or item.kspans.get("name", env.item_span(index)),
                    path=self.path + ("env", index),
                )
            )
        return result

    @property
    def volume_mounts(self) -> list[tuple[int, YMap]]:
        mounts = self.body.get_seq("volumeMounts")
        return list(mounts.maps()) if mounts is not None else []

    @property
    def security_context(self) -> YMap | None:
        return self.body.get_map("securityContext")


@dataclass(eq=False)
class PodSpec:
    """One pod template (or a bare Pod's spec) inside a workload."""

    obj: K8sObject
    spec: YMap
    path: Path  # path of ``spec`` inside the object body
    template: YMap | None  # the PodTemplateSpec holding ``metadata`` and ``spec`` (None for a Pod)
    role: str | None = None  # replica type (Master, Worker, …) or Volcano task name
    replicas: int | None = None  # pods this template runs at once, when the kind says so
    workload: "Workload | None" = None

    @property
    def metadata(self) -> YMap | None:
        if self.template is None:
            return self.obj.metadata
        return self.template.get_map("metadata")

    @property
    def labels(self) -> dict[str, Any]:
        meta = self.metadata
        labels = meta.get("labels") if meta is not None else None
        return labels if isinstance(labels, dict) else {}

    @property
    def span(self) -> Span:
        """The template's ``spec:`` key, else the object."""
        if self.template is not None and "spec" in self.template.kspans:
            return self.template.kspans["spec"]
        if self.template is None and "spec" in self.obj.body.kspans:
            return self.obj.body.kspans["spec"]
        return self.obj.span

    def describe(self) -> str:
        return f"{self.role} replicas" if self.role else "pod template"

    @cached_property
    def containers(self) -> list[Container]:
        """Every container of the template: app containers, then init, then ephemeral ones."""
        result: list[Container] = []
        for field_name in CONTAINER_FIELDS:
            items = self.spec.get_seq(field_name)
            if items is None:
                continue
            for index, body in items.maps():
                result.append(Container(self, body, field_name, index, self.path + (field_name, index)))
        return result

    @property
    def app_containers(self) -> list[Container]:
        return [c for c in self.containers if c.field == "containers"]

    @property
    def init_containers(self) -> list[Container]:
        return [c for c in self.containers if c.field == "initContainers"]

    @property
    def node_selector(self) -> dict[str, Any]:
        selector = self.spec.get("nodeSelector")
        return selector if isinstance(selector, dict) else {}

    @property
    def tolerations(self) -> list[tuple[int, YMap]]:
        items = self.spec.get_seq("tolerations")
        return list(items.maps()) if items is not None else []

    @property
    def volumes(self) -> list[tuple[int, YMap]]:
        items = self.spec.get_seq("volumes")
        return list(items.maps()) if items is not None else []

    @property
    def uses_gpu(self) -> bool:
        """Whether any container requests or limits a GPU (``nvidia.com/gpu``, MIG, ``amd.com/gpu``)."""
        return any(gpu_resources(c.requests) or gpu_resources(c.limits) for c in self.containers)

    @cached_property
    def placement(self) -> "Placement":
        """nodeSelector and required node affinity (``linter.model.selectors.Placement``)."""
        return placement_of(self.spec)

    @property
    def priority_class_name(self) -> str | None:
        value = self.spec.get("priorityClassName")
        return value if isinstance(value, str) else None


# Kinds that run to completion: training, fine-tuning, batch evaluation (group, kind).
TRAINING_KINDS = frozenset({
    ("batch", "Job"), ("batch", "CronJob"), ("batch.volcano.sh", "Job"), ("ray.io", "RayJob"),
    ("jobset.x-k8s.io", "JobSet"), *(("kubeflow.org", kind) for kind in REPLICA_SPEC_FIELDS),
})


@dataclass(slots=True, eq=False)
class Workload:
    """An object that carries pods, with every pod template it holds."""

    obj: K8sObject
    pods: list[PodSpec] = field(default_factory=list)
    # what model helpers derive from the workload alone (and their other inputs), on first use:
    # views are read-only
    _memo: dict = field(default_factory=dict, repr=False)

    @property
    def kind(self) -> str:
        return self.obj.kind

    @property
    def is_training(self) -> bool:
        """A run-to-completion workload (Job, CronJob, Kubeflow and Volcano jobs, RayJob, JobSet),
        or a bare Pod that is not restarted forever (``restartPolicy`` Never or OnFailure)."""
        if (self.obj.group, self.kind) in TRAINING_KINDS:
            return True
        if self.kind == "Pod" and self.obj.group == "" and self.pods:
            return self.pods[0].spec.get("restartPolicy") in ("Never", "OnFailure")
        return False

    @property
    def uses_gpu(self) -> bool:
        return any(pod.uses_gpu for pod in self.pods)

    def containers(self) -> Iterator[Container]:
        for pod in self.pods:
            yield from pod.containers

    def dispose(self) -> None:
        """Break the view's reference cycles (pod and workload, container and pod, and the memos
        that hold views) once its file is linted, so that its trees are freed by reference
        counting as soon as it is dropped, with no pass of the cyclic collector. The view must not
        be used again: its pods lose every attribute."""
        self._memo.clear()
        for pod in self.pods:
            for container in pod.__dict__.get("containers", ()):
                container._sections.clear()
            pod.__dict__.clear()
        self.pods = []


def _int_or(value: Any, default: int | None) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _template(obj: K8sObject, holder: YMap | None, path: Path, role: str | None, replicas: int | None) -> PodSpec | None:
    """The PodSpec of ``holder.template`` (a PodTemplateSpec) at ``path`` (the holder's path)."""
    if holder is None:
        return None
    template = holder.get_map("template")
    if template is None:
        return None
    spec = template.get_map("spec")
    if spec is None:
        return None
    return PodSpec(obj, spec, path + ("template", "spec"), template, role, replicas)


def _pod_templates(obj: K8sObject) -> Iterator[PodSpec]:
    body, kind, group = obj.body, obj.kind, obj.group
    spec = body.get_map("spec")
    if kind == "Pod" and group == "":
        if spec is not None:
            yield PodSpec(obj, spec, ("spec",), None, None, 1)
        return
    if spec is None:
        return
    if kind == "PodTemplate" and group == "":
        pod = _template(obj, body, (), None, None)
        if pod:
            yield pod
        return
    if kind in _TEMPLATE_KINDS and group in ("", "apps", "batch", "extensions"):
        if kind == "Job":
            replicas = _int_or(spec.get("parallelism"), 1)
        elif kind == "DaemonSet":
            replicas = None
        else:
            replicas = _int_or(spec.get("replicas"), 1)
        pod = _template(obj, spec, ("spec",), None, replicas)
        if pod:
            yield pod
        return
    if kind == "CronJob" and group == "batch":
        job = spec.get_map("jobTemplate")
        job_spec = job.get_map("spec") if job is not None else None
        pod = _template(obj, job_spec, ("spec", "jobTemplate", "spec"), None,
                        _int_or(job_spec.get("parallelism"), 1) if job_spec is not None else 1)
        if pod:
            yield pod
        return
    if kind in REPLICA_SPEC_FIELDS and group == "kubeflow.org":
        field_name = REPLICA_SPEC_FIELDS[kind]
        replica_specs = spec.get_map(field_name)
        if replica_specs is None:
            return
        for role, replica in replica_specs.items():
            if isinstance(replica, YMap):
                pod = _template(obj, replica, ("spec", field_name, role), str(role), _int_or(replica.get("replicas"), 1))
                if pod:
                    yield pod
        return
    if kind == "Job" and group == "batch.volcano.sh":
        tasks = spec.get_seq("tasks")
        if tasks is None:
            return
        for index, task in tasks.maps():
            name = task.get("name")
            pod = _template(obj, task, ("spec", "tasks", index), str(name) if name else f"task {index}",
                            _int_or(task.get("replicas"), 1))
            if pod:
                yield pod
        return
    if kind in ("RayCluster", "RayJob", "RayService") and group == "ray.io":
        cluster = spec
        path: Path = ("spec",)
        if kind == "RayJob":
            cluster, path = spec.get_map("rayClusterSpec"), ("spec", "rayClusterSpec")
        elif kind == "RayService":
            cluster, path = spec.get_map("rayClusterConfig"), ("spec", "rayClusterConfig")
        if cluster is None:
            return
        pod = _template(obj, cluster.get_map("headGroupSpec"), path + ("headGroupSpec",), "head", 1)
        if pod:
            yield pod
        groups = cluster.get_seq("workerGroupSpecs")
        for index, group_spec in groups.maps() if groups is not None else ():
            name = group_spec.get("groupName")
            pod = _template(obj, group_spec, path + ("workerGroupSpecs", index), str(name) if name else f"worker group {index}",
                            _int_or(group_spec.get("replicas"), 1))
            if pod:
                yield pod
        return
    if kind == "JobSet" and group == "jobset.x-k8s.io":
        jobs = spec.get_seq("replicatedJobs")
        for index, replicated in jobs.maps() if jobs is not None else ():
            job_template = replicated.get_map("template")
            job_spec = job_template.get_map("spec") if job_template is not None else None
            name = replicated.get("name")
            copies = _int_or(replicated.get("replicas"), 1) or 1
            parallelism = _int_or(job_spec.get("parallelism"), 1) if job_spec is not None else 1
            pod = _template(obj, job_spec, ("spec", "replicatedJobs", index, "template", "spec"),
                            str(name) if name else f"job {index}", copies * (parallelism or 1))
            if pod:
                yield pod


def workload_of(obj: K8sObject) -> Workload | None:
    """The workload view of ``obj``, or ``None`` if its kind carries no pods."""
    pods = list(_pod_templates(obj))
    if not pods:
        return None
    workload = Workload(obj, pods)
    for pod in pods:
        pod.workload = workload
    return workload


def is_gpu_resource(name: str) -> bool:
    """``nvidia.com/gpu``, ``nvidia.com/mig-<profile>``, and other vendors' ``*/gpu``."""
    return name == "nvidia.com/gpu" or name.startswith("nvidia.com/mig-") or name in ("amd.com/gpu", "nvidia.com/gpu.shared")


def parse_image(image: str) -> tuple[str, str | None, str | None]:
    """Split an image reference into (name, tag, digest): ``repo/name:tag@sha256:…``.

    A ``:`` belongs to the tag only after the last ``/`` (``host:5000/x`` has a port, no tag).
    """
    name, _, digest = image.partition("@")
    tag = None
    slash = name.rfind("/")
    colon = name.rfind(":")
    if colon > slash:
        name, tag = name[:colon], name[colon + 1:]
    return name, tag, (digest or None)


def image_registry(name: str) -> str:
    """The registry host of an image name (Docker Hub is ``docker.io``)."""
    first, sep, _ = name.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return first
    return "docker.io"


DEFAULT_GPU_RESOURCE_PREFIXES = ("nvidia.com/gpu", "nvidia.com/mig-", "amd.com/gpu")
# The option every GPU resource rule declares, as ``@rule(**GPU_RESOURCE_OPTION)``.
GPU_RESOURCE_OPTION = {
    "options": {"gpu-resource-prefixes": list[str]},
    "defaults": {"gpu-resource-prefixes": list(DEFAULT_GPU_RESOURCE_PREFIXES)},
}


def gpu_resources(resources: dict[str, Resource], prefixes: Any = DEFAULT_GPU_RESOURCE_PREFIXES) -> dict[str, Resource]:
    """The entries of a requests/limits section that are GPUs (names starting with a prefix)."""
    prefixes = tuple(prefixes)
    return {name: res for name, res in resources.items() if name.startswith(prefixes)}


def is_templated(value: str) -> bool:
    """A value filled in later (``$(VAR)``, ``${VAR}``, ``$VAR``, ``{{ … }}``, ``<your-image>``,
    ``REPLACE_ME``, …): its final text is unknown. The one placeholder test,
    :func:`linter.model.placeholder.has_placeholder`."""
    return has_placeholder(value)


# The image reference grammar of distribution/reference: optional registry host[:port], then
# lowercase path components, then an optional tag and digest.
_REFERENCE = re.compile(
    r"^(?:(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:]+\])"
    r"(?::[0-9]+)?/)?"
    r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*"
    r"(?::[\w][\w.-]{0,127})?(?:@[^@\s]+)?$"  # a malformed digest is still a reference: IMG002 names it
)


def image_reference(image: str | None) -> tuple[str, str | None, str | None] | None:
    """(name, tag, digest) of a real image reference; ``None`` for placeholders that are filled
    in later (``$IMAGE``, ``{{ .Values.image }}``) or are not image references at all
    (``FILLED_BY_THE_VALIDATOR``, ``<your-image>``): rules about tags cannot judge those."""
    if not image or has_placeholder(image) or not _REFERENCE.match(image):
        return None
    return parse_image(image)
