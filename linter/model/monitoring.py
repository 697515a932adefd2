"""Prometheus Operator monitors and the pods they scrape, for the OBS rules.

A ``PodMonitor`` (``monitoring.coreos.com`` or Azure Monitor's ``azmonitoring.coreos.com``)
selects pods by ``spec.selector`` (a ``metav1.LabelSelector``) in the namespaces of
``spec.namespaceSelector`` (``any: true``, ``matchNames``, else the monitor's own namespace); a
``ServiceMonitor`` selects Services the same way and scrapes the pods behind them (each Service's
``spec.selector``). Label matching goes through :mod:`linter.model.selectors`.

The pods a monitor can see are the pod templates of the project (:class:`Target`), with the
labels their controllers add where the value is known (a Job's ``job-name``, a Kubeflow job's
``training.kubeflow.org/job-name`` and ``replica-type``, KubeRay's ``ray.io/node-type``, a
JobSet's names …). Labels a controller adds with values we cannot know (``pod-template-hash``,
``controller-uid``, indices, generated names) are *unknown*: a selector term on such a key is
taken to hold for that controller's pods, so a monitor is never reported for labels only the
cluster knows. A selector on the label domain of an operator whose pods the model does not
expand (``kaito.sh/workspace``, ``leaderworkerset.sigs.k8s.io/name`` …) that nothing in scope
carries selects what that operator creates: such a monitor is not judged.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from msgspec import Struct, field

from mlops_lint.model.document import K8sObject
from mlops_lint.model.k8s import PodSpec, Workload
from mlops_lint.model.selectors import label_value, labels_of, selector_matches
from mlops_lint.model.tree import YMap
from mlops_lint.model.memo import once

MONITOR_GROUPS = ("monitoring.coreos.com", "azmonitoring.coreos.com")
MONITOR_KINDS = ("PodMonitor", "ServiceMonitor")

# Label keys (and "prefix/" domains) that controllers set on the pods they create, with values a
# manifest does not tell, by the controller's (group, kind); "*" for every kind of the group.
_CONTROLLER_UNKNOWN: dict[tuple[str, str], tuple[str, ...]] = {
    ("apps", "Deployment"): ("pod-template-hash",),
    ("apps", "ReplicaSet"): (),
    ("apps", "StatefulSet"): ("statefulset.kubernetes.io/", "apps.kubernetes.io/", "controller-revision-hash"),
    ("apps", "DaemonSet"): ("controller-revision-hash", "pod-template-generation"),
    ("batch", "Job"): ("controller-uid", "batch.kubernetes.io/"),
    ("batch", "CronJob"): ("controller-uid", "job-name", "batch.kubernetes.io/"),
    ("kubeflow.org", "*"): ("training.kubeflow.org/", "job-name", "replica-type", "replica-index", "group-name",
                           "job-role", "controller-uid", "batch.kubernetes.io/"),
    ("batch.volcano.sh", "Job"): ("volcano.sh/", "scheduling.k8s.io/"),
    ("ray.io", "*"): ("ray.io/",),
    ("jobset.x-k8s.io", "JobSet"): ("jobset.sigs.k8s.io/", "controller-uid", "job-name", "batch.kubernetes.io/"),
}
# Label domains of operators that create pods and Services from resources the project model does
# not expand (KAITO Workspaces, LeaderWorkerSets, KServe, Knative …): a selector on such a key
# that nothing in the project carries selects what the operator creates, which the linter cannot see.
OPERATOR_DOMAINS = (
    "kaito.sh/", "leaderworkerset.sigs.k8s.io/", "kueue.x-k8s.io/", "serving.kserve.io/", "serving.knative.dev/",
    "app.kubernetes.io/managed-by", "nvidia.com/", "scheduling.x-k8s.io/",
)


def _matches_key(key: str, patterns: tuple[str, ...]) -> bool:
    return any(key == p or (p.endswith("/") and key.startswith(p)) for p in patterns)


def controller_unknown(workload: "Workload") -> tuple[str, ...]:
    obj = workload.obj
    return _CONTROLLER_UNKNOWN.get((obj.group, obj.kind)) or _CONTROLLER_UNKNOWN.get((obj.group, "*")) or ()


class Port(Struct):
    name: str | None
    number: int | None
    container: str


class Target(Struct):
    """A pod template as a monitor sees it: namespace, labels and declared container ports."""

    namespace: str  # "*" for pods an operator creates in a namespace the project does not tell
    labels: dict[str, str]
    ports: list[Port]
    origin: str = ""  # for messages: "Deployment ml/x", "pods the GPU Operator creates"
    unknown: tuple[str, ...] = ()  # label keys/domains its controller sets with values we cannot know

    def may_carry(self, key: str) -> bool:
        """Whether the pods may carry label ``key`` (set in the template, or by the controller)."""
        return key in self.labels or _matches_key(key, self.unknown)

    def in_namespace(self, namespaces: "Namespaces") -> bool:
        return self.namespace == "*" or namespaces.holds(self.namespace)

    def has_port(self, name: str | None = None, number: int | None = None) -> bool:
        return any((name is not None and p.name == name) or (number is not None and p.number == number)
                   for p in self.ports)


def distinct_templates(targets: Iterable[Target]) -> int:
    """How many pod templates ``targets`` are, a template copied into several files (the same
    object for each environment) once: the same workload and the same labels."""
    return len({(t.origin, tuple(sorted(t.labels.items()))) for t in targets})


def _controller_labels(workload: Workload, pod: PodSpec) -> dict[str, str]:
    """Labels a controller sets on a template's pods whose values the manifest tells."""
    obj, name = workload.obj, workload.obj.name
    kind, group, role = obj.kind, obj.group, pod.role
    if kind == "Job" and group == "batch":
        return {"job-name": name, "batch.kubernetes.io/job-name": name}
    if group == "kubeflow.org" and role:
        return {"training.kubeflow.org/job-name": name, "training.kubeflow.org/replica-type": role.lower()}
    if kind == "Job" and group == "batch.volcano.sh":
        return {"volcano.sh/job-name": name, "volcano.sh/task-spec": role or ""}
    if group == "ray.io":
        labels = {"ray.io/node-type": "head" if role == "head" else "worker", "ray.io/is-ray-node": "yes",
                  "ray.io/group": "headgroup" if role == "head" else (role or ""),
                  "app.kubernetes.io/name": "kuberay", "app.kubernetes.io/created-by": "kuberay-operator"}
        if kind == "RayCluster":
            labels["ray.io/cluster"] = name
        return labels
    if kind == "JobSet":
        return {"jobset.sigs.k8s.io/jobset-name": name, "jobset.sigs.k8s.io/replicatedjob-name": role or ""}
    return {}


