"""A container requests a GPU without setting the same GPU in its limits.

## What it does
Flags containers (init and sidecar containers included) that list `nvidia.com/gpu`,
`nvidia.com/mig-<profile>` or another GPU resource under `resources.requests` but not under
`resources.limits`, unless a LimitRange of the same namespace in the project gives that GPU a
default limit (Kubernetes then fills it in). The finding points at the request.

{{pod-views}}

GPUs taken through Dynamic Resource Allocation (`resources.claims`) set no `nvidia.com/gpu` request
or limit: this rule does not apply to them.

## Why is this bad?
Kubernetes schedules GPUs as extended resources, which cannot be overcommitted: an extended
resource may be given in limits alone (the request then defaults to it) or in both, but a
request without a limit is rejected by the API server (`Limit must be set for non
overcommitable resources`), so the workload never starts. The article: "a pod requests a GPU
by setting nvidia.com/gpu in both resources.requests and resources.limits".

## Example
```yaml
    resources:
      requests:
        nvidia.com/gpu: 1
```

Use instead:
```yaml
    resources:
      requests:
        nvidia.com/gpu: 1
      limits:
        nvidia.com/gpu: 1
```

## Options
- `gpu-resource-prefixes` (list of strings): resource names that count as GPUs; a name
  matches when it starts with one of them. Default: `nvidia.com/gpu`, `nvidia.com/mig-`,
  `amd.com/gpu`.

## Fix safety
Safe. The fix adds the missing limit with the request's own value (`limits: nvidia.com/gpu: 1`
beside `requests: nvidia.com/gpu: 1`, the same key and the same text), creating `limits:` when the
container has none. GPUs cannot be overcommitted, so a request without a limit is rejected by the
API server: the only pod Kubernetes accepts is the one whose limit equals the request, and the
fix writes exactly that. There is no fix when the request is not a positive whole number
(GPU003 reports it; copying it would repeat the mistake), or when `resources.limits` holds
something other than a mapping.

## References
- Kubernetes, Schedule GPUs: https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/
- Kubernetes, extended resources: https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/#extended-resources
"""

from mlops_lint.fix.plans import plan, set_path, whole_count
from mlops_lint.model.k8s import GPU_RESOURCE_OPTION, Container, gpu_resources
from mlops_lint.rule import CONTAINER, Finding, rule


@rule(code="GPU001", name="gpu-limit-missing", severity="error", scope=CONTAINER,
      tags=("gpu", "scheduling"), **GPU_RESOURCE_OPTION)
def check(container: Container, ctx):
    limits = container.limits
    _, defaulted = ctx.index.container_defaults(container.obj.namespace)
    for name, request in gpu_resources(container.requests, ctx.options["gpu-resource-prefixes"]).items():
        if name not in limits and name not in defaulted:
            yield Finding(
                request.key_span,
                f"{container.kind_label} `{container.name}` requests {request.raw} {name} but sets no {name} limit",
                node=container.path + ("resources", "requests", name),
                autofix=plan(f"add `limits: {name}: {request.raw}` (equal to the request)",
                             set_path(container.resources_node, ("limits", name), request.raw))
                if whole_count(request.value) else None,
            )
