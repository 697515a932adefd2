"""A monitor scrapes a port name that the pods (or Services) it selects do not declare.

## What it does
For every `PodMonitor` and `ServiceMonitor` (`monitoring.coreos.com` or Azure Monitor's
`azmonitoring.coreos.com`) that selects something in the project (see OBS001 for how selectors,
namespaces and controller-set labels are read):

- each `podMetricsEndpoints[]` entry of a PodMonitor must name, with `port`, a container port
  (`ports[].name`) that at least one selected pod template declares; a `portNumber`, or a
  deprecated `targetPort`, must be a declared `containerPort` number (or name);
- each `endpoints[]` entry of a ServiceMonitor must name, with `port`, a port (`spec.ports[].name`)
  of at least one selected Service; when that Service port's `targetPort` is a name, the pods
  behind the Service must declare a container port of that name. A deprecated `targetPort` name
  on the endpoint must be a container port name of those pods.

Ports of every container count, init and sidecar containers included (Prometheus discovers them
all). The GPU Operator's DCGM exporter (port `metrics`, Service port `gpu-metrics`) counts when a
`ClusterPolicy` of the project deploys it. The finding points at the endpoint's `port` (or
`portNumber`/`targetPort`) value.

## Why is this bad?
Prometheus builds one scrape target per declared container port and keeps those whose name
matches the endpoint's `port`: a name that no pod declares yields no target at all, and the
monitor scrapes nothing without any error. The article: "Verify the exporter service or pod
port name before applying the monitor"; its metrics Deployment names its port `metrics` and the
PodMonitor scrapes `port: metrics`.

## Example
```yaml
      containers:
      - name: metrics
        ports:
        - containerPort: 8000        # no name
---
kind: PodMonitor
spec:
  podMetricsEndpoints:
  - port: metrics
```

Use instead:
```yaml
      containers:
      - name: metrics
        ports:
        - name: metrics
          containerPort: 8000
```

## Known problems
- A monitor that selects several pod templates passes when any of them declares the port:
  templates without it are simply not scraped on that endpoint, which may be intended.
- Ports added by a mutating webhook or an operator are not seen, except those KubeRay adds to Ray
  containers (`metrics`, `dashboard`, `gcs-server`, `client`), the training operator's default
  `pytorchjob-port`/`tfjob-port`, and the GPU Operator's DCGM exporter.

## References
- Prometheus Operator, PodMetricsEndpoint and Endpoint: https://prometheus-operator.dev/docs/api-reference/api/#monitoring.coreos.com/v1.PodMetricsEndpoint
- Prometheus, kubernetes_sd_config (pod role targets per declared port): https://prometheus.io/docs/prometheus/latest/configuration/configuration/#pod
- Azure Monitor managed Prometheus, PodMonitor and ServiceMonitor: https://learn.microsoft.com/azure/azure-monitor/containers/prometheus-metrics-scrape-crd
"""

from __future__ import annotations

from mlops_lint.model.monitoring import (GPU_OPERATOR_DCGM_LABELS, GPU_OPERATOR_DCGM_SERVICE_PORT, Target, behind,
                                     monitor_namespaces, monitor_selector, monitors, scrape_facts, scrape_model,
                                     selects_operator_objects, service_ports, service_selector,
                                     services_selected, targets_selected, ByNamespace, distinct_templates)
from mlops_lint.model.selectors import selector_matches
from mlops_lint.model.tree import frozen
from mlops_lint.rule import PROJECT, Finding, rule


def _int(value) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def _declared(targets: list[Target]) -> str:
    ports = sorted({p.name or str(p.number) for t in targets for p in t.ports if p.name or p.number})
    return "declared ports: " + ", ".join(ports[:6]) if ports else "no port is declared"


def _nobody(targets: list[Target], where: str) -> str:
    """``the pod template it selects does not declare it`` / ``none of the 3 pod templates … declares it``."""
    count = distinct_templates(targets)
    if count == 1:
        return f"the pod template {where} does not declare it"
    return f"none of the {count} pod templates {where} declares it"


def _selection(kind, selector, namespaces, targets: ByNamespace, services_in: ByNamespace, virtual):
    """What a monitor of ``kind`` with ``selector`` over ``namespaces`` scrapes: the pod
    templates (PodMonitor), or the Services and whether the GPU Operator's DCGM Service is one
    (ServiceMonitor); None when it selects what an operator creates, which the project does not show."""
    if kind == "PodMonitor":
        if selects_operator_objects(selector, targets.each_within(namespaces)):
            return None
        return targets_selected(selector, namespaces, targets.selectable(namespaces, selector))
    if selects_operator_objects(selector, services_in.each_within(namespaces)):
        return None
    return (services_selected(selector, namespaces, services_in.selectable(namespaces, selector)),
            bool(virtual) and selector_matches(selector, GPU_OPERATOR_DCGM_LABELS))