# Container ports operators add to the pods they create when the template does not declare them:
# KubeRay's Ray container (head: GCS, dashboard, client, metrics; workers: metrics), the training
# operator's default port of a PyTorchJob or TFJob replica.
_RAY_HEAD_PORTS = (("gcs-server", 6379), ("dashboard", 8265), ("client", 10001), ("metrics", 8080))
_RAY_WORKER_PORTS = (("metrics", 8080),)
_KUBEFLOW_PORTS = {"PyTorchJob": (("pytorchjob-port", 23456),), "TFJob": (("tfjob-port", 2222),)}


def _injected_ports(workload: Workload, pod: PodSpec) -> list[Port]:
    obj = workload.obj
    if obj.group == "ray.io":
        ports = _RAY_HEAD_PORTS if pod.role == "head" else _RAY_WORKER_PORTS
    elif obj.group == "kubeflow.org":
        ports = _KUBEFLOW_PORTS.get(obj.kind, ())
    else:
        return []
    first = pod.app_containers[0].name if pod.app_containers else ""
    return [Port(name, number, first) for name, number in ports]


def _ports(pod: PodSpec) -> list[Port]:
    found: list[Port] = []
    for container in pod.containers:
        if container.is_ephemeral:
            continue
        ports = container.body.get_seq("ports")
        for _, port in ports.maps() if ports is not None else ():
            name, number = port.get("name"), port.get("containerPort")
            found.append(Port(str(name) if isinstance(name, str) else None,
                              number if isinstance(number, int) and not isinstance(number, bool) else None,
                              container.name))
    return found


