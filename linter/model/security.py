"""Pod and container ``securityContext`` as the kubelet applies them, written once.

Kubernetes merges the two levels per field: ``runAsUser``, ``runAsGroup``, ``runAsNonRoot``,
``seLinuxOptions``, ``seccompProfile``, ``appArmorProfile`` and ``windowsOptions`` exist on both,
and the container's value wins when it sets one. ``privileged``, ``allowPrivilegeEscalation``,
``capabilities``, ``readOnlyRootFilesystem`` and ``procMount`` exist on containers only.
``allowPrivilegeEscalation`` is always true for a privileged container or one that adds
``CAP_SYS_ADMIN`` (the API server rejects ``false`` beside ``privileged: true``), and is true
by default. Pod Security Standards check app, init and ephemeral containers alike, and exempt
Windows pods (``spec.os.name: windows``) from the Linux-only controls; here a pod whose node
selection admits only Windows nodes is a Windows pod too (:func:`is_windows`).

``privileged: true`` overrides escalation and capabilities both (a privileged container has
every capability and may always escalate), so a privileged container is SEC004's finding alone:
:func:`is_privileged` is what SEC001, SEC002 and GPU010 ask first.
"""

from __future__ import annotations

import posixpath
from typing import Any

from msgspec import Struct

from mlops_lint.model.k8s import Container, PodSpec
from mlops_lint.model.position import Span
from mlops_lint.model.tree import YMap, YSeq

POD_LEVEL_FIELDS = frozenset({"runAsUser", "runAsGroup", "runAsNonRoot", "seLinuxOptions", "seccompProfile",
                              "appArmorProfile", "windowsOptions"})


class Setting(Struct, frozen=True):
    """One effective field: its value, where it is written, and at which level."""

    value: Any
    span: Span | None = None
    path: tuple[str | int, ...] = ()
    level: str | None = None  # "container" | "pod" | None (unset)

    @property
    def is_set(self) -> bool:
        return self.level is not None


def pod_security_context(pod: PodSpec) -> YMap | None:
    return pod.spec.get_map("securityContext")


def effective(container: Container, name: str) -> Setting:
    """The value of ``name`` for ``container``: its own, else (for pod-level fields) the pod's."""
    own = container.security_context
    if own is not None and own.get(name) is not None:
        return Setting(own[name], own.value_span(name), container.path + ("securityContext", name), "container")
    pod = pod_security_context(container.pod)
    if name in POD_LEVEL_FIELDS and pod is not None and pod.get(name) is not None:
        return Setting(pod[name], pod.value_span(name), container.pod.path + ("securityContext", name), "pod")
    return Setting(None)


def anchor(container: Container) -> tuple[Span, tuple[str | int, ...]]:
    """For a field the container lacks: its ``securityContext:`` key, else its ``name:``."""
    body = container.body
    if "securityContext" in body.kspans:
        return body.kspans["securityContext"], container.path + ("securityContext",)
    return container.span, container.path


OS_LABELS = ("kubernetes.io/os", "beta.kubernetes.io/os")


def is_windows(pod: PodSpec) -> bool:
    """A pod kept to Windows nodes: ``spec.os.name: windows`` (what Pod Security Admission reads),
    or a nodeSelector or required node affinity that admits only ``kubernetes.io/os=windows``
    nodes (the older ``beta.kubernetes.io/os`` label too). Linux-only fields (privilege
    escalation, capabilities, seccomp, ``runAsUser``, memory-backed ``/dev/shm``) are not asked of it."""
    os = pod.spec.get_map("os")
    if os is not None and "name" in os:
        return os.get("name") == "windows"
    placement = pod.placement
    return any(placement.selects(label, "windows") for label in OS_LABELS)


def is_privileged(container: Container) -> bool:
    """``securityContext.privileged: true`` (a quoted or templated value is not judged)."""
    own = container.security_context
    return own is not None and own.get("privileged") is True


