"""A privileged container.

## What it does
Flags every container (init, sidecar and ephemeral containers included) with
`securityContext.privileged: true`. The finding points at the value. The advice depends on
what the container is: a workload is told to get its GPUs from the device plugin; a node agent
(a container of a DaemonSet, or one mounting the kubelet's device-plugin directory: device
plugins, MIG managers, profilers, exporters) is told to mount only the host paths and add only
the capabilities it uses, or to keep `privileged` with a suppression that says why.

Privileged overrides `allowPrivilegeEscalation` and `capabilities`, so SEC001, SEC002 and
GPU010's escalation and capability checks stay quiet on a privileged container, and SEC007 does
not report the host namespaces of its pod: one cause, one finding, this one.

{{pod-views}}

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

from mlops_lint.model.k8s import Container
from mlops_lint.model.security import is_node_agent, is_privileged
from mlops_lint.rule import CONTAINER, Finding, rule

WORKLOAD_ADVICE = ("a workload gets its GPUs from the device plugin (`nvidia.com/gpu` in its limits): remove "
                   "`privileged: true`")
AGENT_ADVICE = ("a node agent (device plugin, MIG manager, profiler, exporter) needs only what it touches: mount "
                "the host paths it uses and add just the capabilities it needs (`SYS_ADMIN` for profiling) instead "
                "of `privileged: true`, or, if it must be privileged (a driver installer, a MIG manager), "
                "suppress this finding with that reason")


@rule(code="SEC004", name="privileged-container", severity="error", scope=CONTAINER,
      tags=("security", "pod-security"), security_severity="8.0")
def check(container: Container, ctx):
    if is_privileged(container):
        advice = AGENT_ADVICE if is_node_agent(container) else WORKLOAD_ADVICE
        yield Finding(container.security_context.value_span("privileged"),
                      f"{container.kind_label} `{container.name}` is privileged: it has every capability and every "
                      f"device of the node; {advice}",
                      node=container.path + ("securityContext", "privileged"), fix="privileged: false")