def pod_targets(workload: Workload) -> list[Target]:
    """The pod templates of a workload as monitors see them (a PodTemplate, which runs nothing, has
    none). Built once per workload view (OBS001 and OBS002 both collect them; the targets are
    never modified): a fresh list each call."""
    return list(once(workload, "pod_targets", lambda: tuple(_pod_targets(workload))))


def _pod_targets(workload: Workload) -> list[Target]:
    if workload.kind == "PodTemplate":
        return []
    namespace = workload.obj.namespace or "default"
    targets = []
    for pod in workload.pods:
        labels = {**_controller_labels(workload, pod), **labels_of(pod.labels)}
        ports = _ports(pod)
        ports += [p for p in _injected_ports(workload, pod) if not any(q.name == p.name for q in ports)]
        targets.append(Target(namespace, labels, ports, workload.obj.describe(), controller_unknown(workload)))
    return targets


def scrape_facts(obj: K8sObject, ctx: Any) -> Iterator[Target | K8sObject]:
    """What the OBS rules collect from every file: pod templates as :class:`Target`, and core
    Services (whole: they are few and small)."""
    if obj.kind == "Service" and obj.group == "":
        yield obj
        return
    workload = ctx.index.workload(obj)
    if workload is not None:
        yield from pod_targets(workload)


class ByNamespace:
    """Targets (or Services) by namespace, so a monitor finds those of its namespaces without
    scanning the project's; every answer keeps project order. A target in namespace ``*`` (pods
    an operator creates) is in every namespace. :meth:`selectable` narrows further by a selector's
    first ``key: value`` term, through an index of each label key asked (built the first time it
    is asked), so a project's monitors cost each a look-up, not a scan of every pod template of
    their namespaces."""

    def __init__(self, items: Iterable[Any], namespace_of: Any = lambda item: item.namespace):
        self.items = list(items)
        self._wild: list[tuple[int, Any]] = []
        self._by: dict[str, list[tuple[int, Any]]] = {}
        self._namespace: list[str] = []
        for position, item in enumerate(self.items):
            namespace = namespace_of(item) or "default"
            self._namespace.append(namespace)
            (self._wild if namespace == "*" else self._by.setdefault(namespace, [])).append((position, item))
        self._keys: dict[str, tuple[dict[str, list[tuple[int, Any]]], list[tuple[int, Any]]]] = {}

    def within(self, namespaces: "Namespaces") -> list[Any]:
        if namespaces.any:
            return list(self.items)
        return self._pick([self._by.get(name, []) for name in namespaces.names])

    def count_within(self, namespaces: "Namespaces") -> int:
        if namespaces.any:
            return len(self.items)
        return len(self._wild) + sum(len(self._by.get(name, ())) for name in namespaces.names)

    def each_within(self, namespaces: "Namespaces") -> Iterator[Any]:
        """:meth:`within`, unordered and not built as a list (for questions asked of any one)."""
        if namespaces.any:
            yield from self.items
            return
        for group in [self._wild, *(self._by.get(name, []) for name in namespaces.names)]:
            for _, item in group:
                yield item

    def of(self, namespace: str) -> list[Any]:
        return self._pick([self._by.get(namespace or "default", [])])

    def holds_any(self, namespaces: Iterable[str]) -> bool:
        return bool(self._wild) or any(name in self._by for name in namespaces)

    def selectable(self, namespaces: "Namespaces", selector: Any, plain: bool = False) -> list[Any]:
        """Those of :meth:`within` that ``selector`` may select (a LabelSelector; ``plain``: a
        Service's ``spec.selector`` map), in project order: a superset, to be matched in full.
        A term ``key: value`` holds only for what has that label value, or may carry ``key``
        with a value unknown here (:attr:`Target.unknown`); without a term, every one."""
        term = _first_term(selector, plain)
        if term is None:
            return self.within(namespaces)
        key, value = term
        values, open_ = self._by_key(key)
        found = values.get(value)
        if open_:
            found = sorted([*(found or ()), *open_])
        return [item for position, item in found or ()
                if namespaces.any or self._namespace[position] == "*" or namespaces.holds(self._namespace[position])]

    def _by_key(self, key: str) -> tuple[dict[str, list[tuple[int, Any]]], list[tuple[int, Any]]]:
        """For label ``key``: value -> what has it with that value, and what does not have it but
        may carry it with a value unknown here; built the first time ``key`` is asked (a project's
        monitors ask about a few keys: each costs one pass, not one per monitor)."""
        found = self._keys.get(key)
        if found is None:
            values: dict[str, list[tuple[int, Any]]] = {}
            open_: list[tuple[int, Any]] = []
            may_carry: dict[tuple[str, ...], bool] = {}  # per distinct tuple: a controller kind's
            for position, item in enumerate(self.items):
                labels = _labels(item)
                value = labels.get(key)
                if value is not None:
                    values.setdefault(value, []).append((position, item))
                    continue
                unknown = getattr(item, "unknown", ())
                if unknown:
                    carries = may_carry.get(unknown)
                    if carries is None:
                        carries = may_carry[unknown] = _matches_key(key, unknown)
                    if carries:
                        open_.append((position, item))
            found = self._keys[key] = (values, open_)
        return found

    def _pick(self, groups: list[list[tuple[int, Any]]]) -> list[Any]:
        picked = [entry for group in [self._wild, *groups] for entry in group]
        if sum(1 for group in [self._wild, *groups] if group) > 1:
            picked.sort(key=lambda entry: entry[0])
        return [item for _, item in picked]


