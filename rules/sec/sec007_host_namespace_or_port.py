"""A pod that shares the node's network, process or IPC namespace, or binds a port of the node.

## What it does
Flags, in every pod template, `hostNetwork: true`, `hostPID: true` and `hostIPC: true`, and
every container port with a `hostPort` (a number other than 0). With `hostNetwork: true` the
container ports are the node's ports already, so their `hostPort`s are not flagged again. The
finding points at the value. It is a warning, and an error in the `aks-automatic` profile.

{{pod-views}}

DaemonSets are not judged: a DaemonSet is a node agent (the GPU Operator's driver and
validators, DCGM and node exporters, CNI and CSI plugins), whose work is the node itself; the
host namespaces are what it is for. Nor is a device plugin run by another kind (a container that
mounts the kubelet's `/var/lib/kubelet/device-plugins`, as SEC004 tells node agents), nor a
control plane's static pod (a `Pod` in `kube-system` labelled `tier: control-plane`: kubeadm's
kube-apiserver, etcd, scheduler and controller manager), which serves the node's own network by
design. Nor is a pod template without a single container: no pod can be made of it (SCH002
reports the missing `containers`), so it is a fragment (a strategic-merge patch, another
linter's test input such as `hostIPC: true` alone), not a workload.

A pod whose app container runs a service of the node's network is not judged for the network
namespace and host ports (its `hostPID` and `hostIPC` still are): a DHCP or PXE/TFTP boot server
answers broadcasts on the node's link, a node-local DNS cache, a virtual-IP speaker or a CNI agent
binds the node's addresses, so the pod network cannot stand in. Such a pod is known by its image's
repository, the last part of its path (or that name, a `-` and a variant): `dhcpd`,
`isc-dhcp-server`, `kea`, `dhcrelay`, `dhcp-relay`, `dnsmasq`, `tftpd`, `tftp-hpa`, `pixiecore`,
`netboot`, `k8s-dns-node-cache`, `node-local-dns`, `kube-vip`, `keepalived`, `kube-proxy`,
`multus-cni`; or the end of its path: `calico/node`, `metallb/speaker`, `cilium/cilium`,
`flannel/flannel`; or by the program its command starts: `dhcpd`, `kea-dhcp4`, `kea-dhcp6`,
`dhcrelay`, `dnsmasq`, `in.tftpd`, `tftpd`, `pixiecore`, `node-cache`, `keepalived`, `kube-vip`,
`kube-proxy`. Every other workload is judged: training jobs, inference servers, notebooks and the
ML operators' kinds have no business on the node's namespaces, and a web server or a registry
mirror reaches its clients through a Service.

When a container of the pod is privileged, the host namespaces are not reported: a privileged
container has the node already, so SEC004's finding is the one cause (as SEC001 and SEC002 stay
quiet on a privileged container). Its host ports still are (they are about scheduling too).

## Why is this bad?
The host namespaces take the pod out of its sandbox: with the node's network it can reach every
port bound on the node (the kubelet, other pods' host ports, the instance metadata service) and
bypass NetworkPolicies; with its PID namespace it sees and can signal every process on the node;
with its IPC namespace it reads other pods' shared memory. A `hostPort` ties the pod to nodes
where that port is free, so two replicas cannot share a node and scale-up stalls. The Baseline
Pod Security Standard forbids all four, and the article reminds that in AKS Automatic
"image provenance, scanning, and runtime hardening are still core MLOps responsibilities": its
Deployment Safeguards enforce the Baseline standard there, so such a pod is rejected. Distributed
training needs none of it: the article runs NCCL over the AKS CNI pod network
(`NCCL_SOCKET_IFNAME=eth0`) and opens replica traffic with a NetworkPolicy.

## Example
```yaml
    spec:
      hostNetwork: true
      containers:
      - name: pytorch
        ports:
        - containerPort: 23456
          hostPort: 23456
```

Use instead:
```yaml
    spec:
      containers:
      - name: pytorch
        ports:
        - containerPort: 23456
```

## Known problems
A DaemonSet that is not a node agent (a per-node cache of a training set) is not judged; a node
agent run as a Deployment, or a network service of the node in an image or program not named
above, is reported (suppress it with the reason). On AKS Automatic the Baseline admission rejects
the network services' pods all the same; none of them belongs on an AKS cluster, whose VNet
answers DHCP and whose CNI and DNS are managed. An InfiniBand or RoCE
set-up that uses the host network for RDMA is reported all the same; the AKS way is an RDMA
device plugin with the pod network.

## References
- Kubernetes, Pod Security Standards (Host Namespaces, Host Ports): https://kubernetes.io/docs/concepts/security/pod-security-standards/
- AKS, Deployment Safeguards: https://learn.microsoft.com/azure/aks/deployment-safeguards
- Kubernetes, configuration best practices (hostPort): https://kubernetes.io/docs/concepts/configuration/overview/#services
"""

from mlops_lint.model.images import repository_path
from mlops_lint.model.k8s import PodSpec, image_reference
from mlops_lint.model.security import is_node_agent, is_privileged
from mlops_lint.rule import POD, Finding, rule

