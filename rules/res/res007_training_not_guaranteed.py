"""A GPU training pod that does not get the Guaranteed QoS class.

## What it does
Flags containers of GPU training pods (a training workload, see RES004, whose pod template
requests or limits a GPU; not a smoke test that only runs `nvidia-smi` or `sleep`, or a CUDA
sample image) that keep
the pod out of the Guaranteed QoS class. As Kubernetes
decides it (`GetPodQOS`), a pod is Guaranteed when every container, init and sidecar
containers included, has a `cpu` and a `memory` limit and requests equal to them (a missing
request defaults to the limit; quantities compare exactly, so `1` equals `1000m`). Each
offending container gets one finding, at its first differing request, else at its `limits:`,
`resources:` or `name:`. A pod with pod-level `spec.resources` is judged by those instead.

A Kubeflow Trainer v2 runtime's trainer container is judged through the TrainJobs that run it,
whose `resourcesPerNode` set its resources.

{{pod-views}}

{{dra-gpus}}

The message names the class the pod does get, as `GetPodQOS` decides it: BestEffort when no
container has a non-zero `cpu` or `memory` request or limit (GPUs and other extended resources
do not count, so a pod with only `nvidia.com/gpu` limits is BestEffort), else Burstable.

## Why is this bad?
The article: "Set requests and limits equal for predictable, high-value training jobs when
Guaranteed quality of service is more important than node packing." A Burstable GPU pod is
evicted before Guaranteed ones under node memory pressure, and loses everything since its last
checkpoint together with the GPU hours spent; its CPU is shared with noisy neighbours, which
starves the input pipeline that feeds the GPU. (Info: trading packing for predictability is
the team's choice.)

## Example
```yaml
        resources:
          requests: {cpu: "4", memory: 16Gi, nvidia.com/gpu: 1}
          limits: {memory: 32Gi, nvidia.com/gpu: 1}
```

Use instead:
```yaml
        resources:
          requests: {cpu: "4", memory: 32Gi, nvidia.com/gpu: 1}
          limits: {cpu: "4", memory: 32Gi, nvidia.com/gpu: 1}
```

## Known problems
- RES002 (no memory limit) may report the same container: kept apart on purpose, since the two
  ask for different fixes (a memory limit, against cpu and memory limits equal to the requests
  for the QoS class).
- A missing value that a LimitRange of the namespace fills in is unknown here: such a container
  is not flagged (its defaults may make it Guaranteed).
- Ephemeral containers cannot set resources and do not count, as in Kubernetes.

## References
- Kubernetes, Pod quality of service classes: https://kubernetes.io/docs/concepts/workloads/pods/pod-qos/
- Kubernetes, Node-pressure eviction: https://kubernetes.io/docs/concepts/scheduling-eviction/node-pressure-eviction/
"""

from mlops_lint.model.gpunodes import requests_gpu
from mlops_lint.model.k8s import PodSpec, Resource
from mlops_lint.model.quantity import parse_quantity
from mlops_lint.rule import POD, Finding, rule

QOS_RESOURCES = ("cpu", "memory")


def _section(resources, which: str) -> dict[str, Resource]:
    """Pod-level ``spec.resources.<which>`` entries, as containers' are read."""
    section = resources.get_map(which)
    if section is None:
        return {}
    return {str(k): Resource(str(k), v, parse_quantity(v), section.key_span(k), section.value_span(k))
            for k, v in section.items()}


def _problems(requests, limits, defaulted_limits):
    """[(problem text, span or None)] of one set of requests/limits; None when unknown."""
    problems = []
    for name in QOS_RESOURCES:
        limit, request = limits.get(name), requests.get(name)
        if limit is None:
            if name in defaulted_limits:
                return None
            problems.append((f"no {name} limit" if request is None else f"{name} request {request.raw} but no limit",
                             None))  # a missing limit: reported at its parent, `limits:`
            continue
        if request is None:
            continue  # Kubernetes defaults a missing request to the limit
        if request.value is None or limit.value is None:
            return None
        if request.value != limit.value:
            problems.append((f"{name} request {request.raw} but limit {limit.raw}", request.value_span))
    return problems


def _nonzero(resource: Resource | None) -> bool:
    """A cpu or memory entry GetPodQOS counts (a zero quantity is ignored; an unparsable one counts)."""
    return resource is not None and resource.value != 0


def qos_class(pod: PodSpec, defaulted: frozenset[str]) -> str:
    """The QoS class Kubernetes gives a pod that is not Guaranteed (``GetPodQOS``): BestEffort when
    no container (init containers included) has a non-zero cpu or memory request or limit, and
    no LimitRange of the namespace fills one in; else Burstable. Extended resources (GPUs) do not
    count: a pod with only GPU limits is BestEffort."""
    if any(name in QOS_RESOURCES for name in defaulted):
        return "Burstable"
    for container in pod.containers:
        if container.is_ephemeral:
            continue
        if any(_nonzero(section.get(name)) for section in (container.requests, container.limits) for name in QOS_RESOURCES):
            return "Burstable"
    return "BestEffort"


CONSEQUENCE = {
    "BestEffort": "BestEffort (no cpu or memory request or limit anywhere; GPUs do not count), the first class "
                  "evicted under memory pressure",
    "Burstable": "Burstable, not Guaranteed, and is evicted before Guaranteed pods under memory pressure",
}


@rule(code="RES007", name="training-not-guaranteed", severity="info", scope=POD, tags=("resources", "qos"))
def check(pod: PodSpec, ctx):
    if pod.workload is None or pod.workload.trains is None or not requests_gpu(pod):
        return
    level = pod.spec.get_map("resources")
    if level is not None:
        problems = _problems(_section(level, "requests"), _section(level, "limits"), ())
        if problems:
            text = ", ".join(p for p, _ in problems)
            yield Finding(problems[0][1] or pod.spec.kspans["resources"],
                          f"{pod.describe()} has pod-level {text}: the pod is not Guaranteed QoS",
                          node=pod.path + ("resources",))
        return
    defaulted_requests, defaulted_limits = ctx.index.container_defaults(pod.obj.namespace)
    qos = None
    for container in pod.containers:
        if container.is_ephemeral or container.resources_from_trainjob:
            continue  # a Trainer runtime's trainer: its TrainJobs' resourcesPerNode set its resources
        problems = _problems(container.requests, container.limits, defaulted_limits)
        if not problems:
            continue
        text = ", ".join(p for p, _ in problems)
        span = problems[0][1] or container.section_span("limits")
        qos = qos or qos_class(pod, defaulted_requests | defaulted_limits)
        yield Finding(
            span,
            f"{container.kind_label} `{container.name}` of a GPU training pod has {text}: the pod is {CONSEQUENCE[qos]}",
            node=container.path + ("resources",),
            fix="set cpu and memory requests equal to their limits in every container",
        )
