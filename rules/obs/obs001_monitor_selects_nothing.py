"""A PodMonitor or ServiceMonitor selects no pod of the project.

## What it does
For every `PodMonitor` and `ServiceMonitor` (Prometheus Operator `monitoring.coreos.com`, or
Azure Monitor managed Prometheus `azmonitoring.coreos.com`):

- a PodMonitor is flagged when its `spec.selector` matches the labels of no pod template in the
  namespaces of its `spec.namespaceSelector` (`any: true`; `matchNames`; else the monitor's own
  namespace);
- a ServiceMonitor is flagged when its `spec.selector` matches no Service of those namespaces,
  or when the Services it matches select (by their `spec.selector`) no pod template.

Label selectors follow Kubernetes semantics (`matchLabels`, `matchExpressions` with `In`,
`NotIn`, `Exists`, `DoesNotExist`; `{}` selects everything). Pods carry their template's labels
plus those their controller sets with a known value (`job-name` of a Job,
`training.kubeflow.org/job-name` and `replica-type` of Kubeflow jobs, KubeRay's `ray.io/node-type`
and `app.kubernetes.io/name: kuberay`, Volcano and JobSet names); a selector term on a label only
the cluster knows (`pod-template-hash`, `controller-uid`, generated names) is taken to hold. When
the project holds an NVIDIA GPU Operator `ClusterPolicy` that deploys the DCGM exporter
(`spec.dcgmExporter.enabled`, true unless false), the exporter pods it creates
(`app: nvidia-dcgm-exporter`, port `metrics`) and their Service (`nvidia-dcgm-exporter`, port
`gpu-metrics`) count as present in every namespace.

This is a reference rule, per namespace: a monitor is judged only when the project holds pod
templates (PodMonitor) or Services (ServiceMonitor) in the namespaces it watches; otherwise
those pods are taken to come from elsewhere (a Helm chart, an operator). The finding points at
the monitor's `selector:` key (or `spec:` when there is none).

## Why is this bad?
A monitor that selects nothing scrapes nothing, silently: no GPU utilisation, memory or XID
metrics, no training throughput, and every alert built on them stays green. The article:
"Verify the exporter service or pod port name before applying the monitor" and "Adjust the
label selector to match the labels used by your installed exporter".

## Example
```yaml
apiVersion: azmonitoring.coreos.com/v1
kind: PodMonitor
metadata:
  name: training-metrics-demo
  namespace: ml-observability
spec:
  selector:
    matchLabels:
      app: training-metrics   # the Deployment's pods are app=training-metrics-demo
  podMetricsEndpoints:
  - port: metrics
```

Use instead:
```yaml
spec:
  selector:
    matchLabels:
      app: training-metrics-demo
  podMetricsEndpoints:
  - port: metrics
```

## Known problems
- Labels added after the manifest (a mutating webhook, Kustomize `commonLabels` applied later,
  an operator other than those above) are not seen. Pods created by other operators than the
  GPU Operator's DCGM exporter are not modelled: keep the operator's own objects out of the
  monitor's namespaces, or suppress the finding.
- A Prometheus `podMonitorSelector`/`serviceMonitorSelector` that ignores the monitor is not
  checked.

## References
- Prometheus Operator, PodMonitor and ServiceMonitor API: https://prometheus-operator.dev/docs/api-reference/api/#monitoring.coreos.com/v1.PodMonitor
- Azure Monitor managed Prometheus, custom scrape with PodMonitor/ServiceMonitor: https://learn.microsoft.com/azure/azure-monitor/containers/prometheus-metrics-scrape-crd
- Kubernetes, Labels and selectors: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/
"""

from __future__ import annotations

from itertools import chain

from mlops_lint.model.monitoring import (GPU_OPERATOR_DCGM_LABELS, behind, distinct_templates, monitor_namespaces,
                                     monitor_selector, monitors, scrape_facts, scrape_model,
                                     selects_operator_objects, service_selector, services_selected,
                                     targets_selected)
from mlops_lint.model.selectors import selector_matches
from mlops_lint.model.tree import frozen
from mlops_lint.rule import PROJECT, Finding, rule


def _where(monitor) -> tuple:
    spec = monitor.body.get_map("spec")
    if "selector" in spec:
        return spec.key_span("selector"), ("spec", "selector")
    return monitor.body.key_span("spec"), ("spec",)