def capability(name: Any) -> str:
    """A capability name without the ``CAP_`` prefix (``CAP_SYS_ADMIN`` and ``SYS_ADMIN`` are one)."""
    text = str(name)
    return text[4:] if text.upper().startswith("CAP_") else text


class Capabilities(Struct, frozen=True):
    node: YMap | None  # the ``capabilities`` mapping
    add: tuple[tuple[str, Span, tuple[str | int, ...]], ...]  # (name as written, span, path)
    drop: tuple[tuple[str, Span, tuple[str | int, ...]], ...]


def capabilities(container: Container) -> Capabilities:
    own = container.security_context
    node = own.get_map("capabilities") if own is not None else None
    lists = {}
    for which in ("add", "drop"):
        items = node.get(which) if node is not None else None
        entries = []
        if isinstance(items, YSeq):
            for index, item in enumerate(items):
                entries.append((str(item), items.item_span(index),
                                container.path + ("securityContext", "capabilities", which, index)))
        lists[which] = tuple(entries)
    return Capabilities(node, lists["add"], lists["drop"])


class Escalation(Struct, frozen=True):
    """Whether ``allowPrivilegeEscalation`` is in effect for a container, and why."""

    allowed: bool
    reason: str  # "privileged", "CAP_SYS_ADMIN", "explicit", "invalid", "default", ""
    span: Span
    path: tuple[str | int, ...]


def privilege_escalation(container: Container) -> Escalation:
    own = container.security_context
    if own is not None and own.get("privileged") is True:
        return Escalation(True, "privileged", own.value_span("privileged"),
                          container.path + ("securityContext", "privileged"))
    for name, span, path in capabilities(container).add:
        if capability(name).upper() == "SYS_ADMIN":
            return Escalation(True, "CAP_SYS_ADMIN", span, path)
    if own is not None and "allowPrivilegeEscalation" in own:
        value = own.get("allowPrivilegeEscalation")
        span, path = own.value_span("allowPrivilegeEscalation"), container.path + ("securityContext", "allowPrivilegeEscalation")
        if value is False:
            return Escalation(False, "", span, path)
        return Escalation(True, "explicit" if value is True else "invalid", span, path)
    span, path = anchor(container)
    return Escalation(True, "default", span, path)


# ---------------------------------------------------------------------------------------------
# Device plugins

DEVICE_PLUGIN_DIR = "/var/lib/kubelet/device-plugins"


def is_device_plugin_path(path: Any) -> bool:
    """The kubelet's device plugin directory or a path below it, after normalisation
    (``//var/lib/kubelet/./device-plugins/`` is the same path; ``…/device-plugins/../pods`` is not)."""
    if not isinstance(path, str) or not path.startswith("/"):
        return False
    normal = posixpath.normpath("/" + path.lstrip("/"))  # POSIX keeps a leading "//": strip it first
    return normal == DEVICE_PLUGIN_DIR or normal.startswith(DEVICE_PLUGIN_DIR + "/")


def mounts_device_plugin_dir(container: Container) -> bool:
    """Whether the container mounts a hostPath volume of the device plugin directory: it is a
    device plugin, which must create its socket in that root-owned directory."""
    plugin_volumes = set()
    for _, volume in container.pod.volumes:
        host, name = volume.get_map("hostPath"), volume.get("name")
        if host is not None and isinstance(name, str) and is_device_plugin_path(host.get("path")):
            plugin_volumes.add(name)
    return any(mount.get("name") in plugin_volumes for _, mount in container.volume_mounts
               if isinstance(mount.get("name"), str))


def is_node_agent(container: Container) -> bool:
    """A container that runs on the nodes it selects for the node's sake (device plugins, MIG
    managers, profilers, exporters, driver installers): a DaemonSet's, or one mounting the
    kubelet's device-plugin directory. SEC004 and SEC005 give such containers the advice for node
    agents instead of the advice for workloads."""
    return container.pod.obj.kind == "DaemonSet" or mounts_device_plugin_dir(container)
