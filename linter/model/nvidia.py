"""NVIDIA node agents: what counts as a device plugin, a DCGM exporter, a GPU Operator.

Used by GPU009/GPU010 (device plugins) and OBS003 (DCGM exporters). One recogniser each, so the
rules agree on what they look at:

* :func:`is_device_plugin`: a DaemonSet running the NVIDIA device plugin: a container whose image
  is ``…/k8s-device-plugin`` (``nvcr.io/nvidia/k8s-device-plugin``, Docker Hub's
  ``nvidia/k8s-device-plugin``, AKS's ``mcr.microsoft.com/oss/nvidia/k8s-device-plugin``, or a
  mirror keeping the repository name) and whose entrypoint is the plugin. The same image also
  ships ``gpu-feature-discovery``, ``mps-control-daemon`` and ``config-manager``: a container
  started as one of those is not a device plugin. An image that is a template (``{{ … }}``,
  ``$VAR``) or a placeholder (``FILLED BY THE OPERATOR``) counts when it names the repository,
  or when the DaemonSet or container is named ``nvidia-device-plugin…``.
* :func:`is_dcgm_exporter`: a workload with a ``…/dcgm-exporter`` image (``nvcr.io/nvidia/k8s/
  dcgm-exporter``), or a DaemonSet named ``…dcgm-exporter…`` whose image is a template or a
  placeholder.
* :func:`gpu_operator_policies`: the GPU Operator's ``ClusterPolicy`` objects (``nvidia.com/v1``);
  :func:`policy_deploys` says whether a policy deploys a component (the operator enables a
  component whose ``enabled`` is unset), :func:`operand_placement` where the operator runs it
  (nodes it labels ``nvidia.com/gpu.deploy.<component>=true``), and :func:`is_operator_operand`
  recognises a DaemonSet the operator rendered itself (it selects that label).
* :func:`placements_may_overlap`: whether two pod placements can both allow one node ("on the
  same nodes"), from their nodeSelectors and required node affinity alone (node labels are not
  known to a linter; two placements overlap unless their requirements contradict).
"""

from __future__ import annotations

from typing import Any, Iterable

from mlops_lint.model.k8s import Container, Workload, image_reference
from mlops_lint.model.selectors import Placement, Requirement

DEVICE_PLUGIN_REPOSITORY = "k8s-device-plugin"
DCGM_EXPORTER_REPOSITORY = "dcgm-exporter"
# Other programs shipped in the k8s-device-plugin image (since v0.15): not device plugins.
_NOT_PLUGIN_ENTRYPOINTS = ("gpu-feature-discovery", "mps-control-daemon", "config-manager")

# ClusterPolicy component -> the suffix of the node label the operator gates its DaemonSet with
# (nvidia.com/gpu.deploy.<suffix>=true), from gpu-operator controllers/state_manager.go.
OPERATOR_COMPONENTS = {
    "driver": "driver",
    "toolkit": "container-toolkit",
    "devicePlugin": "device-plugin",
    "dcgm": "dcgm",
    "dcgmExporter": "dcgm-exporter",
    "gfd": "gpu-feature-discovery",
    "migManager": "mig-manager",
    "nodeStatusExporter": "node-status-exporter",
    "validator": "operator-validator",
}
DEPLOY_LABEL_PREFIX = "nvidia.com/gpu.deploy."


def _repository(image: str | None) -> str | None:
    """The last path component of an image's repository (``k8s-device-plugin``), if readable."""
    reference = image_reference(image)
    if reference is None:
        return None
    return reference[0].rsplit("/", 1)[-1]


def _entrypoint_words(container: Container) -> list[str]:
    words: list[str] = []
    for key in ("command", "args"):
        value = container.body.get(key)
        if isinstance(value, list):
            words.extend(str(v) for v in value)
    return words


def _is_plugin_entrypoint(container: Container) -> bool:
    """Whether the container runs the plugin itself (no command = the image's default: the plugin)."""
    words = _entrypoint_words(container)
    if not words:
        return True
    text = " ".join(words)
    if "nvidia-device-plugin" in text:
        return True
    return not any(other in text for other in _NOT_PLUGIN_ENTRYPOINTS)


def device_plugin_containers(workload: Workload) -> list[Container]:
    """The containers of a workload that run the NVIDIA device plugin (init containers excluded)."""
    found = []
    for pod in workload.pods:
        for container in pod.app_containers:
            image = container.image or ""
            repository = _repository(image)
            if repository is not None:
                named = repository == DEVICE_PLUGIN_REPOSITORY
            else:  # a templated or placeholder image: trust the repository text, then the names
                named = DEVICE_PLUGIN_REPOSITORY in image or _named_plugin(workload.obj.name, container.name)
            if named and _is_plugin_entrypoint(container):
                found.append(container)
    return found


def _named_plugin(*names: str) -> bool:
    return any(
        name.startswith("nvidia-device-plugin") and "mps" not in name and "feature-discovery" not in name
        and "gfd" not in name
        for name in names
    )


def is_device_plugin(workload: Workload | None) -> bool:
    """A DaemonSet that runs the NVIDIA device plugin (see the module docs)."""
    return workload is not None and workload.kind == "DaemonSet" and bool(device_plugin_containers(workload))


def is_dcgm_exporter(workload: Workload | None) -> bool:
    """A workload that runs NVIDIA's DCGM exporter (see the module docs)."""
    if workload is None:
        return False
    for pod in workload.pods:
        for container in pod.app_containers:
            image = container.image or ""
            repository = _repository(image)
            if repository is not None:
                if repository == DCGM_EXPORTER_REPOSITORY:
                    return True
            elif DCGM_EXPORTER_REPOSITORY in image or workload.kind == "DaemonSet" and (
                DCGM_EXPORTER_REPOSITORY in workload.obj.name or DCGM_EXPORTER_REPOSITORY in container.name
            ):
                return True
    return False


