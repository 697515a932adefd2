"""A LocalQueue in a namespace that its ClusterQueue's `namespaceSelector` does not select.

## What it does
For each Kueue LocalQueue whose `spec.clusterQueue` names a ClusterQueue of the project, reads
that ClusterQueue's `spec.namespaceSelector` and the LocalQueue's namespace labels: the labels
of the project's Namespace object of that name, plus `kubernetes.io/metadata.name`, which the API
server sets on every namespace. It flags the LocalQueue when the selector selects none of them
(`matchLabels` and `matchExpressions` as Kubernetes evaluates a label selector). The finding
points at `spec.clusterQueue`.

Only decidable cases are reported: when the project holds no Namespace object for the
namespace, the namespace's other labels are unknown and the LocalQueue is judged only if the
selector reads `kubernetes.io/metadata.name` alone. A ClusterQueue without a `namespaceSelector`
is not judged; a ClusterQueue defined several times in the project is judged by the copies nearest
the LocalQueue (as for the namespaces below), and the LocalQueue is reported only if every one rejects it; a LocalQueue whose namespace has several Namespace objects is judged against those nearest it
(its own file, else its folder, else all) and passes if any of them is admitted.

## Why is this bad?
Kueue admits a workload only when its ClusterQueue's `namespaceSelector` selects the namespace
of the workload's LocalQueue; otherwise the workload stays pending with "Workload namespace
doesn't match ClusterQueue selector", and the team's GPU jobs never start although the quota is
free. The article's Kueue section gives each team a LocalQueue in its namespace that points at
the ClusterQueue holding the GPU quota, and selects the namespaces that may use it.

## Example
```yaml
apiVersion: v1
kind: Namespace
metadata:
  name: ml-training
  labels:
    team: research
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: gpu-cluster-queue
spec:
  namespaceSelector:
    matchLabels:
      team: ml
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: training-queue
  namespace: ml-training
spec:
  clusterQueue: gpu-cluster-queue
```

Use instead: label the namespace as the selector asks (`team: ml`), or widen the selector:
```yaml
spec:
  namespaceSelector:
    matchExpressions:
    - {key: team, operator: In, values: [ml, research]}
```

## Known problems
Namespace labels set outside the project's manifests (`kubectl label namespace`, a Helm chart not
rendered, a policy engine) are not seen: a project that defines the Namespace is taken to define
all its labels. A ClusterQueue with no `namespaceSelector` selects no namespace in Kueue, but is
left to a future rule.

## References
- Kueue, ClusterQueue namespaceSelector: https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/#namespace-selector
- Kueue, LocalQueue: https://kueue.sigs.k8s.io/docs/concepts/local_queue/
- Kubernetes, automatic labelling of namespaces: https://kubernetes.io/docs/reference/labels-annotations-taints/#kubernetes-io-metadata-name
"""

from __future__ import annotations

from mlops_lint.model.kueue import cluster_queue_name, is_kueue, named, nearest
from mlops_lint.model.selectors import label_value, selector_matches
from mlops_lint.rule import Finding, Kind, rule

NAME_LABEL = "kubernetes.io/metadata.name"


def _keys(selector: dict) -> set[str]:
    keys = set(map(label_value, selector.get("matchLabels") or {})) if isinstance(selector.get("matchLabels"), dict) \
        else set()
    expressions = selector.get("matchExpressions")
    for expression in expressions if isinstance(expressions, list) else ():
        keys.add(label_value(expression.get("key")) if isinstance(expression, dict) else "")
    return keys


def _show(selector: dict) -> str:
    parts = [f"{k}={label_value(v)}" for k, v in (selector.get("matchLabels") or {}).items()] \
        if isinstance(selector.get("matchLabels"), dict) else []
    expressions = selector.get("matchExpressions")
    for e in expressions if isinstance(expressions, list) else ():
        if isinstance(e, dict):
            values = e.get("values")
            shown = f" [{', '.join(map(label_value, values))}]" if isinstance(values, list) else ""
            parts.append(f"{label_value(e.get('key'))} {e.get('operator')}{shown}")
    return ", ".join(parts)


@rule(code="QUE015", name="local-queue-namespace-not-admitted", severity="error", scope=Kind("LocalQueue"),
      tags=("queues", "kueue"))
def check(obj, ctx):
    if not is_kueue(obj):
        return
    name = cluster_queue_name(obj)
    if name is None:
        return
    queues = nearest(named(ctx.index, "ClusterQueue", name), obj)
    if not queues:
        return  # QUE003's case
    namespace = obj.namespace or "default"
    namespaces = nearest([ns for ns in ctx.index.named("Namespace", namespace) if ns.group == ""], obj)
    label_sets = [{**{str(k): v for k, v in ns.labels.items()}, NAME_LABEL: namespace} for ns in namespaces]
    selectors = []
    for cq in queues:
        spec = cq.body.get_map("spec")
        selector = spec.get("namespaceSelector") if spec is not None else None
        if not isinstance(selector, dict):
            return  # absent, null or templated: not judged
        if not label_sets and _keys(selector) - {NAME_LABEL}:
            return  # the namespace's other labels are unknown
        candidates = label_sets or [{NAME_LABEL: namespace}]
        if any(selector_matches(selector, labels) for labels in candidates):
            return
        selectors.append(selector)
    where = f"{namespaces[0].path}:{namespaces[0].span.line}" if namespaces else None
    labels = {k: label_value(v) for k, v in label_sets[0].items()} if label_sets else {NAME_LABEL: namespace}
    shown_labels = ", ".join(f"{k}={v}" for k, v in sorted(labels.items()))
    spec = obj.body.get_map("spec")
    yield Finding(
        spec.value_span("clusterQueue"),
        f"LocalQueue `{obj.name}` in namespace `{namespace}` points at ClusterQueue `{name}`, whose namespaceSelector "
        f"({_show(selectors[0]) or '{}'}) does not select that namespace (labels {shown_labels}"
        + (f", Namespace at {where}" if where else "") + "): Kueue admits none of its workloads, which stay pending",
        node=("spec", "clusterQueue"),
        fix=(f"add `{namespace}` to the ClusterQueue's namespaceSelector, or move the LocalQueue to a namespace it selects"
             if _keys(selectors[0]) <= {NAME_LABEL} else
             "label the namespace as the ClusterQueue's namespaceSelector asks, or widen the selector"),
    )
