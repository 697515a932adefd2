"""API versions that are gone: data, not code.

``BUILTIN`` is the Kubernetes deprecated API migration guide
(https://kubernetes.io/docs/reference/using-api/deprecation-guide/): each entry is removed from
the release ``removed_in`` on, and compared with the configured ``kubernetes-version``.
Built-in versions that are not in this table but are not served by the configured release (alpha
versions, ``apps/v2``…) are found from the release's own schemas (see SCH003).

``CUSTOM`` lists versions of the ML operators' CRDs that their current releases no longer serve.
A CRD in the project or in ``crd-paths`` always wins over this table: if it serves the version,
the version is fine.
"""

from __future__ import annotations

from msgspec import Struct


class Removal(Struct, frozen=True):
    group: str
    version: str
    kinds: tuple[str, ...]  # ("*",): every kind of the group version
    replacement: str | None  # apiVersion to use instead; None when there is no replacement
    removed_in: str | None = None  # Kubernetes minor version (built-in APIs)
    release: str | None = None  # the operator whose current releases no longer serve it
    replacement_kind: str | None = None  # when the kind was renamed
    note: str | None = None  # what to do when there is no replacement


def _apps(kinds: tuple[str, ...], group: str, version: str) -> tuple[Removal, ...]:
    return (Removal(group, version, kinds, "apps/v1", "1.16"),)


BUILTIN: tuple[Removal, ...] = (
    # v1.16
    *_apps(("DaemonSet", "Deployment", "ReplicaSet"), "extensions", "v1beta1"),
    *_apps(("Deployment", "StatefulSet"), "apps", "v1beta1"),
    *_apps(("DaemonSet", "Deployment", "ReplicaSet", "StatefulSet"), "apps", "v1beta2"),
    Removal("extensions", "v1beta1", ("NetworkPolicy",), "networking.k8s.io/v1", "1.16"),
    Removal("extensions", "v1beta1", ("PodSecurityPolicy",), None, "1.16",
            note="PodSecurityPolicy is gone altogether (policy/v1beta1 too, in 1.25); use Pod Security Admission"),
    # v1.22
    Removal("admissionregistration.k8s.io", "v1beta1", ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"),
            "admissionregistration.k8s.io/v1", "1.22"),
    Removal("apiextensions.k8s.io", "v1beta1", ("CustomResourceDefinition",), "apiextensions.k8s.io/v1", "1.22"),
    Removal("apiregistration.k8s.io", "v1beta1", ("APIService",), "apiregistration.k8s.io/v1", "1.22"),
    Removal("authentication.k8s.io", "v1beta1", ("TokenReview",), "authentication.k8s.io/v1", "1.22"),
    Removal("authorization.k8s.io", "v1beta1", ("LocalSubjectAccessReview", "SelfSubjectAccessReview",
                                                "SubjectAccessReview"), "authorization.k8s.io/v1", "1.22"),
    Removal("certificates.k8s.io", "v1beta1", ("CertificateSigningRequest",), "certificates.k8s.io/v1", "1.22"),
    Removal("coordination.k8s.io", "v1beta1", ("Lease",), "coordination.k8s.io/v1", "1.22"),
    Removal("extensions", "v1beta1", ("Ingress",), "networking.k8s.io/v1", "1.22"),
    Removal("networking.k8s.io", "v1beta1", ("Ingress", "IngressClass"), "networking.k8s.io/v1", "1.22"),
    Removal("rbac.authorization.k8s.io", "v1beta1", ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"),
            "rbac.authorization.k8s.io/v1", "1.22"),
    Removal("scheduling.k8s.io", "v1beta1", ("PriorityClass",), "scheduling.k8s.io/v1", "1.22"),
    Removal("storage.k8s.io", "v1beta1", ("CSIDriver", "CSINode", "StorageClass", "VolumeAttachment"),
            "storage.k8s.io/v1", "1.22"),
    # v1.25
    Removal("batch", "v1beta1", ("CronJob",), "batch/v1", "1.25"),
    Removal("discovery.k8s.io", "v1beta1", ("EndpointSlice",), "discovery.k8s.io/v1", "1.25"),
    Removal("events.k8s.io", "v1beta1", ("Event",), "events.k8s.io/v1", "1.25"),
    Removal("autoscaling", "v2beta1", ("HorizontalPodAutoscaler",), "autoscaling/v2", "1.25"),
    Removal("policy", "v1beta1", ("PodDisruptionBudget",), "policy/v1", "1.25"),
    Removal("policy", "v1beta1", ("PodSecurityPolicy",), None, "1.25",
            note="PodSecurityPolicy has no replacement API; use Pod Security Admission (namespace labels "
                 "pod-security.kubernetes.io/enforce)"),
    Removal("node.k8s.io", "v1beta1", ("RuntimeClass",), "node.k8s.io/v1", "1.25"),
    # v1.26
    Removal("flowcontrol.apiserver.k8s.io", "v1beta1", ("FlowSchema", "PriorityLevelConfiguration"),
            "flowcontrol.apiserver.k8s.io/v1", "1.26"),
    Removal("autoscaling", "v2beta2", ("HorizontalPodAutoscaler",), "autoscaling/v2", "1.26"),
    # v1.27
    Removal("storage.k8s.io", "v1beta1", ("CSIStorageCapacity",), "storage.k8s.io/v1", "1.27"),
    # v1.29
    Removal("flowcontrol.apiserver.k8s.io", "v1beta2", ("FlowSchema", "PriorityLevelConfiguration"),
            "flowcontrol.apiserver.k8s.io/v1", "1.29"),
    # v1.32
    Removal("flowcontrol.apiserver.k8s.io", "v1beta3", ("FlowSchema", "PriorityLevelConfiguration"),
            "flowcontrol.apiserver.k8s.io/v1", "1.32"),
)

