"""A PodMonitor or ServiceMonitor's API group is not the one the project's Prometheus reads.

## What it does
Azure Monitor managed Prometheus reads `PodMonitor` and `ServiceMonitor` objects of the API
group `azmonitoring.coreos.com`; the Prometheus Operator reads those of `monitoring.coreos.com`.
Neither reads the other's. The rule flags a monitor whose group no Prometheus of the project
reads, and only when the project says which Prometheus it runs:

- a `monitoring.coreos.com` monitor in a project set up for managed Prometheus and with no
  Prometheus Operator. Managed Prometheus is shown by an `azmonitoring.coreos.com` monitor, an
  `ama-metrics-settings-configmap` or `ama-metrics-prometheus-config*` ConfigMap in
  `kube-system`, or a cluster definition that turns the metrics add-on on
  (`az aks create|update --enable-azure-monitor-metrics`, a Terraform `monitor_metrics` block,
  Bicep/ARM `azureMonitorProfile.metrics.enabled: true`). The Operator is shown by a
  `monitoring.coreos.com` `Prometheus` or `PrometheusAgent`, or a Helm install of
  `kube-prometheus-stack`, `kube-prometheus` or `prometheus-operator` (a script's `helm`, a
  Terraform `helm_release`). A monitor labelled `release` (kube-prometheus-stack selects
  monitors by `release: <Helm release>`) or `prometheus` is addressed to an Operator's
  Prometheus installed elsewhere and is not judged;
- an `azmonitoring.coreos.com` monitor in a project that runs the Operator's `Prometheus` (or
  `PrometheusAgent`) with a `podMonitorSelector` or `serviceMonitorSelector`, holds no
  `monitoring.coreos.com` monitor for it, and shows managed Prometheus by nothing but the
  monitor itself (no `ama-metrics` ConfigMap, no cluster definition turning the add-on on).

A project without such evidence is not judged. In a folder of unrelated projects linted together
(no git top, no config file), evidence counts only within its own top-level folder
(`linter.model.locality`). The finding points at the monitor's `apiVersion` value.

## Why is this bad?
A monitor of the wrong group is accepted by the API server and then read by nothing: no GPU
utilisation or memory, no training throughput, and every alert built on them stays green.
The article scrapes the DCGM exporter with "the Azure Monitor managed Prometheus CRD"
(`apiVersion: azmonitoring.coreos.com/v1`) and tells to "Configure Azure Monitor managed
Prometheus to scrape the existing exporter"; Azure Monitor's documentation adds that "the
managed Prometheus addon does not pick up the CRDs created for the OSS Prometheus", and the
only change an OSS monitor needs "for being picked up by the Managed Prometheus is the API
group".

## Example
```yaml
# the project enables managed Prometheus: az aks create ... --enable-azure-monitor-metrics
apiVersion: monitoring.coreos.com/v1
kind: PodMonitor
metadata:
  name: nvidia-dcgm-exporter
  namespace: gpu-operator
spec:
  selector:
    matchLabels:
      app: nvidia-dcgm-exporter
  podMetricsEndpoints:
  - port: metrics
```

Use instead:
```yaml
apiVersion: azmonitoring.coreos.com/v1
kind: PodMonitor
metadata:
  name: nvidia-dcgm-exporter
  namespace: gpu-operator
spec:
  selector:
    matchLabels:
      app: nvidia-dcgm-exporter
  podMetricsEndpoints:
  - port: metrics
```

Or, for a project that runs the Prometheus Operator, keep `monitoring.coreos.com/v1` and make
sure its `Prometheus` selects the monitor.

## Known problems
- A Prometheus Operator installed otherwise than by the project's manifests, scripts or
  Terraform (a Flux `HelmRelease`, an Argo CD `Application`, a cluster shared with another
  repository) is not seen: a `monitoring.coreos.com` monitor it reads is reported in a project
  that also shows managed Prometheus. Suppress the finding, or add the `Prometheus` to the project.
- The Operator's RBAC (a RoleBinding for `prometheus-k8s` in `monitoring`) does not count as
  evidence of it.
- Whether the Operator's `Prometheus` selects a given monitor (its selectors and
  `serviceMonitorNamespaceSelector`) is not checked.

## References
- Azure Monitor, customize managed Prometheus collection with PodMonitor and ServiceMonitor: https://learn.microsoft.com/azure/azure-monitor/containers/prometheus-metrics-scrape-crd
- Azure Monitor, enable managed Prometheus on AKS: https://learn.microsoft.com/azure/azure-monitor/containers/kubernetes-monitoring-enable
- Prometheus Operator, Prometheus `podMonitorSelector`: https://prometheus-operator.dev/docs/api-reference/api/#monitoring.coreos.com/v1.PrometheusSpec
"""

from __future__ import annotations

from typing import Any, Iterator

from msgspec import Struct

from mlops_lint.model.cluster import cluster_of
from mlops_lint.model.cluster.features import MANAGED_PROMETHEUS
from mlops_lint.model.document import K8sObject
from mlops_lint.model.installs import PROMETHEUS_OPERATOR, project_installs
from mlops_lint.model.locality import together, unit_of
from mlops_lint.model.monitoring import monitors
from mlops_lint.rule import PROJECT, Finding, rule

