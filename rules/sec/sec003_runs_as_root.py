"""A container that may run as root: neither it nor its pod requires a non-root user.

## What it does
Merges the pod's and the container's `securityContext` as the kubelet does (the container's
`runAsUser` and `runAsNonRoot` win over the pod's) and flags every container (init, sidecar and
ephemeral containers included) that:

- runs as user 0 (`runAsUser: 0`, also when `runAsNonRoot: true` is set, which the kubelet then
  refuses to start), reported at that `runAsUser`;
- sets no `runAsUser` and has `runAsNonRoot: false`, reported at that value;
- sets neither, reported at the container's `securityContext:` key, else its `name:`.

A non-zero `runAsUser`, or `runAsNonRoot: true` without a `runAsUser`, passes. Pods that run in
a user namespace (`hostUsers: false`) are exempt, as the Pod Security Standards exempt them: root
in the container is an unprivileged user on the node. On Windows pods
(`spec.os.name: windows`), `windowsOptions.runAsUserName` other than `ContainerAdministrator`
also passes. A device plugin (a container that mounts the kubelet's
`/var/lib/kubelet/device-plugins` directory from the node) is exempt: it must create its socket in
that root-owned directory, and the article's hardened NVIDIA device plugin runs as root with every
capability dropped.

{{pod-views}}

## Why is this bad?
Without a non-root user the process runs as whatever the image says, and most framework images
(`pytorch/pytorch`, `nvcr.io/nvidia/*`) run as root: a compromised data loader or model server is
root in the container, can rewrite mounted checkpoints and datasets, and is one kernel or runtime
bug from the node. The article's checkpointed training Job and Azure Files workers run with
`runAsUser: 1000`, and the restricted Pod Security Standard requires `runAsNonRoot: true`.

## Example
```yaml
    spec:
      containers:
      - name: trainer
        image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
```

Use instead:
```yaml
    spec:
      securityContext:
        runAsNonRoot: true
        runAsUser: 1000
        runAsGroup: 1000
        fsGroup: 1000
      containers:
      - name: trainer
        image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
```

## Known problems
The image's `USER` is not known from the manifest: an image that already runs as a non-root user
is still reported until the manifest says so (`runAsNonRoot: true` makes the kubelet verify it;
DKR007 checks Dockerfiles). A `runAsUser` that is not an integer (a template placeholder) is
not judged. Defaults injected at admission are not seen.

## References
- Kubernetes, Pod Security Standards (Running as Non-root): https://kubernetes.io/docs/concepts/security/pod-security-standards/
- Kubernetes, Configure a Security Context: https://kubernetes.io/docs/tasks/configure-pod-container/security-context/
- Kubernetes, User namespaces: https://kubernetes.io/docs/concepts/workloads/pods/user-namespaces/
"""

from mlops_lint.model.k8s import Container
from mlops_lint.model.security import anchor, effective, is_windows, mounts_device_plugin_dir
from mlops_lint.model.selectors import label_value
from mlops_lint.rule import CONTAINER, Finding, rule

FIX = "securityContext:\n  runAsNonRoot: true\n  runAsUser: 1000"


@rule(code="SEC003", name="runs-as-root", severity="warning", scope=CONTAINER,
      tags=("security", "pod-security"), security_severity="5.0")
def check(container: Container, ctx):
    pod = container.pod
    if pod.spec.get("hostUsers") is False or mounts_device_plugin_dir(container):
        return
    who = f"{container.kind_label} `{container.name}`"
    user = effective(container, "runAsUser")
    if user.is_set:
        if not isinstance(user.value, int) or isinstance(user.value, bool) or user.value != 0:
            return
        where = "its" if user.level == "container" else "the pod's"
        yield Finding(user.span, f"{who} runs as root ({where} `runAsUser: 0`); use a non-zero user",
                      node=container.path + ("securityContext", "runAsUser"), fix="runAsUser: 1000")
        return
    non_root = effective(container, "runAsNonRoot")
    if non_root.value is True:
        return
    if is_windows(pod):
        options = effective(container, "windowsOptions").value
        name = options.get("runAsUserName") if isinstance(options, dict) else None
        if isinstance(name, str) and name and name != "ContainerAdministrator":
            return
    if non_root.is_set:
        where = "its" if non_root.level == "container" else "the pod's"
        yield Finding(non_root.span, f"{who} may run as root ({where} `runAsNonRoot: {label_value(non_root.value)}` and no "
                                     "`runAsUser`); set `runAsNonRoot: true`",
                      node=container.path + ("securityContext", "runAsNonRoot"), fix=FIX)
        return
    span, node = anchor(container)
    yield Finding(span, f"{who} may run as root: neither it nor its pod sets `runAsNonRoot: true` or a non-zero "
                        "`runAsUser`", node=node + ("runAsNonRoot",), fix=FIX)
