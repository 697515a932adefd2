"""A pod that mounts a directory or file of the node (a hostPath volume).

## What it does
Flags every `hostPath` volume of a pod template, except the NVIDIA device plugin's socket
directory `/var/lib/kubelet/device-plugins` (and paths below it), which a device plugin must
mount to register GPUs with the kubelet. Paths are compared after normalisation
(`/var/lib/kubelet/device-plugins/`, `//var/lib/kubelet/./device-plugins` are the same path;
`/var/lib/kubelet/device-plugins/../pods` is not exempt). The finding points at the volume's
`path:` value, else its `hostPath:` key.

{{pod-views}}

The advice depends on the pod: a workload is told to use a PersistentVolumeClaim, an emptyDir or
a ConfigMap; a DaemonSet (a node agent: driver installer, exporter, device plugin) is told to
mount only the host paths it works on, read-only where it can, or to suppress the finding with
the reason it needs this one.

## Why is this bad?
A hostPath volume gives the pod the node's files: writable, it can plant binaries or read other
pods' data and kubelet credentials; even read-only, it exposes secrets and lets a compromised
pod learn the node. Data written there also ties the pod to one node and is lost with it, so it
is no place for datasets or checkpoints (the article keeps those on persistent volumes). The
baseline Pod Security Standard forbids hostPath volumes; the article's device plugin is the one
documented exception, mounting only `/var/lib/kubelet/device-plugins`.

## Example
```yaml
      volumes:
      - name: shm
        hostPath:
          path: /dev/shm
```

Use instead:
```yaml
      volumes:
      - name: shm
        emptyDir:
          medium: Memory
          sizeLimit: 8Gi
```

## Known problems
Other node agents need host paths (DCGM exporters, log collectors, CSI drivers, the GPU
Operator's driver containers): suppress the rule on those objects with a reason.
PersistentVolumes of type `hostPath` are not checked here, only pod volumes.

## References
- Kubernetes, Volumes (hostPath): https://kubernetes.io/docs/concepts/storage/volumes/#hostpath
- Kubernetes, Pod Security Standards (HostPath Volumes): https://kubernetes.io/docs/concepts/security/pod-security-standards/
- Kubernetes, Device plugins: https://kubernetes.io/docs/concepts/extend-kubernetes/compute-storage-net/device-plugins/
"""

from mlops_lint.model.k8s import PodSpec
from mlops_lint.model.security import is_device_plugin_path
from mlops_lint.rule import POD, Finding, rule


@rule(code="SEC005", name="host-path-volume", severity="warning", scope=POD,
      tags=("security", "pod-security", "storage"), security_severity="6.0")
def check(pod: PodSpec, ctx):
    for index, volume in pod.volumes:
        host = volume.get_map("hostPath")
        if host is None:
            continue
        path = host.get("path")
        if is_device_plugin_path(path):
            continue
        what = f"mounts the node's `{path}`" if isinstance(path, str) else "mounts a path of the node"
        span = host.value_span("path") if "path" in host else volume.key_span("hostPath")
        owner = f" of the {pod.role} replicas" if pod.role else ""
        if pod.obj.kind == "DaemonSet":
            advice = ("a node agent should mount only the host paths it works on, read-only where it can; if it "
                      "needs this one (a driver installer, a monitoring agent), suppress this finding with that reason")
        else:
            advice = "use a PersistentVolumeClaim, an emptyDir or a ConfigMap instead"
        yield Finding(span, f"hostPath volume `{volume.get('name')}`{owner} {what}; {advice}",
                      node=pod.path + ("volumes", index, "hostPath", "path"))
