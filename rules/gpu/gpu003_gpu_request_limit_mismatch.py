"""A GPU request that differs from its limit, or a GPU quantity that is not a positive whole number.

## What it does
For every GPU resource of a container (init and sidecar containers included), flags:
- a request and a limit of the same GPU resource with different values (pointing at the limit);
- a GPU quantity in requests or limits that is not a positive whole number: `0.5`, `500m`,
  `0`, `-1`, `"one"` (pointing at the value).

Quantities are compared exactly as Kubernetes parses them, so `1` and `"1"` are equal.
Quantities filled in later (`${GPU_COUNT}`, `$(GPUS)`, `{{ .Values.gpus }}`) are skipped: their
final value is unknown.

{{pod-views}}

GPUs taken through Dynamic Resource Allocation (`resources.claims`) set no `nvidia.com/gpu` request
or limit: this rule does not apply to them.

## Why is this bad?
GPUs are extended resources: they are handed out whole and cannot be overcommitted, so
Kubernetes rejects a pod whose GPU request differs from its limit, and a fractional GPU is not
a valid request (share GPUs with MIG profiles or time-slicing instead). A quantity of zero is
accepted and asks for no GPU: it usually hides a templating mistake, and where it is meant (a CPU
variant of a GPU job) the entry says nothing, so the message asks to remove it or set the count. The workload never starts, and the error
surfaces only at apply time.

## Example
```yaml
    resources:
      requests:
        nvidia.com/gpu: 1
      limits:
        nvidia.com/gpu: 2
```

Use instead:
```yaml
    resources:
      requests:
        nvidia.com/gpu: 2
      limits:
        nvidia.com/gpu: 2
```

## Options
- `gpu-resource-prefixes` (list of strings): resource names that count as GPUs. Default:
  `nvidia.com/gpu`, `nvidia.com/mig-`, `amd.com/gpu`.

## References
- Kubernetes, Schedule GPUs ("you can specify GPU limits without specifying requests …
  if you specify both, they must be equal"): https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/
- NVIDIA MIG with Kubernetes: https://docs.nvidia.com/datacenter/cloud-native/kubernetes/latest/index.html
"""

from mlops_lint.model.k8s import GPU_RESOURCE_OPTION, Container, gpu_resources, is_templated
from mlops_lint.model.quantity import format_quantity
from mlops_lint.rule import CONTAINER, Finding, rule


@rule(code="GPU003", name="gpu-request-limit-mismatch", severity="error", scope=CONTAINER,
      tags=("gpu", "scheduling"), **GPU_RESOURCE_OPTION)
def check(container: Container, ctx):
    prefixes = ctx.options["gpu-resource-prefixes"]
    requests = gpu_resources(container.requests, prefixes)
    limits = gpu_resources(container.limits, prefixes)
    who = f"{container.kind_label} `{container.name}`"
    for section, entries in (("requests", requests), ("limits", limits)):
        for name, entry in entries.items():
            if isinstance(entry.raw, str) and is_templated(entry.raw):
                continue
            if entry.value == 0:
                yield Finding(
                    entry.value_span,
                    f"{who} {section} 0 {name}, which asks for no GPU: remove the entry if the container needs "
                    "none (a zero left by a template usually meant a count), or set the GPUs it needs",
                    node=container.path + ("resources", section, name),
                )
            elif entry.value is None or entry.value < 0 or entry.value.denominator != 1:
                yield Finding(
                    entry.value_span,
                    f"{who} {section} {entry.raw!r} {name}; GPUs are whole devices: use a positive whole number",
                    node=container.path + ("resources", section, name),
                )
    for name, limit in limits.items():
        request = requests.get(name)
        if request is None or request.value is None or limit.value is None or request.value == limit.value:
            continue
        yield Finding(
            limit.value_span,
            f"{who} requests {format_quantity(request.value)} {name} but limits it to {format_quantity(limit.value)}; "
            "GPU requests and limits must be equal",
            node=container.path + ("resources", "limits", name),
        )