NAMESPACES = (("hostNetwork", "the node's network namespace", "use the pod network and a Service"),
              ("hostPID", "the node's process namespace", "remove it"),
              ("hostIPC", "the node's IPC namespace", "remove it (a memory-backed emptyDir shares memory inside the pod)"))

# Services of the node's own network, which the pod network cannot stand in for: DHCP and PXE/TFTP
# boot servers (broadcasts on the node's link), node-local DNS caches, virtual-IP speakers, CNI
# agents and kube-proxy (the node's addresses and routes). An image repository's last path part,
# or a variant of it (`dhcpd-alpine`, `k8s-dns-node-cache-amd64`) ...
NETWORK_REPOSITORIES = frozenset({
    "dhcpd", "isc-dhcp-server", "kea", "dhcrelay", "dhcp-relay", "dnsmasq",
    "tftpd", "tftp-hpa", "pixiecore", "netboot", "k8s-dns-node-cache", "node-local-dns", "kube-vip",
    "keepalived", "kube-proxy", "multus-cni",
})
# ... the end of a repository path whose last part alone says too little (`calico/node`) ...
NETWORK_PATHS = ("calico/node", "metallb/speaker", "cilium/cilium", "flannel/flannel")
# ... or the program a command starts (its base name)
NETWORK_PROGRAMS = frozenset({
    "dhcpd", "kea-dhcp4", "kea-dhcp6", "dhcrelay", "dnsmasq", "in.tftpd", "tftpd", "pixiecore", "node-cache",
    "keepalived", "kube-vip", "kube-proxy",
})


def is_network_service(pod: PodSpec) -> bool:
    """Whether an app container of the pod serves the node's network (its image or its program)."""
    for container in pod.app_containers:
        reference = image_reference(container.image)
        if reference is not None:
            path = repository_path(reference[0]).lower()
            last = path.rsplit("/", 1)[-1]
            if (any(last == name or last.startswith(name + "-") for name in NETWORK_REPOSITORIES)
                    or any(path == end or path.endswith("/" + end) for end in NETWORK_PATHS)):
                return True
        command = container.command_strings
        program = command[0].strip().rpartition("/")[2] if command else ""
        if program in NETWORK_PROGRAMS:
            return True
    return False


def _uses_host(pod: PodSpec) -> bool:
    """Whether the pod sets a host namespace or a host port at all (the cheap test, first)."""
    if any(pod.spec.get(field) is True for field, _, _ in NAMESPACES):
        return True
    for container in pod.containers:
        ports = container.body.get_seq("ports")
        for _, port in ports.maps() if ports is not None else ():
            host = port.get("hostPort")
            if isinstance(host, int) and not isinstance(host, bool) and host != 0:
                return True
    return False


@rule(code="SEC007", name="host-namespace-or-port", severity="warning", scope=POD,
      tags=("security", "pod-security"), security_severity="6.0")
def check(pod: PodSpec, ctx):
    if pod.obj.kind == "DaemonSet" or not _uses_host(pod):
        return  # a DaemonSet is a node agent: the node's namespaces are its work
    if not pod.containers:
        return  # a fragment (a patch, a linter's test input): no pod is made of it, SCH002 says so
    if pod.obj.kind == "Pod" and pod.obj.namespace == "kube-system" and pod.labels.get("tier") == "control-plane":
        return  # a control plane's static pod (kube-apiserver, etcd): it serves the node's network
    if any(is_node_agent(container) for container in pod.containers):
        return  # a device plugin run by another kind: a node agent all the same
    severity = "error" if getattr(ctx.config, "profile", None) == "aks-automatic" else None
    owner = f" of the {pod.role} replicas" if pod.role else ""
    privileged = any(is_privileged(container) for container in pod.containers)
    network = is_network_service(pod)  # DHCP, DNS cache, CNI: the node's network is its work
    for field, what, advice in NAMESPACES:
        if field == "hostNetwork" and network:
            continue
        if pod.spec.get(field) is True and not privileged:  # privileged: SEC004's finding alone
            who = f"the {pod.role} pods share" if pod.role else "the pod shares"
            yield Finding(pod.spec.value_span(field), f"{who} {what} (`{field}: true`); {advice}",
                          node=pod.path + (field,), severity=severity, fix=f"remove `{field}: true`")
    if pod.spec.get("hostNetwork") is True or network:
        return  # its ports are the node's already (one cause, one finding), or a network service's
    for container in pod.containers:
        ports = container.body.get_seq("ports")
        for index, port in ports.maps() if ports is not None else ():
            host = port.get("hostPort")
            if isinstance(host, bool) or not isinstance(host, int) or host == 0:
                continue
            yield Finding(port.value_span("hostPort"),
                          f"{container.kind_label} `{container.name}`{owner} binds port {host} of the node (`hostPort`): "
                          "one such pod per node, and the port is open beside the node's own; use a Service",
                          node=container.path + ("ports", index, "hostPort"), severity=severity,
                          fix="remove `hostPort` and reach the pod through a Service")
