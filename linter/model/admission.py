"""What admission adds to a pod's placement before the scheduler sees it: Kueue's flavors, KAITO's tolerations.

Kueue admits a queued workload (its ``kueue.x-k8s.io/queue-name`` LocalQueue -> ClusterQueue)
by giving each pod set one ``ResourceFlavor`` per resource group that covers what it requests,
and injects the flavor's ``spec.nodeLabels`` into the pods' nodeSelector and its
``spec.tolerations`` into their tolerations (``pkg/podset``). The flavors a pod set may get are
those whose ``nodeTaints`` it tolerates and whose labels its own selection does not contradict
(``linter.model.kueue``'s flavor assignment). Each possible assignment is one
:class:`Admission`; the placement rules judge every one and report what holds for all of them.
When the queue's ClusterQueue is written in several variant files (alternatives, one applied), a
variant whose resource groups leave out a resource the pod asks for cannot admit it (Kueue
refuses a resource its ClusterQueue does not cover): its assignments count only when no variant
covers them all (Kueue's TAS samples: a CPU and a GPU variant of one queue; the GPU pod runs only
under the GPU one, whose flavor injects the GPU toleration). A flavor written in several files is
taken from beside the ClusterQueue variant when one is there (:func:`linter.model.kueue.nearest`).
The nodeLabels of the flavor holding the pod's GPUs in a resource group of their own (one that
covers a GPU resource the pod asks for, and neither cpu nor memory) are kept apart
(``Admission.gpu_labels``): such a flavor stands for the nodes whose GPUs its quota counts, and
its labels pin the pod to them as a GPU node label would (a flavor for cpu, memory and GPUs
alike may stand for a zone or a capacity type instead).

KAITO's workspace controller adds to the pods it makes from a ``Workspace``'s (or an
``InferenceSet``'s Workspaces') ``inference.template``: it appends the tolerations of the GPU
nodes it provisions, ``nvidia.com/gpu`` (``Exists``) and ``sku=gpu`` (``NoSchedule``)
(``GenerateDeploymentManifestWithPodTemplate`` in its ``pkg/workspace/manifests``): they are
part of the pod as written (:func:`own`), whatever else admission injects.

A pod that is not queued, whose queue or a flavor of it the project does not define, that no
flavor can hold (QUE006's finding), or whose workload Kueue does not manage (every Kueue
``Configuration`` governing it leaves its framework out of ``integrations.frameworks``:
QUE019's finding, :func:`linter.model.kueueconfig.ignored_by_kueue`; Kueue's webhook ignores its
queue-name label and admits nothing) is placed as it is written: one admission, nothing injected.
"""

from __future__ import annotations

from itertools import product
from typing import Any, Mapping

from msgspec import Struct

from mlops_lint.model.memo import once
from mlops_lint.model.podrequests import pod_requests
from mlops_lint.model.selectors import Placement, tolerated_by

_MAX_ASSIGNMENTS = 16


class Admission(Struct, frozen=True):
    placement: Placement
    tolerations: tuple[Mapping[str, Any], ...]
    flavors: tuple[str, ...] = ()  # the flavors injected (empty: the pod as written)
    # the nodeLabels injected by the flavor that holds the pod's GPUs in a resource group of their
    # own (neither cpu nor memory): they keep it to the nodes whose GPUs that quota counts
    gpu_labels: tuple[tuple[str, str], ...] = ()


# appended by KAITO to the tolerations of a Workspace's inference pods (its ``tolerations`` variable)
KAITO_TOLERATIONS: tuple[Mapping[str, Any], ...] = (
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
)


def own(pod: Any) -> Admission:
    """The pod as written (with what KAITO appends to a Workspace's inference pods)."""
    written = tuple(t for _, t in pod.tolerations)
    if pod.obj.group == "kaito.sh" and pod.obj.kind in ("Workspace", "InferenceSet"):
        written += KAITO_TOLERATIONS
    return Admission(pod.placement, written)


def admissions(pod: Any, index: Any, config: Any) -> tuple[Admission, ...]:
    """Every way admission may place ``pod`` (one: as written, when nothing is injected);
    ``config`` (the run's) says which Kueue Configurations govern it (:mod:`linter.model.locality`)."""
    if index is None:
        return (own(pod),)
    return once(pod, ("admissions", id(index), id(config)), lambda: _admissions(pod, index, config))


