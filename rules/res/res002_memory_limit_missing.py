"""A container without a memory limit.

## What it does
Flags containers and init containers (sidecars included) with no `memory` entry under
`resources.limits`, unless a LimitRange of the same namespace in the project sets a default
memory limit (`default`, or `max`, which Kubernetes uses as the default when `default` is unset).
Ephemeral debug containers are not checked (Kubernetes allows no resources on
them). The finding points at `limits:`, else `resources:`, else the container's name.

A Kubeflow Trainer v2 runtime's trainer container (job `node`, container `node`) is judged through
the TrainJobs that run it, whose `resourcesPerNode` set its resources.

In the `aks-automatic` profile, for a container with no memory request either, the message says
what AKS Automatic's Deployment Safeguards do: set the request and the limit to 2Gi (an OOM
trap for a training container); a container with a memory request keeps no limit there either.

{{pod-views}}

RES007 may report the same container of a GPU training pod: it stays separate on purpose. This
rule is about one limit, for every container (a leak reaching the node); RES007 is about the QoS
class of GPU training pods, which needs cpu as well and requests equal to limits, and is info. A
memory limit alone fixes this finding and not RES007's.

## Why is this bad?
Without a memory limit a leaking data loader or an oversized batch grows until the node runs
out of memory and the kubelet evicts pods, possibly other teams' jobs on the same GPU node.
The article: "Set memory limits above the observed peak", and include `/dev/shm`, since
"memory-backed emptyDir usage counts toward the pod's memory consumption". A limit turns a
node-wide incident into one OOMKilled container that its controller restarts from the last
checkpoint.

## Example
```yaml
        resources:
          requests:
            cpu: "4"
            memory: 16Gi
```

Use instead:
```yaml
        resources:
          requests:
            cpu: "4"
            memory: 16Gi
          limits:
            memory: 16Gi
```

## References
- Kubernetes, memory limits: https://kubernetes.io/docs/tasks/configure-pod-container/assign-memory-resource/
- Kubernetes, LimitRange defaults: https://kubernetes.io/docs/concepts/policy/limit-range/
"""

from mlops_lint.model.k8s import Container
from mlops_lint.model.safeguards import safeguards
from mlops_lint.rule import CONTAINER, Finding, rule


@rule(code="RES002", name="memory-limit-missing", severity="warning", scope=CONTAINER, tags=("resources",))
def check(container: Container, ctx):
    if container.is_ephemeral or "memory" in container.limits:
        return
    if container.resources_from_trainjob:
        return  # its TrainJobs' resourcesPerNode set them: judged on their views
    _, defaulted = ctx.index.container_defaults(container.obj.namespace)
    if "memory" in defaulted:
        return
    automatic = getattr(ctx.config, "profile", None) == "aks-automatic"
    filled = ["memory"] if automatic and "memory" not in container.requests and "memory" not in defaulted_requests(ctx, container) else []
    yield Finding(
        container.section_span("limits"),
        f"{container.kind_label} `{container.name}` has no memory limit" + safeguards(container, filled),
        node=container.path + ("resources", "limits"),
    )


def defaulted_requests(ctx, container: Container) -> set:
    """The requests a LimitRange of the container's namespace defaults."""
    return ctx.index.container_defaults(container.obj.namespace)[0]