def _pod_monitor(monitor, matched: list[Target]):
    endpoints = monitor.body.get_map("spec").get_seq("podMetricsEndpoints")
    for index, endpoint in endpoints.maps() if endpoints is not None else ():
        for field in ("port", "portNumber", "targetPort"):
            value = endpoint.get(field)
            if value is None:
                continue
            number = _int(value) if field != "port" else None
            name = None if number is not None else (value if isinstance(value, str) else None)
            if name is None and number is None:
                continue
            if any(t.has_port(name=name, number=number) for t in matched):
                continue
            shown = f"port `{name}`" if name is not None else f"port number {number}"
            yield Finding(
                endpoint.value_span(field),
                f"PodMonitor `{monitor.name}` scrapes {shown}, but {_nobody(matched, 'it selects')} "
                f"({_declared(matched)}); name the container port, or scrape one that exists",
                obj=monitor, node=("spec", "podMetricsEndpoints", index, field),
            )


def _service_monitor(monitor, services, targets: ByNamespace, dcgm_service: bool):
    endpoints = monitor.body.get_map("spec").get_seq("endpoints")
    for index, endpoint in endpoints.maps() if endpoints is not None else ():
        port = endpoint.get("port")
        if isinstance(port, str) and port:
            having = [(s, p) for s in services for p in service_ports(s) if p.get("name") == port]
            if dcgm_service and port == GPU_OPERATOR_DCGM_SERVICE_PORT[0]:
                continue
            if not having:
                declared = sorted({str(p.get("name")) for s in services for p in service_ports(s) if p.get("name")})
                names = [f"`{s.name}`" for s in services[:3]]
                if dcgm_service:
                    declared.append(GPU_OPERATOR_DCGM_SERVICE_PORT[0])
                    names.append("the GPU Operator's `nvidia-dcgm-exporter`")
                shown = ", ".join(declared[:6]) if declared else "no named port"
                yield Finding(
                    endpoint.value_span("port"),
                    f"ServiceMonitor `{monitor.name}` scrapes port `{port}`, which none of the Services it selects "
                    f"({', '.join(names)}) names (ports: {shown}); use the Service port's name",
                    obj=monitor, node=("spec", "endpoints", index, "port"),
                )
                continue
            broken = []
            for service, service_port in having:
                target_port = service_port.get("targetPort")
                if not isinstance(target_port, str) or _int(target_port) is not None or service_selector(service) is None:
                    break  # a number, or endpoints managed by hand: nothing to check
                pods = behind(service, targets)
                if not pods or any(t.has_port(name=target_port) for t in pods):
                    break
                broken.append((service, target_port, pods))
            else:
                if broken:
                    service, target_port, pods = broken[0]
                    yield Finding(
                        endpoint.value_span("port"),
                        f"ServiceMonitor `{monitor.name}` scrapes port `{port}` of Service `{service.name}`, whose "
                        f"targetPort is `{target_port}`, but {_nobody(pods, 'behind it')} ({_declared(pods)}); "
                        "name the container port, or point targetPort at a declared one",
                        obj=monitor, node=("spec", "endpoints", index, "port"),
                    )
        target_port = endpoint.get("targetPort")
        if isinstance(target_port, str) and _int(target_port) is None:
            pods = [t for s in services if service_selector(s) is not None for t in behind(s, targets)]
            if pods and not any(t.has_port(name=target_port) for t in pods):
                yield Finding(
                    endpoint.value_span("targetPort"),
                    f"ServiceMonitor `{monitor.name}` scrapes targetPort `{target_port}`, but "
                    f"{_nobody(pods, 'behind its Services')} ({_declared(pods)}); name the container port",
                    obj=monitor, node=("spec", "endpoints", index, "targetPort"),
                )


@rule(code="OBS002", name="monitor-port-unknown", severity="error", scope=PROJECT,
      requires=("PodMonitor", "ServiceMonitor"), collect=scrape_facts, tags=("observability",))
def check(found, ctx):
    index = ctx.index
    model = scrape_model(found, index)  # shared with OBS001
    virtual, targets, services_in = model.virtual, model.reachable, model.services
    selections: dict = {}  # copies of a monitor (same kind, selector, namespaces) select the same
    for monitor in monitors(index):
        selector = monitor_selector(monitor)
        if selector is None:
            continue
        namespaces = monitor_namespaces(monitor)
        key = (monitor.kind, frozen(selector), namespaces)
        if key not in selections:
            selections[key] = _selection(monitor.kind, selector, namespaces, targets, services_in, virtual)
        selected = selections[key]
        if selected is None:
            continue
        if monitor.kind == "PodMonitor":
            if selected:
                yield from _pod_monitor(monitor, selected)
            continue
        services, dcgm_service = selected
        if services or dcgm_service:
            yield from _service_monitor(monitor, services, targets, dcgm_service)
