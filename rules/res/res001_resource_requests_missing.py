"""A container without a cpu or memory request.

## What it does
Flags containers and init containers (sidecars included) that have no effective `cpu` or no
effective `memory` request. A request is effective when it is written in `requests`, when a
`limits` entry exists for it (Kubernetes copies a limit into a missing request), or when a
LimitRange of the same namespace in the project defaults it. Ephemeral debug containers are
not checked: Kubernetes does not allow resources on them. The finding points at `requests:`,
else `resources:`, else the container's name.

A Kubeflow Trainer v2 runtime's trainer container (job `node`, container `node`) is judged through
the TrainJobs that run it, whose `resourcesPerNode` set its resources.

In the `aks-automatic` profile (given, or inferred from the project's cluster) the message says
what AKS Automatic does instead: its Deployment Safeguards (enforced, not a warning there) fill a
resource with neither a request nor a limit with 500m cpu / 2Gi memory, the limit equal to the
request, and raise requests below 100m / 100Mi. For memory that is a 2Gi ceiling: an OOM trap
for a training container.

{{pod-views}}

## Why is this bad?
The scheduler places pods by their requests. Without them a training pod lands on a node that
cannot feed the GPU: the article asks to "set CPU requests high enough to keep GPU input
pipelines supplied" and "memory requests near stable working-set usage plus a safety margin".
A pod with no requests is BestEffort: the first to be evicted under memory pressure, which
loses the progress made since the last checkpoint. AKS Deployment Safeguards require requests.

## Example
```yaml
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          limits:
            nvidia.com/gpu: 1
```

Use instead:
```yaml
        resources:
          requests:
            cpu: "8"
            memory: 32Gi
            nvidia.com/gpu: 1
          limits:
            memory: 32Gi
            nvidia.com/gpu: 1
```

## Known problems
A LimitRange applied outside the linted project is not seen; suppress the rule for such
namespaces, or add the LimitRange manifest to the project.

## References
- Kubernetes, Resource management for pods and containers: https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/
- Kubernetes, LimitRange defaults: https://kubernetes.io/docs/concepts/policy/limit-range/
"""

from mlops_lint.model.k8s import Container
from mlops_lint.model.safeguards import safeguards
from mlops_lint.rule import CONTAINER, Finding, rule


@rule(code="RES001", name="resource-requests-missing", severity="warning", scope=CONTAINER, tags=("resources",))
def check(container: Container, ctx):
    if container.is_ephemeral:
        return
    if container.resources_from_trainjob:
        return  # its TrainJobs' resourcesPerNode set them: judged on their views
    defaulted, _ = ctx.index.container_defaults(container.obj.namespace)
    present = set(container.requests) | set(container.limits) | defaulted
    missing = [name for name in ("cpu", "memory") if name not in present]
    if missing:
        yield Finding(
            container.section_span("requests"),
            f"{container.kind_label} `{container.name}` has no {' or '.join(missing)} request"
            + (safeguards(container, [name for name in missing if name not in container.limits])
               if getattr(ctx.config, "profile", None) == "aks-automatic" else ""),
            node=container.path + ("resources", "requests"),
        )

