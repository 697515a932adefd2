"""A pod set's Kueue topology-aware scheduling annotations that Kueue rejects or cannot place.

## What it does
Reads the topology-aware scheduling (TAS) annotations of every pod template of a workload that
Kueue queues (`kueue.x-k8s.io/queue-name`): `kueue.x-k8s.io/podset-required-topology`,
`podset-preferred-topology`, `podset-unconstrained-topology`, `podset-slice-required-topology`,
`podset-slice-size`, `podset-group-name` and the multi-level
`podset-slice-required-topology-constraints` (a JSON list of `{"topology": level, "size": pods}`
layers, coarsest first), and flags, at the annotation:

- what Kueue's webhook rejects (`ValidateTASPodSetRequest`, Kueue's jobframework): more than one
  of required, preferred and unconstrained; an unconstrained value that is not a boolean; a slice
  size that is not a whole number of at least 1, or larger than the pod set's pod count; a slice
  topology without a slice size, or a slice size without a slice topology; a group name that is a
  number, set beside the slice annotations, or set without a required or preferred topology;
- what it rejects of the multi-level annotation: set beside `podset-slice-required-topology` or
  `podset-slice-size` (or a group name beside it), not a JSON list of layers, no layer or more
  than three, a layer whose `topology` is no label name or whose `size` is below 1, a level named
  twice, a layer size that does not divide the size of the layer above it, a first layer larger
  than the pod set's pod count;
- a topology level (required, preferred or slice) that no Kueue `Topology` of the project lists
  among its `spec.levels[].nodeLabel`, when the project defines Topologies (kueue.x-k8s.io
  v1beta1 or v1beta2), and levels in an order Kueue cannot place: a slice level (the two-level
  one, or the first layer) above the pod set's required or preferred level, or a layer not below
  the layer before it, in every Topology that has both levels. Kueue finds no such level, or no
  such nesting, in the flavor's topology and never admits the workload.

A workload whose framework the project's Kueue `Configuration` leaves out of
`integrations.frameworks` is left to QUE019: Kueue's webhook does not see it or its annotations.

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
- Whether the cluster's Kueue enables the `TASMultiLayerTopology` feature gate (without it the
  multi-level annotation is rejected) is not known, and not judged; nor is the label syntax of
  the two-level annotations' levels.
- Workloads Kueue does not manage, or that name no queue, are not judged: Kueue ignores their
  annotations.

## References
- Kueue, Topology Aware Scheduling: https://kueue.sigs.k8s.io/docs/concepts/topology_aware_scheduling/
- Kueue, `pkg/controller/jobframework/tas_validation.go`: https://github.com/kubernetes-sigs/kueue
"""

from __future__ import annotations

import json
import re

from mlops_lint.model.kueue import KUEUE_GROUP, queue_ref
from mlops_lint.model.kueueconfig import ignored_by_kueue
from mlops_lint.model.selectors import label_value
from mlops_lint.rule import POD, Finding, rule

