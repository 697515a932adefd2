"""Two NVIDIA device plugins can run on the same GPU nodes.

## What it does
Looks at every DaemonSet of the project that runs the NVIDIA device plugin (a container with
image `…/k8s-device-plugin` started as the plugin, see `linter.model.nvidia`) and at every GPU
Operator `ClusterPolicy` (`nvidia.com/v1`) that deploys one (`devicePlugin.enabled` not
`false`). It flags a device-plugin DaemonSet whose nodes can overlap another's, and one beside
such a ClusterPolicy: the operator runs its plugin on the nodes it labels
`nvidia.com/gpu.deploy.device-plugin=true`, which are every GPU node it manages. Whether two
DaemonSets share a node is decided from their pod templates' `nodeSelector` and required node
affinity: they overlap unless those contradict (`accelerator: nvidia` against
`accelerator: amd`, disjoint `In` sets, `Exists` against `DoesNotExist`), since node labels are
not known. The finding points at the DaemonSet's name and names the objects it collides with.


One DaemonSet (namespace and name) written in several files of the project is one plugin: it is
not reported against its own copies, and counts once among the others a message names.

A shell script of the project that installs a component counts as its manifest would
(`linter.model.installs`): `helm install|upgrade --install RELEASE …/nvidia-device-plugin`
(any repository alias, `oci://`, a `.tgz`) or `kubectl apply -f` of NVIDIA's published
device-plugin manifest (`https://raw.githubusercontent.com/NVIDIA/k8s-device-plugin/…/nvidia-device-plugin.yml`)
is a plugin that may run on any node, reported at the chart or URL word; `helm install … nvidia/gpu-operator`
deploys the operator's plugin unless the command says `--set devicePlugin.enabled=false`. With a
values file (`-f`) or a word of unknown value and no such `--set`, whether it does is unknown, and
it is not counted. One release (namespace and name) installed twice is one plugin.

## Why is this bad?
The article: "Don't run multiple NVIDIA device plugin DaemonSets on the same nodes", and for MIG
"the operator should own the device plugin and MIG configuration for the affected nodes; don't
combine it with a second standalone device plugin." Two plugins register the same resource
(`nvidia.com/gpu`) with the kubelet for the same devices: the last registration wins, the
kubelet's device accounting flips between them, and pods can be handed GPUs that another pod
already holds, or fail admission with `UnexpectedAdmissionError`.

## Example
```yaml
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
spec:
  devicePlugin:
    enabled: true
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-device-plugin
  namespace: kube-system
spec:
  template:
    spec:
      nodeSelector:
        accelerator: nvidia
      containers:
      - name: nvidia-device-plugin
        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.1
```

The same duplicate installed by a script:
```sh
helm install --wait --generate-name -n gpu-operator --create-namespace nvidia/gpu-operator
helm upgrade -i nvdp nvdp/nvidia-device-plugin --namespace nvidia-device-plugin --create-namespace
```

Use instead: let the operator own the plugin (delete the DaemonSet, drop the plugin's install),
or keep the standalone plugin off the operator's nodes:
```yaml
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
spec:
  devicePlugin:
    enabled: false
```

## Known problems
- A Helm chart or manifest a script installs is not rendered: its plugin is taken to run on any
  node, and a `--set nodeSelector…` is not read. A release installed outside the project's
  scripts (a CD pipeline, by hand) is not seen.
- Objects with the same namespace and name are one object (a later apply replaces the
  earlier), so two copies of one manifest are not duplicates.
- DaemonSets the GPU Operator renders itself (they select `nvidia.com/gpu.deploy.device-plugin`)
  are the ClusterPolicy's own plugin, not a second one.
- Node taints are not considered: a plugin that does not tolerate a GPU pool's taint does not run
  there, but GPU010 asks every plugin to tolerate everything anyway.
- Alternative manifests kept side by side in one project (one per environment or plugin
  version) are flagged; exclude the ones that are not applied together.

## References
- NVIDIA k8s-device-plugin: https://github.com/NVIDIA/k8s-device-plugin
- NVIDIA GPU Operator, ClusterPolicy: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/getting-started.html
- Kubernetes, Device plugins: https://kubernetes.io/docs/concepts/extend-kubernetes/compute-storage-net/device-plugins/
"""

from collections import Counter
from itertools import islice

from msgspec import Struct

from mlops_lint.model.document import ObjectStub
from mlops_lint.model.installs import DEVICE_PLUGIN, Install, operator_installs, project_installs
from mlops_lint.model.nvidia import (
    gpu_operator_policies,
    is_device_plugin,
    is_operator_operand,
    operand_placement,
    placements_may_overlap,
    policy_deploys,
)
from mlops_lint.model.position import Span
from mlops_lint.model.selectors import Placement
from mlops_lint.rule import PROJECT, Finding, rule


class Plugin(Struct, frozen=True):
    """A device-plugin DaemonSet, as collected where its file is linted: the object, the nodes
    its pods may run on, and where its name is."""

    obj: ObjectStub
    placement: Placement
    name_span: Span