def _labels(item: Any) -> dict[str, str]:
    """A target's labels (known values), or a Service's own."""
    return item.labels if isinstance(item, Target) else labels_of(item.labels)


def _first_term(selector: Any, plain: bool) -> tuple[str, str] | None:
    """The first ``key: value`` a selector requires (of ``matchLabels``; ``plain``: of the map)."""
    terms = selector if plain else (selector.get("matchLabels") if isinstance(selector, dict) else None)
    if not isinstance(terms, dict):
        return None
    for key, value in terms.items():
        return label_value(key), label_value(value)
    return None


def split_facts(found: Iterable[Target | K8sObject]) -> tuple[list[Target], list[K8sObject]]:
    """(pod templates, Services) of :func:`scrape_facts`, in project order."""
    targets: list[Target] = []
    services: list[K8sObject] = []
    for fact in found:
        (targets if isinstance(fact, Target) else services).append(fact)
    return targets, services


# The DCGM exporter the NVIDIA GPU Operator deploys for a ClusterPolicy (its state-dcgm-exporter
# assets): DaemonSet pods labelled app=nvidia-dcgm-exporter with container port `metrics` (9400),
# behind the Service `nvidia-dcgm-exporter` (port `gpu-metrics` -> 9400), in the operator's
# namespace, which the ClusterPolicy does not name.
GPU_OPERATOR_DCGM_LABELS = {"app": "nvidia-dcgm-exporter"}
GPU_OPERATOR_DCGM_PORT = Port("metrics", 9400, "nvidia-dcgm-exporter")
GPU_OPERATOR_DCGM_SERVICE_PORT = ("gpu-metrics", 9400)


def dcgm_enabled(policy: K8sObject) -> bool:
    """Whether a GPU Operator ClusterPolicy deploys the DCGM exporter (``spec.dcgmExporter.enabled``,
    true unless set to false)."""
    spec = policy.body.get("spec")
    exporter = spec.get("dcgmExporter") if isinstance(spec, dict) else None
    enabled = exporter.get("enabled") if isinstance(exporter, dict) else None
    return enabled is not False and str(enabled).lower() != "false"


