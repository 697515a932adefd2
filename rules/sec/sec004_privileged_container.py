"""A privileged container.

## What it does
Flags every container (init, sidecar and ephemeral containers included) with
`securityContext.privileged: true`. The finding points at the value.

It reads every pod view: the Kubernetes workloads, Kubeflow Training Operator jobs and Trainer v2
runtimes and TrainJobs, JobSets, Volcano Jobs, KubeRay clusters, jobs (their submitter too) and
services, LeaderWorkerSets, KAITO `inference.template`, KServe InferenceServices and
ServingRuntimes, and any other object's pod template read generically (README, supported kinds).

## Why is this bad?
A privileged container has every capability, sees every device of the node (every GPU, not
only the ones the device plugin allocated to it) and can load kernel modules or write to the
host's filesystems: a compromise is a compromise of the node and of every workload on it. GPU
training and inference do not need it; GPUs are handed to containers through the NVIDIA device
plugin, which the article runs unprivileged (`allowPrivilegeEscalation: false`, `capabilities:
drop: [ALL]`). The baseline Pod Security Standard forbids privileged containers.

## Example
```yaml
        securityContext:
          privileged: true
```

Use instead:
```yaml
        resources:
          limits:
            nvidia.com/gpu: 1   # GPUs come from the device plugin, not from privileged mode
        securityContext:
          privileged: false
          allowPrivilegeEscalation: false
```

## Known problems
Some node agents need privileges (GPU Operator components, DCGM exporters with profiling, CNI
and storage drivers): suppress the rule on those objects with a reason, e.g. the annotation
`ignore-check.mlops-lint.io/SEC004: "GPU driver installer"`. A value that is not the boolean
`true` (a quoted `"true"`, a template placeholder) is not judged.

## References
- Kubernetes, Pod Security Standards (Privileged Containers): https://kubernetes.io/docs/concepts/security/pod-security-standards/
- NVIDIA k8s-device-plugin: https://github.com/NVIDIA/k8s-device-plugin
"""

from linter.model.k8s import Container
from linter.rule import CONTAINER, Finding, rule


@rule(code="SEC004", name="privileged-container", severity="error", scope=CONTAINER,
      tags=("security", "pod-security"), security_severity="8.0")
def check(container: Container, ctx):
    context = container.security_context
    if context is not None and context.get("privileged") is True:
        yield Finding(context.value_span("privileged"),
                      f"{container.kind_label} `{container.name}` is privileged: it has every capability and every "
                      "device of the node; request GPUs through the device plugin and remove `privileged: true`",
                      node=container.path + ("securityContext", "privileged"), fix="privileged: false")