OPERATOR_GROUP = "monitoring.coreos.com"
MANAGED_GROUP = "azmonitoring.coreos.com"
# labels by which an Operator's Prometheus selects monitors: kube-prometheus-stack's default
# `release: <Helm release>`, kube-prometheus's `prometheus: <name>`
OPERATOR_SELECTOR_LABELS = frozenset({"release", "prometheus"})
# the ConfigMaps that configure managed Prometheus's agent (ama-metrics), in kube-system
AMA_CONFIGMAPS = frozenset({"ama-metrics-settings-configmap", "ama-metrics-prometheus-config",
                            "ama-metrics-prometheus-config-node", "ama-metrics-prometheus-config-node-windows"})


class PrometheusServer(Struct, frozen=True):
    """A Prometheus Operator ``Prometheus`` or ``PrometheusAgent`` of the project."""

    path: str
    line: int
    name: str
    kind: str
    selects_monitors: bool  # it has a podMonitorSelector or serviceMonitorSelector


def prometheus_servers(obj: K8sObject, ctx: Any) -> Iterator[PrometheusServer]:
    if obj.kind not in ("Prometheus", "PrometheusAgent") or obj.group != OPERATOR_GROUP:
        return
    spec = obj.body.get_map("spec")
    selects = spec is not None and any(spec.get(key) is not None
                                       for key in ("podMonitorSelector", "serviceMonitorSelector"))
    yield PrometheusServer(obj.path, obj.span.line, obj.name, obj.kind, selects)


def _first(items: list, unit, path: str) -> Any:
    return next((item for item, where in items if together(unit, where, path)), None)


@rule(code="OBS005", name="monitor-api-group-mismatch", severity="warning", scope=PROJECT,
      requires=("PodMonitor", "ServiceMonitor"), collect=prometheus_servers, tags=("observability", "aks"))
def check(found, ctx):
    index = ctx.index
    found_monitors = list(monitors(index))
    if not found_monitors:
        return
    servers = [(s, s.path) for s in found if isinstance(s, PrometheusServer)]
    managed_monitors = [(m, m.path) for m in found_monitors if m.group == MANAGED_GROUP]
    operator_monitors = [(m, m.path) for m in found_monitors if m.group == OPERATOR_GROUP]
    configmaps = [(c, c.path) for c in index.of_kind("ConfigMap")
                  if c.name in AMA_CONFIGMAPS and c.namespace == "kube-system"]
    installs = [(i, i.path) for i in project_installs(index, terraform=True) if i.component == PROMETHEUS_OPERATOR]
    if not operator_monitors and not (managed_monitors and servers):
        return  # neither case can arise: the cluster model is not read
    managed_on = [(s, s.origin.path) for s in cluster_of(index, ctx.config).features
                  if s.feature == MANAGED_PROMETHEUS and s.on is True]
    unit = unit_of(index, ctx.config, [where for group in (servers, managed_monitors, operator_monitors, configmaps,
                                                           installs, managed_on) for _, where in group])
    for monitor, path in operator_monitors:
        if _first(servers, unit, path) is not None or _first(installs, unit, path) is not None:
            continue  # the Prometheus Operator reads it
        if any(key in OPERATOR_SELECTOR_LABELS for key in monitor.labels):
            continue  # addressed to an Operator's Prometheus installed elsewhere (a Helm release)
        setting = _first(managed_on, unit, path)
        configmap = _first(configmaps, unit, path)
        other = _first(managed_monitors, unit, path)
        if setting is not None:
            evidence = f"the cluster turns managed Prometheus on ({setting.how} at {setting.origin.path}:{setting.origin.span.line})"
        elif configmap is not None:
            evidence = f"the project configures its agent (ConfigMap `{configmap.name}` at {configmap.path}:{configmap.span.line})"
        elif other is not None:
            evidence = (f"the project's other monitors are managed Prometheus's ({other.kind} `{other.name}` at "
                        f"{other.path}:{other.span.line} is `{MANAGED_GROUP}`)")
        else:
            continue
        yield Finding(
            monitor.body.value_span("apiVersion"),
            f"{monitor.kind} `{monitor.name}` is `{OPERATOR_GROUP}`, which Azure Monitor managed Prometheus does not "
            f"read, and the project runs no Prometheus Operator: {evidence}; nothing scrapes this monitor. "
            f"Use `apiVersion: {MANAGED_GROUP}/v1`",
            obj=monitor, node=("apiVersion",))
    selecting = [(s, where) for s, where in servers if s.selects_monitors]
    for monitor, path in managed_monitors:
        server = _first(selecting, unit, path)
        if server is None or _first(operator_monitors, unit, path) is not None \
                or _first(configmaps, unit, path) is not None or _first(managed_on, unit, path) is not None:
            continue
        yield Finding(
            monitor.body.value_span("apiVersion"),
            f"{monitor.kind} `{monitor.name}` is `{MANAGED_GROUP}`, read only by Azure Monitor managed Prometheus, "
            f"which nothing in the project enables, while the project's Prometheus Operator {server.kind} "
            f"`{server.name}` ({server.path}:{server.line}) selects `{OPERATOR_GROUP}` monitors and the project has "
            f"none: nothing the project runs scrapes this monitor. Use `apiVersion: {OPERATOR_GROUP}/v1`, or enable "
            "managed Prometheus (`az aks update --enable-azure-monitor-metrics`)",
            obj=monitor, node=("apiVersion",))