def operator_targets(index: Any) -> list[Target]:
    """Pods the project's operators create that no manifest shows (the GPU Operator's exporter)."""
    policies = [p for p in index.of_kind("ClusterPolicy") if p.group == "nvidia.com" and dcgm_enabled(p)]
    if not policies:
        return []
    return [Target("*", dict(GPU_OPERATOR_DCGM_LABELS), [GPU_OPERATOR_DCGM_PORT],
                   f"the DCGM exporter the GPU Operator deploys for ClusterPolicy `{policies[0].name}`")]


class ScrapeModel:
    """The project's scrape facts (:func:`scrape_facts`, merged over its files) as OBS001 and
    OBS002 look them up: the pod templates (``targets``), the same with the pods operators create
    (``reachable``) and the Services, each by namespace. Both rules collect the same facts, so
    :func:`scrape_model` builds this once per run for both (with the label-key indexes
    :meth:`ByNamespace.selectable` adds as monitors ask)."""

    __slots__ = ("found", "virtual", "targets", "reachable", "services")

    def __init__(self, found: list, index: Any):
        real, services = split_facts(found)
        self.found = found
        self.virtual = operator_targets(index)
        self.targets = ByNamespace(real)
        self.reachable = ByNamespace(real + self.virtual)
        self.services = ByNamespace(services, lambda s: s.namespace or "default")


def scrape_model(found: list, index: Any) -> ScrapeModel:
    """The :class:`ScrapeModel` of ``found``, kept with the index: a second rule asking with the
    same facts (equal lists of the same objects: compared by identity first) gets the same model."""
    slot = once(index, "scrape-model", dict)
    model = slot.get("model")
    if model is None or model.found != found:
        model = slot["model"] = ScrapeModel(found, index)
    return model


# ---------------------------------------------------------------------------------------------
# Monitors


class Namespaces(Struct, frozen=True):
    any: bool
    names: frozenset[str] = field(default_factory=frozenset)

    def holds(self, namespace: str) -> bool:
        return self.any or (namespace or "default") in self.names

    def describe(self) -> str:
        if self.any:
            return "any namespace"
        names = sorted(self.names)
        return f"namespace {names[0]}" if len(names) == 1 else "namespaces " + ", ".join(names)


def monitor_namespaces(monitor: K8sObject) -> Namespaces:
    """``spec.namespaceSelector``: ``any: true``, ``matchNames``, else the monitor's own namespace."""
    spec = monitor.body.get("spec")
    selector = spec.get("namespaceSelector") if isinstance(spec, dict) else None
    if isinstance(selector, dict):
        if selector.get("any") is True:
            return Namespaces(True)
        names = selector.get("matchNames")
        if isinstance(names, list) and names:
            return Namespaces(False, frozenset(label_value(n) for n in names))
    return Namespaces(False, frozenset({monitor.namespace or "default"}))


def monitors(index: Any) -> Iterator[K8sObject]:
    for obj in index.of_kind(*MONITOR_KINDS):
        if obj.group in MONITOR_GROUPS and isinstance(obj.body.get("spec"), YMap):
            yield obj


def selector_keys(selector: Any) -> set[str]:
    """The label keys a LabelSelector (or a plain selector map) has terms on."""
    if not isinstance(selector, dict):
        return set()
    if "matchLabels" not in selector and "matchExpressions" not in selector:
        return {label_value(k) for k in selector}  # a Service's plain map
    keys: set[str] = set()
    match_labels, expressions = selector.get("matchLabels"), selector.get("matchExpressions")
    if isinstance(match_labels, dict):
        keys.update(label_value(k) for k in match_labels)
    if isinstance(expressions, list):
        keys.update(label_value(e.get("key")) for e in expressions if isinstance(e, dict))
    return keys