def _selector_text(monitor) -> str:
    """``app=x, tier In (a, b), gpu Exists`` for messages."""
    selector = monitor_selector(monitor)
    if selector is None:
        return "its selector"
    match_labels, expressions = selector.get("matchLabels"), selector.get("matchExpressions")
    terms = [f"{k}={v}" for k, v in match_labels.items()] if isinstance(match_labels, dict) else []
    for expression in expressions if isinstance(expressions, list) else ():
        if isinstance(expression, dict):
            values = expression.get("values")
            shown = f" ({', '.join(map(str, values))})" if isinstance(values, list) and values else ""
            terms.append(f"{expression.get('key')} {expression.get('operator')}{shown}")
    return "`" + ", ".join(terms) + "`" if terms else "its selector"


@rule(code="OBS001", name="monitor-selects-nothing", severity="warning", scope=PROJECT,
      requires=("PodMonitor", "ServiceMonitor"), collect=scrape_facts, tags=("observability",))
def check(found, ctx):
    index = ctx.index
    model = scrape_model(found, index)  # shared with OBS002
    virtual, targets_in, reachable, services_in = model.virtual, model.targets, model.reachable, model.services
    verdicts: dict = {}  # copies of a monitor (same kind, selector, namespaces) get one verdict
    for monitor in monitors(index):
        selector = monitor_selector(monitor)
        if selector is None:
            continue  # the CRD requires a selector: a schema error, not judged here
        namespaces = monitor_namespaces(monitor)
        key = (monitor.kind, frozen(selector), namespaces)
        if key not in verdicts:
            verdicts[key] = _verdict(monitor.kind, selector, namespaces, targets_in, reachable, services_in, virtual)
        verdict = verdicts[key]
        if verdict is None:
            continue
        span, node = _where(monitor)
        if verdict[0] == "no pod":
            count = verdict[1]
            message = (f"PodMonitor `{monitor.name}` selects no pod: no pod template in {namespaces.describe()} matches "
                       f"{_selector_text(monitor)} ({count} pod template{'s' if count != 1 else ''} there); "
                       "match the labels of the pods to scrape")
        elif verdict[0] == "no service":
            message = (f"ServiceMonitor `{monitor.name}` selects no Service: no Service in {namespaces.describe()} matches "
                       f"{_selector_text(monitor)} (the Service's own labels are matched, not its selector); "
                       "match the labels of the Service to scrape")
        else:
            message = (f"ServiceMonitor `{monitor.name}` selects Service {verdict[1]}, but no pod template of the project "
                       "matches the Service's selector, so there is nothing behind it to scrape; align the Service's "
                       "selector with the pods' labels")
        yield Finding(span, message, obj=monitor, node=node)


def _verdict(kind, selector, namespaces, targets_in, reachable, services_in, virtual) -> tuple | None:
    """What is wrong with a monitor of ``kind`` with ``selector`` over ``namespaces``: None, or
    ("no pod", templates there), ("no service",), ("nothing behind", the Services' names)."""
    if kind == "PodMonitor":
        if not targets_in.count_within(namespaces) or \
                selects_operator_objects(selector, chain(targets_in.each_within(namespaces), virtual)):
            return None  # the pods come from elsewhere: nothing in the project to refer to
        if targets_selected(selector, namespaces, reachable.selectable(namespaces, selector)):
            return None
        return ("no pod", distinct_templates(targets_in.each_within(namespaces)))
    if not services_in.count_within(namespaces) or selects_operator_objects(selector, services_in.each_within(namespaces)):
        return None
    if virtual and selector_matches(selector, GPU_OPERATOR_DCGM_LABELS):
        return None  # the GPU Operator's nvidia-dcgm-exporter Service
    matched = services_selected(selector, namespaces, services_in.selectable(namespaces, selector))
    if not matched:
        return ("no service",)
    if any(service_selector(s) is None for s in matched):
        return None  # a Service without selector: its endpoints are managed by hand
    namespaces_of = {s.namespace or "default" for s in matched}
    if not targets_in.holds_any(namespaces_of):
        return None  # the pods behind these Services come from elsewhere
    if any(selects_operator_objects(service_selector(s), targets_in.items) for s in matched):
        return None
    if any(behind(s, reachable) for s in matched):
        return None
    return ("nothing behind", ", ".join(f"`{s.name}`" for s in matched[:3]))