PREFIX = "kueue.x-k8s.io/"
REQUIRED = PREFIX + "podset-required-topology"
PREFERRED = PREFIX + "podset-preferred-topology"
UNCONSTRAINED = PREFIX + "podset-unconstrained-topology"
SLICE_REQUIRED = PREFIX + "podset-slice-required-topology"
SLICE_SIZE = PREFIX + "podset-slice-size"
GROUP_NAME = PREFIX + "podset-group-name"
CONSTRAINTS = PREFIX + "podset-slice-required-topology-constraints"
MAX_LAYERS = 3  # Kueue's errTopologyConstraintsLayerCount
# a label name (Kubernetes' ValidateLabelName: an optional DNS subdomain prefix and a name of 63)
_NAME = re.compile(r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")
_PREFIX = re.compile(r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*")
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


def _topologies(index) -> list[tuple[str, ...]]:
    """The levels of each Kueue Topology of the project, coarsest first."""
    def build():
        found = []
        for topology in index.of_kind("Topology"):
            spec = topology.body.get_map("spec") if topology.group == KUEUE_GROUP else None
            levels = spec.get_seq("levels") if spec is not None else None
            if levels is not None:
                found.append(tuple(level["nodeLabel"] for _, level in levels.maps()
                                   if isinstance(level.get("nodeLabel"), str)))
        return found

    return index.memo("kueue-topology-orders", build)


def _misordered(index, upper: str, lower: str) -> bool:
    """Whether every Topology of the project that has both levels puts ``lower`` at or above
    ``upper`` (and one does): Kueue cannot nest the second inside the first."""
    both = [levels for levels in _topologies(index) if upper in levels and lower in levels]
    return bool(both) and all(levels.index(lower) <= levels.index(upper) for levels in both)


def _label_name(text: str) -> bool:
    prefix, _, name = text.rpartition("/")
    return bool(_NAME.fullmatch(name)) and (not prefix or (len(prefix) <= 253 and bool(_PREFIX.fullmatch(prefix))))


def _layers(text: str) -> tuple[list[tuple[str, int]] | None, list[str]]:
    """The multi-level annotation's layers (topology, size) as Kueue reads them, and what its
    webhook rejects of them (layers None: not a JSON list of layers)."""
    try:
        raw = json.loads(text)
    except ValueError:
        return None, ["is not valid JSON"]
    if raw is None:
        raw = []
    if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
        return None, ["is not a JSON list of `{\"topology\": …, \"size\": …}` layers"]
    layers = []
    for item in raw:
        topology, size = item.get("topology", ""), item.get("size", 0)
        if topology is None:
            topology = ""
        if size is None:
            size = 0
        if not isinstance(topology, str) or isinstance(size, bool) or not isinstance(size, int) \
                or not -_INT32 - 1 <= size <= _INT32:
            return None, ["has a layer whose `topology` is not a string or whose `size` is not a whole number"]
        layers.append((topology, size))
    if not layers or len(layers) > MAX_LAYERS:
        return None, [f"has {len(layers)} layers; it must have 1 to {MAX_LAYERS}"]
    problems = []
    for i, (topology, size) in enumerate(layers):
        if not _label_name(topology):
            problems.append(f"layer {i + 1}'s `topology` `{topology}` is not a label name")
        if size < 1:
            problems.append(f"layer {i + 1}'s `size` is {size}; it must be at least 1")
    seen = set()
    for i, (topology, _) in enumerate(layers):
        if topology in seen:
            problems.append(f"layer {i + 1} names `{topology}` again")
        seen.add(topology)
    for i in range(len(layers) - 1):
        upper, lower = layers[i][1], layers[i + 1][1]
        if lower > 0 and upper % lower:
            problems.append(f"layer {i + 2}'s size {lower} does not divide layer {i + 1}'s size {upper}")
    return layers, problems


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
    if queue_ref(pod.obj) is None or ignored_by_kueue(pod.obj, ctx.index, ctx.config):
        return  # (Kueue's webhook does not see a kind whose integration is off here: QUE019's finding)
    base = (pod.path[:-1] if pod.template is not None else ()) + ("metadata", "annotations")
    values = {key: label_value(annotations[key]) for key in (REQUIRED, PREFERRED, UNCONSTRAINED, SLICE_REQUIRED,
                                                             SLICE_SIZE, GROUP_NAME, CONSTRAINTS) if key in annotations}
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
    layers = None
    if CONSTRAINTS in values:
        for other in (SLICE_REQUIRED, SLICE_SIZE):
            if other in values:
                problem(CONSTRAINTS, f"is set beside `{other}` (the multi-level annotation replaces it)",
                        f"keep `{CONSTRAINTS}` alone, or the two-level pair")
        if GROUP_NAME in values:
            problem(GROUP_NAME, f"is set beside `{CONSTRAINTS}`")
        layers, wrong = _layers(values[CONSTRAINTS])
        for message in wrong:
            problem(CONSTRAINTS, message)
        if layers and not wrong and pod.replicas is not None and layers[0][1] > pod.replicas:
            problem(CONSTRAINTS, f"asks for slices of {layers[0][1]} pods, more than the {pod.replicas} pods of "
                                 "this pod set")
    for key, messages in problems.items():
        yield Finding(annotations.key_span(key), f"{who}: `{key}` {'; '.join(messages)}: {rejected}",
                      node=base + (key,), fix=fixes.get(key))
    levels = _levels(ctx.index)
    if levels is None:
        return
    never = "Kueue cannot place the pod set and the workload is never admitted"
    unknown = set()
    for key in (REQUIRED, PREFERRED, SLICE_REQUIRED):
        level = values.get(key)
        if key in values and key not in problems and level and level not in levels:
            unknown.add(key)
            known = ", ".join(f"`{name}`" for name in sorted(levels)) or "none"
            yield Finding(annotations.key_span(key),
                          f"{who}: `{key}` names the level `{level}`, which no Topology of the project has (levels: "
                          f"{known}): {never}",
                          node=base + (key,), fix="name a level of the Topology its ResourceFlavor uses")
    if layers and CONSTRAINTS not in problems:
        missing = [topology for topology, _ in layers if topology not in levels]
        if missing:
            known = ", ".join(f"`{name}`" for name in sorted(levels)) or "none"
            yield Finding(annotations.key_span(CONSTRAINTS),
                          f"{who}: `{CONSTRAINTS}` names the level{'s' if len(missing) > 1 else ''} "
                          f"{', '.join(f'`{m}`' for m in missing)}, which no Topology of the project has (levels: "
                          f"{known}): {never}",
                          node=base + (CONSTRAINTS,), fix="name levels of the Topology its ResourceFlavor uses")
            return
    # the slice level (two-level, or the first layer) inside the pod set's level; each layer inside the last
    outer = next(((key, values[key]) for key in (REQUIRED, PREFERRED)
                  if key in values and key not in problems and key not in unknown and values[key]), None)
    if SLICE_REQUIRED in values and SLICE_REQUIRED not in problems and SLICE_REQUIRED not in unknown:
        slice_key, slice_level = SLICE_REQUIRED, values[SLICE_REQUIRED]
    elif layers and CONSTRAINTS not in problems:
        slice_key, slice_level = CONSTRAINTS, layers[0][0]
    else:
        slice_key, slice_level = None, None
    if outer is not None and slice_level and _misordered(ctx.index, outer[1], slice_level) \
            and slice_level != outer[1]:
        yield Finding(annotations.key_span(slice_key),
                      f"{who}: the slice level `{slice_level}` of `{slice_key}` is above the pod set's level "
                      f"`{outer[1]}` (`{outer[0]}`) in the project's Topology: {never}",
                      node=base + (slice_key,), fix=f"slice at `{outer[1]}` or a level below it")
    if layers and CONSTRAINTS not in problems:
        for (upper, _), (lower, _) in zip(layers, layers[1:]):
            if _misordered(ctx.index, upper, lower):
                yield Finding(annotations.key_span(CONSTRAINTS),
                              f"{who}: `{CONSTRAINTS}` puts the layer `{lower}` after `{upper}`, but it is not "
                              f"below it in the project's Topology (layers go coarsest first): {never}",
                              node=base + (CONSTRAINTS,), fix="order the layers from the coarsest level to the finest")
                break
