"""NetworkPolicies let a distributed job's replicas talk to each other only on listed ports.

## What it does
For a distributed job (as DST007: Kubeflow training jobs, Volcano Jobs and JobSets running two
or more pods) whose pods NetworkPolicies select, computes the TCP ports on which each replica
type can reach each replica type of the same job (ingress of the destination and egress of the
source together, with Kubernetes semantics) and reports each destination replica type that some
replicas can reach on some ports but not on the whole Linux ephemeral port range,
32768–60999. A policy without `ports`, or with a range (`port` + `endPort`) that covers those
ports, passes. Traffic that is blocked altogether is DST007's. The finding points at the replica
template's `labels:` key (else its `metadata:` or `spec:` key) and names the policies and ports.

## Why is this bad?
Only the rendezvous port (`MASTER_PORT`, 23456 or 29500) is fixed. NCCL's bootstrap and socket
transport, and Gloo, listen on ports the kernel picks from its ephemeral range, so a policy that
admits only the rendezvous port lets the job start and then hangs it at the first collective. The
article: "NCCL can negotiate dynamic ports, so a narrow fixed-port policy can cause training jobs
to hang"; allow all traffic among the replicas instead.

## Example
```yaml
  ingress:
  - from:
    - podSelector:
        matchLabels: {training-job: pytorch-nccl-example}
    ports:
    - {protocol: TCP, port: 23456}
```

Use instead:
```yaml
  ingress:
  - from:
    - podSelector:
        matchLabels: {training-job: pytorch-nccl-example}
```

## Known problems
The node's `net.ipv4.ip_local_port_range` is taken to be the Linux default (32768–60999); a
policy written for a tuned range, or for `NCCL_PORT_RANGE`-style pinning through a custom
build, is reported. The rendezvous port itself is not checked. The unknowns of DST007 (namespace
labels, per-pod labels, `ipBlock` peers) count as allowing every port their rule lists.

## References
- Kubernetes, Network Policies (`endPort`): https://kubernetes.io/docs/concepts/services-networking/network-policies/#targeting-a-range-of-ports
- NVIDIA NCCL, environment variables: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html
- Linux, `ip_local_port_range`: https://www.kernel.org/doc/html/latest/networking/ip-sysctl.html
"""

from mlops_lint.model.distributed import is_distributed, replicas_phrase, template_anchor
from mlops_lint.model.k8s import Workload
from mlops_lint.rule import WORKLOAD, Finding, rule

EPHEMERAL = (32768, 60999)


def _restricting(flow):
    t = flow.traffic
    parts = [d for d in (t.ingress, t.egress) if not d.ports.contains("TCP", *EPHEMERAL)]
    return [p for d in parts for p in d.isolating]


@rule(code="DST008", name="network-policy-fixed-ports", severity="warning", scope=WORKLOAD,
      tags=("distributed", "networking", "network-policy"))
def check(workload: Workload, ctx):
    if not is_distributed(workload) or not ctx.index.of_kind("NetworkPolicy"):
        return
    # imported here: a project with no NetworkPolicy (as most one-file runs) never loads the model
    from mlops_lint.model.netpol import endpoint_of, names, policies_near, replica_flows, selecting
    found = policies_near(ctx.index, workload.pods[0])
    if not found or not any(selecting(found, endpoint_of(pod)) for pod in workload.pods):
        return
    flows = replica_flows(workload, found)
    for destination in workload.pods:
        narrow = [f for f in flows if f.destination is destination
                  and f.traffic.ports.only("TCP") and not f.traffic.ports.contains("TCP", *EPHEMERAL)]
        if not narrow:
            continue
        span, node = template_anchor(destination)
        sources = replicas_phrase(f.source for f in narrow)
        ports = narrow[0].traffic.ports.describe("TCP")
        yield Finding(span, f"the {sources} can reach the {destination.describe()} of this {workload.kind} only on "
                            f"{ports} ({names(p for f in narrow for p in _restricting(f))}); NCCL and Gloo listen "
                            "on dynamic ports (32768-60999): allow all ports among the job's replicas",
                      node=node + ("ports",))