def selects_operator_objects(selector: Any, carriers: Iterable[Any]) -> bool:
    """Whether a selector has a term on a label of an operator's domain that nothing in scope may
    carry: it selects what the operator creates, which the project does not show."""
    keys = [k for k in selector_keys(selector) if _matches_key(k, OPERATOR_DOMAINS)]
    if not keys:
        return False
    carriers = list(carriers)
    return any(not any(_carries(c, key) for c in carriers) for key in keys)


def _carries(carrier: Any, key: str) -> bool:
    if isinstance(carrier, Target):
        return carrier.may_carry(key)
    return key in labels_of(carrier.labels)  # a Service


def _known_part(selector: dict, target: Target) -> dict:
    """The selector without the terms on labels the target's controller sets with unknown values."""
    def unknown(key: Any) -> bool:
        key = label_value(key)
        return key not in target.labels and _matches_key(key, target.unknown)

    kept: dict[str, Any] = {}
    match_labels = selector.get("matchLabels")
    if isinstance(match_labels, dict):
        kept["matchLabels"] = {k: v for k, v in match_labels.items() if not unknown(k)}
    expressions = selector.get("matchExpressions")
    if isinstance(expressions, list):
        kept["matchExpressions"] = [e for e in expressions if not (isinstance(e, dict) and unknown(e.get("key")))]
    return kept


def may_select(selector: Any, target: Target) -> bool:
    """Whether a LabelSelector selects the target's pods as far as the project tells: terms on
    labels only the cluster knows (``pod-template-hash``, generated names) are taken to hold."""
    if not isinstance(selector, dict):
        return False
    return selector_matches(_known_part(selector, target), target.labels)


def map_may_select(selector: Any, target: Target) -> bool:
    """The same for a Service's plain ``spec.selector`` map (an empty or missing one selects no pod)."""
    if not isinstance(selector, dict) or not selector:
        return False
    return all(label_value(v) == target.labels.get(label_value(k))
               or (label_value(k) not in target.labels and _matches_key(label_value(k), target.unknown))
               for k, v in selector.items())


def monitor_selector(monitor: K8sObject) -> dict | None:
    """``spec.selector``; None when missing (the CRD requires it: a schema error, not judged here)."""
    spec = monitor.body.get_map("spec")
    selector = spec.get("selector") if spec is not None else None
    return selector if isinstance(selector, dict) else None


def targets_selected(selector: Any, namespaces: Namespaces, targets: Iterable[Target]) -> list[Target]:
    """The pod templates a PodMonitor with ``selector`` over ``namespaces`` selects."""
    return [t for t in targets if t.in_namespace(namespaces) and may_select(selector, t)]


def services_selected(selector: Any, namespaces: Namespaces, services: Iterable[K8sObject]) -> list[K8sObject]:
    """The Services a ServiceMonitor with ``selector`` over ``namespaces`` selects."""
    return [s for s in services if namespaces.holds(s.namespace or "default")
            and selector is not None and selector_matches(selector, labels_of(s.labels))]


def service_selector(service: K8sObject) -> dict | None:
    """A Service's ``spec.selector`` (None: a Service without selector, whose endpoints are set by hand)."""
    spec = service.body.get("spec")
    selector = spec.get("selector") if isinstance(spec, dict) else None
    return selector if isinstance(selector, dict) and selector else None


def service_targets(service: K8sObject, targets: Iterable[Target]) -> list[Target]:
    """The pod templates behind a Service (same namespace, its selector)."""
    selector = service_selector(service)
    namespace = service.namespace or "default"
    return [t for t in targets if (t.namespace == "*" or t.namespace == namespace) and map_may_select(selector, t)]


def behind(service: K8sObject, targets: ByNamespace) -> list[Target]:
    """:func:`service_targets` among ``targets``, looked up by the Service's selector."""
    namespace = Namespaces(False, frozenset({service.namespace or "default"}))
    return service_targets(service, targets.selectable(namespace, service_selector(service), plain=True))


def service_ports(service: K8sObject) -> list[dict]:
    spec = service.body.get("spec")
    ports = spec.get("ports") if isinstance(spec, dict) else None
    return [p for p in ports if isinstance(p, dict)] if isinstance(ports, list) else []
