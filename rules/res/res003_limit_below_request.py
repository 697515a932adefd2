"""A resource limit smaller than its request.

## What it does
For each resource a container (init, sidecar) both requests and limits, such as `cpu`,
`memory`, `ephemeral-storage` or `hugepages-*`, flags the limit when it is smaller than the
request. Quantities are compared exactly as Kubernetes parses them (`500m` < `1`, `1Gi` >
`1G`). GPU resources are left to GPU003, which requires them to be equal. The finding points
at the limit's value.

{{pod-views}}

## Why is this bad?
The API server rejects such a pod ("must be less than or equal to … limit"), so the Job or
Deployment never creates it; the error shows up only in the controller's events, after the
change has shipped. It is nearly always a unit slip (`16G` against `16Gi`, `2` against `2000m`).

## Example
```yaml
        resources:
          requests:
            memory: 16Gi
          limits:
            memory: 16G   # 16 000 000 000 bytes < 16 GiB
```

Use instead:
```yaml
        resources:
          requests:
            memory: 16Gi
          limits:
            memory: 16Gi
```

## References
- Kubernetes, Resource management for pods and containers: https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/
- Kubernetes, quantity suffixes: https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/
"""

from mlops_lint.model.k8s import Container, gpu_resources
from mlops_lint.model.quantity import format_quantity
from mlops_lint.rule import CONTAINER, Finding, rule


@rule(code="RES003", name="limit-below-request", severity="error", scope=CONTAINER, tags=("resources",))
def check(container: Container, ctx):
    requests = container.requests
    limits = container.limits
    gpus = gpu_resources(limits)
    for name, limit in limits.items():
        request = requests.get(name)
        if name in gpus or request is None or request.value is None or limit.value is None:
            continue
        if limit.value < request.value:
            yield Finding(
                limit.value_span,
                f"{container.kind_label} `{container.name}` limits {name} to {limit.raw} "
                f"({format_quantity(limit.value)}), below its request of {request.raw} ({format_quantity(request.value)})",
                node=container.path + ("resources", "limits", name),
            )