_TRAINING = "the Kubeflow Training Operator"
CUSTOM: tuple[Removal, ...] = (
    # Kubeflow: the Training Operator serves only kubeflow.org/v1 for its jobs; the MPI Operator
    # serves MPIJob at v2beta1 (the Training Operator at v1).
    *(Removal("kubeflow.org", version, ("TFJob", "PyTorchJob", "XGBoostJob", "MXJob"), "kubeflow.org/v1", release=_TRAINING)
      for version in ("v1alpha1", "v1alpha2", "v1beta1", "v1beta2")),
    *(Removal("kubeflow.org", version, ("MPIJob",), "kubeflow.org/v2beta1", release="the MPI Operator")
      for version in ("v1alpha1", "v1alpha2")),
    Removal("kubeflow.org", "v1alpha1", ("StudyJob",), "kubeflow.org/v1beta1", release="Katib",
            replacement_kind="Experiment"),
    *(Removal("kubeflow.org", version, ("Experiment", "Trial", "Suggestion"), "kubeflow.org/v1beta1", release="Katib")
      for version in ("v1alpha2", "v1alpha3")),
    # Kueue: v1alpha1 (Kueue 0.1–0.2) gave way to v1beta1, itself deprecated for v1beta2; the
    # queue and workload kinds were renamed on the way.
    Removal("kueue.x-k8s.io", "v1alpha1", ("Queue",), "kueue.x-k8s.io/v1beta2", release="Kueue",
            replacement_kind="LocalQueue"),
    Removal("kueue.x-k8s.io", "v1alpha1", ("QueuedWorkload",), "kueue.x-k8s.io/v1beta2", release="Kueue",
            replacement_kind="Workload"),
    Removal("kueue.x-k8s.io", "v1alpha1", ("*",), "kueue.x-k8s.io/v1beta2", release="Kueue"),
    # Volcano: kube-batch's group and Volcano's own alpha scheduling APIs are served no more.
    Removal("scheduling.incubator.k8s.io", "v1alpha1", ("PodGroup", "Queue"), "scheduling.volcano.sh/v1beta1",
            release="Volcano"),
    *(Removal("scheduling.volcano.sh", version, ("PodGroup", "Queue"), "scheduling.volcano.sh/v1beta1",
              release="Volcano") for version in ("v1alpha1", "v1alpha2")),
)

# Kinds that use a built-in apiVersion but are files, not API objects (a kubeconfig is
# `apiVersion: v1, kind: Config`): never "an unknown kind".
NOT_API_KINDS: dict[str, tuple[str, ...]] = {"": ("Config",)}


def _index(entries: tuple[Removal, ...]) -> dict[tuple[str, str], tuple[Removal, ...]]:
    table: dict[tuple[str, str], list[Removal]] = {}
    for entry in entries:
        table.setdefault((entry.group, entry.version), []).append(entry)
    return {key: tuple(value) for key, value in table.items()}


_BUILTIN = _index(BUILTIN)
_CUSTOM = _index(CUSTOM)
BUILTIN_GROUPS = frozenset(entry.group for entry in BUILTIN)


def _lookup(table: dict[tuple[str, str], tuple[Removal, ...]], group: str, version: str, kind: str) -> Removal | None:
    entries = table.get((group, version), ())
    for entry in entries:
        if kind in entry.kinds:
            return entry
    for entry in entries:
        if "*" in entry.kinds:
            return entry
    return None


def builtin_removal(group: str, version: str, kind: str) -> Removal | None:
    return _lookup(_BUILTIN, group, version, kind)


def custom_removal(group: str, version: str, kind: str) -> Removal | None:
    return _lookup(_CUSTOM, group, version, kind)