def device_plugins(obj, ctx):
    """The facts GPU009 collects: DaemonSets are not kept in the index, so every file's plugins
    reach the rule this way, from whichever process linted the file (or from the cache)."""
    if obj.kind != "DaemonSet":
        return
    workload = ctx.index.workload(obj)
    if is_device_plugin(workload) and not is_operator_operand(workload):
        metadata = obj.metadata
        yield Plugin(obj.stub(), workload.pods[0].placement,
                     metadata.value_span("name") if "name" in metadata else obj.span)


def _identity(obj) -> tuple[str, str]:
    return obj.namespace or "default", obj.name


LISTED = 3  # others named in a message; the rest are counted


def _listed(items: list[str], total: int) -> str:
    """The first of ``total`` others, named (the first LISTED and a count, past LISTED + 1)."""
    if total > LISTED + 1:
        items = [*items[:LISTED], f"{total - LISTED} more"]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _signature(placement) -> tuple:
    return tuple(sorted(placement.node_selector.items())), placement.terms, placement.unknown_terms


def _where(obj) -> str:
    return f"{obj.describe()} ({obj.path}:{obj.span.line})"


class _Group:
    """The plugins seen so far with one placement: their positions, and how many of each identity."""

    __slots__ = ("placement", "members", "identities")

    def __init__(self, placement):
        self.placement = placement
        self.members: list[int] = []
        self.identities: Counter = Counter()


def _script_plugins(ctx) -> list[tuple[tuple, Placement, str, Install]]:
    """The device plugins the project's scripts install (helm chart or NVIDIA's manifest URL):
    (sort key, nodes, how messages name it, the install). One release (namespace and name)
    installed twice is one plugin, as one DaemonSet written twice is."""
    found = []
    for install in project_installs(ctx.index):
        if install.component != DEVICE_PLUGIN:
            continue
        found.append(((install.path, install.span.line), Placement(), install.describe(), install))
    return found


def _script_policies(ctx) -> list[str]:
    return [f"the device plugin of the GPU Operator installed by {install.describe()}"
            for install in operator_installs(ctx.index, "devicePlugin")]


@rule(code="GPU009", name="duplicate-device-plugin", severity="error", scope=PROJECT,
      collect=device_plugins, tags=("gpu", "device-plugin"))
def check(found, ctx):
    facts = sorted(found, key=lambda fact: (fact.obj.path, fact.obj.span.line))
    scripted = _script_plugins(ctx)
    # (obj or None, placement, how messages name it, fact or install), manifests and scripts by path and line
    entries: list[tuple] = [(fact.obj, fact.placement, _where(fact.obj), fact) for fact in facts]
    if scripted:
        entries = [entry for _, entry in sorted(
            [((fact.obj.path, fact.obj.span.line), entry) for fact, entry in zip(facts, entries)]
            + [(key, (None, placement, where, install)) for key, placement, where, install in scripted],
            key=lambda pair: pair[0])]
    plugins = [(entry[0], entry[1]) for entry in entries]
    policies = [f"the device plugin of {_where(p)}" for p in gpu_operator_policies(ctx.index)
                if policy_deploys(p, "devicePlugin")] + _script_policies(ctx)
    operator_nodes = operand_placement("devicePlugin")
    # plugins repeat a few placements: each pair of placements is judged once, and the plugins
    # before each one are counted by placement group, not one by one
    groups: dict[tuple, _Group] = {}
    overlap: dict[tuple, bool] = {}
    identities = [_identity(obj) if obj is not None else ("helm", entry[3].namespace or "default", entry[3].release,
                                                         entry[3].source if not entry[3].release else "")
                  for entry, (obj, _) in zip(entries, plugins)]
    entered: set[tuple[str, str]] = set()  # one DaemonSet written in several files counts once: its first copy
    for position, (obj, placement) in enumerate(plugins):
        signature, identity = _signature(placement), identities[position]
        earlier: list[int] = []
        total = 0
        for other, group in groups.items():
            key = (signature, other)
            if key not in overlap:
                overlap[key] = placements_may_overlap(placement, group.placement)
            count = len(group.members) - group.identities[identity]
            if count and overlap[key]:
                total += count
                earlier.extend(islice((m for m in group.members if identities[m] != identity), LISTED + 1))
        if identity not in entered:
            entered.add(identity)
            group = groups.get(signature)
            if group is None:
                group = groups[signature] = _Group(placement)
            group.members.append(position)
            group.identities[identity] += 1
        others = [entries[m][2] for m in sorted(earlier)[:LISTED + 1]]
        if policies and placements_may_overlap(placement, operator_nodes):
            others += policies[:LISTED + 1]
            total += len(policies)
        if not total:
            continue
        if obj is None:
            install = entries[position][3]
            yield Finding(
                install.span,
                f"this script installs NVIDIA's device plugin ({install.what()}), which can run on the same "
                f"nodes as {_listed(others, total)}: two plugins register nvidia.com/gpu for the same GPUs",
                path=install.path,
                fix="keep one device plugin per node: drop this install, or install the GPU Operator with "
                    "`--set devicePlugin.enabled=false`",
            )
            continue
        yield Finding(
            entries[position][3].name_span,
            f"device-plugin DaemonSet `{obj.name}` can run on the same nodes as {_listed(others, total)}: two plugins "
            "register nvidia.com/gpu for the same GPUs",
            obj=obj,
            node=("metadata", "name"),
            fix="keep one device plugin per node: delete this DaemonSet, or give the plugins disjoint nodeSelectors",
        )
