"""A pod set's Kueue topology-aware scheduling annotations that Kueue rejects or cannot place.

## What it does
Reads the topology-aware scheduling (TAS) annotations of every pod template of a workload that
Kueue queues (`kueue.x-k8s.io/queue-name`): `kueue.x-k8s.io/podset-required-topology`,
`podset-preferred-topology`, `podset-unconstrained-topology`, `podset-slice-required-topology`,
`podset-slice-size` and `podset-group-name`, and flags, at the annotation:

- what Kueue's webhook rejects (`ValidateTASPodSetRequest`, Kueue's jobframework): more than one
  of required, preferred and unconstrained; an unconstrained value that is not a boolean; a slice
  size that is not a whole number of at least 1, or larger than the pod set's pod count; a slice
  topology without a slice size, or a slice size without a slice topology; a group name that is a
  number, set beside the slice annotations, or set without a required or preferred topology;
- a topology level (required, preferred or slice) that no Kueue `Topology` of the project lists
  among its `spec.levels[].nodeLabel`, when the project defines Topologies (kueue.x-k8s.io
  v1beta1 or v1beta2): Kueue finds no such level in the flavor's topology and never admits the
  workload.

## Why is this bad?
A rejected annotation makes the job's creation fail at Kueue's admission webhook; a level the
topology does not have leaves the workload pending with no flavor that fits. The article puts
distributed training behind Kueue so that a job's pods are admitted together and placed well;
topology-aware scheduling is how Kueue keeps an all-reduce inside a rack or block, and a request
it cannot read gives neither the gang nor the placement.

## Example
```yaml
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata:
  name: default
spec:
  levels:
  - nodeLabel: cloud.provider.com/topology-block
  - nodeLabel: kubernetes.io/hostname
---
apiVersion: batch/v1
kind: Job
metadata:
  name: tas-sample
  labels:
    kueue.x-k8s.io/queue-name: tas-user-queue
spec:
  parallelism: 4
  completions: 4
  template:
    metadata:
      annotations:
        kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack
        kueue.x-k8s.io/podset-slice-size: "8"
    spec:
      containers:
      - name: worker
        image: registry.k8s.io/e2e-test-images/agnhost:2.53
```

Use instead:
```yaml
    metadata:
      annotations:
        kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-block
```

## Known problems
- The level is looked up in every Topology of the project, not only the one the ClusterQueue's
  ResourceFlavor names (`spec.topologyName`); a project without Topology objects (the cluster's
  are elsewhere) is not judged on levels.
- The multi-level `podset-slice-required-topology-constraints` annotation (a feature gate) and the
  label syntax of a level are not checked.
- Workloads Kueue does not manage, or that name no queue, are not judged: Kueue ignores their
  annotations.

## References
- Kueue, Topology Aware Scheduling: https://kueue.sigs.k8s.io/docs/concepts/topology_aware_scheduling/
- Kueue, `pkg/controller/jobframework/tas_validation.go`: https://github.com/kubernetes-sigs/kueue
"""

from __future__ import annotations

from mlops_lint.model.kueue import KUEUE_GROUP, queue_ref
from mlops_lint.model.selectors import label_value
from mlops_lint.rule import POD, Finding, rule

PREFIX = "kueue.x-k8s.io/"
REQUIRED = PREFIX + "podset-required-topology"
PREFERRED = PREFIX + "podset-preferred-topology"
UNCONSTRAINED = PREFIX + "podset-unconstrained-topology"
SLICE_REQUIRED = PREFIX + "podset-slice-required-topology"
SLICE_SIZE = PREFIX + "podset-slice-size"
GROUP_NAME = PREFIX + "podset-group-name"
_BOOLEANS = frozenset({"1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False"})  # Go's ParseBool
_INT32 = 2**31 - 1


def _levels(index) -> frozenset[str] | None:
    """Every level (``nodeLabel``) of the project's Kueue Topologies; None when it defines none."""
    def build():
        found, any_topology = set(), False
        for topology in index.of_kind("Topology"):
            if topology.group != KUEUE_GROUP:
                continue
            any_topology = True
            spec = topology.body.get_map("spec")
            levels = spec.get_seq("levels") if spec is not None else None
            for _, level in levels.maps() if levels is not None else ():
                if isinstance(level.get("nodeLabel"), str):
                    found.add(level["nodeLabel"])
        return frozenset(found) if any_topology else None

    return index.memo("kueue-topology-levels", build)