def _admissions(pod: Any, index: Any, config: Any) -> tuple[Admission, ...]:
    from mlops_lint.model.k8s import gpu_resources
    from mlops_lint.model.kueue import (cluster_queues_of, flavor_node_labels, flavor_node_taints, flavor_tolerations,
                                    named, nearest, queue_ref, resource_groups)
    from mlops_lint.model.kueueconfig import ignored_by_kueue

    workload = pod.workload
    if workload is None or workload.generic or queue_ref(pod.obj) is None or ignored_by_kueue(pod.obj, index, config):
        return (own(pod),)
    queues = cluster_queues_of(index, pod.obj)
    requested = set(pod_requests(pod))  # what Kueue assigns flavors for
    if not queues or not requested:
        return (own(pod),)
    base = own(pod)
    found: list[Admission] = []
    refusing: list[Admission] = []  # from a ClusterQueue that covers not every resource the pod asks for
    asked = {name for name, request in pod_requests(pod).items() if request.amount}
    gpus = {name for name, request in pod_requests(pod).items() if request.amount and gpu_resources({name: None})}
    for cq in queues:
        choices = []
        covered = {resource for group in resource_groups(cq) for resource in group.covered}
        into = found if asked <= covered else refusing
        for group in resource_groups(cq):
            if not requested & set(group.covered):
                continue
            fitting = []
            # a group of the pod's GPUs apart from cpu and memory: its flavors stand for GPU nodes
            devices = bool(gpus & set(group.covered)) and not {"cpu", "memory"} & set(group.covered)
            for name in group.flavor_names:
                # several: variant files, each a flavor it may be given; those beside the ClusterQueue
                # (its file, else its folder) go with it
                flavors = nearest(named(index, "ResourceFlavor", name, pod.obj), cq)
                if not flavors:
                    return (base,)  # a flavor the project does not define: what it injects is unknown
                for flavor in flavors:
                    labels = flavor_node_labels(flavor)
                    extra = tuple(flavor_tolerations(flavor))
                    if any(t.effect in ("NoSchedule", "NoExecute") and not tolerated_by([*base.tolerations, *extra], t)
                           for t in flavor_node_taints(flavor)):
                        continue
                    if any(base.placement.node_selector.get(k, v) != v for k, v in labels.items()):
                        continue
                    fitting.append((name, labels, extra, devices))
            if not fitting:
                return (base,)  # never admitted: QUE006's finding
            choices.append(fitting)
        if not choices:
            continue
        combos = 1
        for fitting in choices:
            combos *= len(fitting)
        if combos > _MAX_ASSIGNMENTS:
            return (base,)
        for assignment in product(*choices):
            selector = dict(base.placement.node_selector)
            tolerations = list(base.tolerations)
            gpu_labels: dict[str, str] = {}
            for _, labels, extra, holds_gpus in assignment:
                selector.update(labels)
                tolerations.extend(extra)
                if holds_gpus:
                    gpu_labels.update(labels)
            placement = Placement(selector, base.placement.terms, base.placement.unknown_terms)
            into.append(Admission(placement, tuple(tolerations), tuple(choice[0] for choice in assignment),
                                  tuple(gpu_labels.items())))
    return tuple(found) or tuple(refusing) or (base,)


def refused_queue(pod: Any, ctx: Any) -> bool:
    """Whether ``pod`` is queued to a ClusterQueue whose resource groups the schema refuses
    (SCH002's finding there): what Kueue's flavors would inject is unknown, and a placement finding
    on the pod (no GPU selector, no toleration) would only repeat that one cause. A workload Kueue
    does not manage (QUE019's finding) is placed as written: its queue refuses nothing."""
    from mlops_lint.model.kueue import cluster_queues_of, queue_ref
    from mlops_lint.model.kueueconfig import ignored_by_kueue
    from mlops_lint.validation.validate import malformed

    workload = pod.workload
    if workload is None or workload.generic or queue_ref(pod.obj) is None \
            or ignored_by_kueue(pod.obj, ctx.index, ctx.config):
        return False

    return any(malformed(cq, ctx, "spec", "resourceGroups") for cq in cluster_queues_of(ctx.index, pod.obj))


def injected(pod: Any, index: Any, config: Any) -> bool:
    """Whether admission injects anything into the pod (a queued workload with known flavors)."""
    return any(a.flavors for a in admissions(pod, index, config))