# ---------------------------------------------------------------------------------------------
# The GPU Operator


def gpu_operator_policies(index: Any) -> list[Any]:
    """The GPU Operator's ClusterPolicy objects (``nvidia.com/v1``) in the project index (found
    once per index; a fresh list each call)."""
    return list(index.memo("gpu-operator-policies",
                           lambda: tuple(obj for obj in index.of_kind("ClusterPolicy") if obj.group == "nvidia.com")))


def policy_deploys(policy: Any, component: str) -> bool:
    """Whether a ClusterPolicy deploys ``component`` (``devicePlugin``, ``dcgmExporter``…).

    The operator treats a component whose ``enabled`` is unset as enabled; only an explicit
    ``enabled: false`` (or the string ``"false"``) turns it off.
    """
    spec = policy.body.get("spec")
    section = spec.get(component) if isinstance(spec, dict) else None
    if not isinstance(section, dict):
        return True
    enabled = section.get("enabled")
    return enabled is not False and str(enabled).lower() != "false"


def operand_placement(component: str) -> Placement:
    """Where the GPU Operator runs a component's DaemonSet: nodes labelled
    ``nvidia.com/gpu.deploy.<component>=true`` (which it sets on nodes with NVIDIA GPUs)."""
    return Placement(node_selector={DEPLOY_LABEL_PREFIX + OPERATOR_COMPONENTS[component]: "true"})


def is_operator_operand(workload: Workload) -> bool:
    """A DaemonSet the GPU Operator rendered itself: its pods select a
    ``nvidia.com/gpu.deploy.<component>=true`` label (the operator's own assets do)."""
    for pod in workload.pods:
        placement = pod.placement
        for suffix in OPERATOR_COMPONENTS.values():
            if placement.selects(DEPLOY_LABEL_PREFIX + suffix, "true"):
                return True
    return False


# ---------------------------------------------------------------------------------------------
# Do two placements share a node?


class _Constraint:
    """What the requirements on one label key allow together."""

    __slots__ = ("allowed", "excluded", "present", "absent", "gt", "lt", "impossible")

    def __init__(self) -> None:
        self.allowed: set[str] | None = None  # None: any value
        self.excluded: set[str] = set()
        self.present = False
        self.absent = False
        self.gt: int | None = None
        self.lt: int | None = None
        self.impossible = False

    def add(self, op: str, values: tuple[str, ...]) -> None:
        if op == "In":
            self.present = True
            self.allowed = set(values) if self.allowed is None else self.allowed & set(values)
        elif op == "NotIn":
            self.excluded |= set(values)
        elif op == "Exists":
            self.present = True
        elif op == "DoesNotExist":
            self.absent = True
        elif op in ("Gt", "Lt"):
            self.present = True
            try:
                bound = int(values[0]) if len(values) == 1 else None
            except ValueError:
                bound = None
            if bound is None:
                self.impossible = True
            elif op == "Gt":
                self.gt = bound if self.gt is None else max(self.gt, bound)
            else:
                self.lt = bound if self.lt is None else min(self.lt, bound)
        else:  # an unknown operator, or the marker of an empty term: matches no node
            self.impossible = True

    def satisfiable(self) -> bool:
        if self.impossible or (self.absent and self.present):
            return False
        if self.absent:
            return True
        if self.allowed is not None:
            return any(self._value_ok(v) for v in self.allowed)
        if self.gt is not None or self.lt is not None:
            low = self.gt + 1 if self.gt is not None else None
            high = self.lt - 1 if self.lt is not None else None
            if low is not None and high is not None:
                if low > high:
                    return False
                if high - low < len(self.excluded) + 1:  # few candidates: try them
                    return any(str(n) not in self.excluded for n in range(low, high + 1))
            return True
        return True

    def _value_ok(self, value: str) -> bool:
        if value in self.excluded:
            return False
        if self.gt is not None or self.lt is not None:
            try:
                number = int(value)
            except ValueError:
                return False
            if self.gt is not None and number <= self.gt:
                return False
            if self.lt is not None and number >= self.lt:
                return False
        return True


def _satisfiable(selector: dict[str, str], requirements: Iterable[Requirement]) -> bool:
    constraints: dict[str, _Constraint] = {}
    for key, value in selector.items():
        constraints.setdefault(key, _Constraint()).add("In", (value,))
    for req in requirements:
        constraints.setdefault(req.key, _Constraint()).add(req.operator, req.values)
    return all(c.satisfiable() for c in constraints.values())


def placements_may_overlap(a: Placement, b: Placement) -> bool:
    """Whether some node could satisfy both placements (``nodeSelector`` plus required node
    affinity; ``Placement.terms`` are ORed, requirements within a term ANDed).

    Node labels are unknown, so two placements overlap unless their requirements contradict
    (``gpu=a`` against ``gpu=b``, ``In`` sets without a common value, ``Exists`` against
    ``DoesNotExist``, disjoint ``Gt``/``Lt`` ranges). Terms that use ``matchFields`` cannot be
    judged and are taken to overlap.
    """
    selector = dict(a.node_selector)
    for key, value in b.node_selector.items():
        if key in selector and selector[key] != value:
            return False
        selector[key] = value
    terms_a = a.terms or ((),)
    terms_b = b.terms or ((),)
    if (a.unknown_terms and not a.terms) or (b.unknown_terms and not b.terms):
        return _satisfiable(selector, ())
    if a.unknown_terms or b.unknown_terms:
        return True
    return any(_satisfiable(selector, (*ta, *tb)) for ta in terms_a for tb in terms_b)