def _int(text: str) -> int | None:
    stripped = text[1:] if text[:1] in "+-" else text
    if not stripped.isdigit() or not stripped.isascii() or len(stripped) > 10:
        return None
    value = int(text)
    return value if -_INT32 - 1 <= value <= _INT32 else None


@rule(code="QUE017", name="topology-request-invalid", severity="error", scope=POD, tags=("kueue", "topology"))
def check(pod, ctx):
    metadata = pod.metadata
    annotations = metadata.get_map("annotations") if metadata is not None else None
    if annotations is None or not any(isinstance(key, str) and key.startswith(PREFIX + "podset-") for key in annotations):
        return
    if queue_ref(pod.obj) is None:
        return
    base = (pod.path[:-1] if pod.template is not None else ()) + ("metadata", "annotations")
    values = {key: label_value(annotations[key]) for key in (REQUIRED, PREFERRED, UNCONSTRAINED, SLICE_REQUIRED,
                                                             SLICE_SIZE, GROUP_NAME) if key in annotations}
    who = pod.describe()
    problems: dict[str, list[str]] = {}  # annotation -> what is wrong with it (one finding each)
    fixes: dict[str, str] = {}

    def problem(key, message, fix=None):
        problems.setdefault(key, []).append(message)
        if fix is not None:
            fixes.setdefault(key, fix)

    rejected = "Kueue's webhook rejects the job"
    modes = [key for key in (REQUIRED, PREFERRED, UNCONSTRAINED) if key in values]
    if len(modes) > 1:
        problem(modes[1], f"is set beside `{modes[0]}` (only one of the required, preferred and unconstrained "
                          "topology annotations is allowed)", f"keep one of {', '.join(f'`{m}`' for m in modes)}")
    if UNCONSTRAINED in values and values[UNCONSTRAINED] not in _BOOLEANS:
        problem(UNCONSTRAINED, f"is `{values[UNCONSTRAINED]}`, not a boolean", '"true"')
    if SLICE_SIZE in values:
        size = _int(values[SLICE_SIZE])
        if size is None:
            problem(SLICE_SIZE, f"is `{values[SLICE_SIZE]}`, not a whole number")
        elif size < 1:
            problem(SLICE_SIZE, f"is {size}; it must be at least 1")
        elif pod.replicas is not None and size > pod.replicas:
            problem(SLICE_SIZE, f"is {size}, more than the {pod.replicas} pods of this pod set")
        if SLICE_REQUIRED not in values:
            problem(SLICE_SIZE, f"is set without `{SLICE_REQUIRED}`")
    elif SLICE_REQUIRED in values:
        problem(SLICE_REQUIRED, f"is set without `{SLICE_SIZE}`", f"add `{SLICE_SIZE}` (the pods per slice)")
    if GROUP_NAME in values:
        group = values[GROUP_NAME]
        if group.isdigit() and group.isascii():
            problem(GROUP_NAME, f"is `{group}`, a number")
        for other in (SLICE_SIZE, SLICE_REQUIRED):
            if other in values:
                problem(GROUP_NAME, f"is set beside `{other}`")
        if REQUIRED not in values and PREFERRED not in values:
            problem(GROUP_NAME, f"is set without `{REQUIRED}` or `{PREFERRED}`")
    for key, messages in problems.items():
        yield Finding(annotations.key_span(key), f"{who}: `{key}` {'; '.join(messages)}: {rejected}",
                      node=base + (key,), fix=fixes.get(key))
    levels = _levels(ctx.index)
    if levels is None:
        return
    for key in (REQUIRED, PREFERRED, SLICE_REQUIRED):
        level = values.get(key)
        if key in values and key not in problems and level and level not in levels:
            known = ", ".join(f"`{name}`" for name in sorted(levels)) or "none"
            yield Finding(annotations.key_span(key),
                          f"{who}: `{key}` names the level `{level}`, which no Topology of the project has (levels: "
                          f"{known}): Kueue cannot place the pod set and the workload is never admitted",
                          node=base + (key,), fix="name a level of the Topology its ResourceFlavor uses")
