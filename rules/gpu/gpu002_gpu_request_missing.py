"""A container sets a GPU limit without the matching request.

## What it does
Flags containers (init and sidecar containers included) with a GPU resource
(`nvidia.com/gpu`, `nvidia.com/mig-<profile>`, …) under `resources.limits` but not under
`resources.requests`. The finding points at the limit. A limit of `0` asks for no GPU and is
left to GPU003, which asks to remove it (a zero request beside it would say nothing more).

{{pod-views}}

GPUs taken through Dynamic Resource Allocation (`resources.claims`) set no `nvidia.com/gpu` request
or limit: this rule does not apply to them.

## Why is this bad?
Kubernetes treats a GPU limit as the request when only the limit is given, so the pod does
schedule; but the article asks for both fields because "setting both fields makes workload
intent explicit and helps policy validation": quota tools, admission policies and reviewers
read `requests`, and a template that sets one and not the other is easy to break when edited.

## Example
```yaml
    resources:
      limits:
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
- `gpu-resource-prefixes` (list of strings): resource names that count as GPUs. Default:
  `nvidia.com/gpu`, `nvidia.com/mig-`, `amd.com/gpu`.

## Fix safety
Safe. The fix adds the request with the limit's own value (`requests: nvidia.com/gpu: 1` beside
`limits: nvidia.com/gpu: 1`, the same key and the same text), creating `requests:` when the
container has none. Kubernetes already copies a lone GPU limit into the request, so the pod is
scheduled exactly as before: the fix only writes down what the API server does. There is no fix
when the limit is not a positive whole number (GPU003's finding), or when `resources.requests`
holds something other than a mapping.

## References
- Kubernetes, Schedule GPUs: https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/
"""

from mlops_lint.fix.plans import plan, set_path, whole_count
from mlops_lint.model.k8s import GPU_RESOURCE_OPTION, Container, gpu_resources
from mlops_lint.rule import CONTAINER, Finding, rule


@rule(code="GPU002", name="gpu-request-missing", severity="warning", scope=CONTAINER,
      tags=("gpu", "scheduling"), **GPU_RESOURCE_OPTION)
def check(container: Container, ctx):
    requests = container.requests
    for name, limit in gpu_resources(container.limits, ctx.options["gpu-resource-prefixes"]).items():
        if name not in requests and limit.value != 0:  # a zero limit asks for no GPU: GPU003's finding
            yield Finding(
                limit.key_span,
                f"{container.kind_label} `{container.name}` limits {name} to {limit.raw} but does not request it; "
                "Kubernetes copies the limit, but the intent should be explicit",
                node=container.path + ("resources", "limits", name),
                autofix=plan(f"add `requests: {name}: {limit.raw}` (equal to the limit)",
                             set_path(container.resources_node, ("requests", name), limit.raw))
                if whole_count(limit.value) else None,
            )
