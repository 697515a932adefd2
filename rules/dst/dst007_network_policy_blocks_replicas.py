"""NetworkPolicies isolate a distributed job's pods but block traffic among its replicas, or DNS.

## What it does
For a distributed job (a Kubeflow PyTorchJob, TFJob, MPIJob, XGBoostJob, PaddleJob or JAXJob, a
Volcano Job whose pods can find each other, or a JobSet, running two or more pods), evaluates the project's `networking.k8s.io/v1`
NetworkPolicies with Kubernetes semantics (see `linter/model/netpol.py`) and reports:

- each replica type whose pods cannot be reached over TCP on any port from some replica type of
  the same job (a replica type with two or more pods must also reach itself): the destination's
  ingress policies admit nothing from those pods, the sources' egress policies allow nothing to
  them, or the ports the two directions allow do not overlap;
- each replica type whose egress is isolated without DNS: no UDP port 53 to the cluster DNS
  (`kube-system` pods labelled `k8s-app: kube-dns`) or to any address.

The job's pods carry their template's labels plus those their operator adds at runtime
(`training.kubeflow.org/job-name`, `…/replica-type`, `volcano.sh/job-name`,
`jobset.sigs.k8s.io/jobset-name` …), which is what policies usually select. Nothing is reported
when no policy selects the job's pods: pods no policy selects are not isolated. The finding
points at the replica template's `labels:` key (else its `metadata:` or `spec:` key) and names
the policies involved.

## Why is this bad?
Ranks open connections to the rendezvous host and to each other for every collective; a policy
that isolates them without allowing replica-to-replica traffic makes the job hang at
initialisation (or time out after the process group timeout), with GPUs allocated the whole
time. Workers reach the rendezvous host by its Service name, so without DNS they never find it.
The article: "If network policy is enabled, allow all required rendezvous and NCCL traffic among
replicas", with a policy that "permits unrestricted pod-to-pod communication only among replicas
of the PyTorch job and allows DNS resolution".

## Example
```yaml
kind: NetworkPolicy
metadata: {name: default-deny, namespace: ml-training}
spec:
  podSelector: {}
  policyTypes: [Ingress, Egress]
```

Use instead:
```yaml
kind: NetworkPolicy
metadata: {name: allow-pytorch-nccl, namespace: ml-training}
spec:
  podSelector:
    matchLabels: {training-job: pytorch-nccl-example}
  policyTypes: [Ingress, Egress]
  ingress:
  - from:
    - podSelector:
        matchLabels: {training-job: pytorch-nccl-example}
  egress:
  - to:
    - podSelector:
        matchLabels: {training-job: pytorch-nccl-example}
  - to:
    - namespaceSelector:
        matchLabels: {kubernetes.io/metadata.name: kube-system}
      podSelector:
        matchLabels: {k8s-app: kube-dns}
    ports:
    - {protocol: UDP, port: 53}
    - {protocol: TCP, port: 53}
```

## Known problems
Whatever a manifest cannot decide is taken to allow traffic, so the rule never reports traffic
that might flow: the namespace of a manifest that names none (it goes where it is applied: a
policy and a job that both name none are taken to share a namespace only when they sit in one
folder, as `kubectl apply -f dir/` applies them), namespace labels other than
`kubernetes.io/metadata.name` (Namespace objects are not read), labels that differ per pod
(replica indexes), and `ipBlock` peers, which match pod IPs
on some network plugins and not on others (an `ipBlock` that holds no private address is known
not to match pods). DNS counts as allowed through UDP 53 to any peer that may be the cluster DNS,
an `ipBlock` included (the DNS Service IP, NodeLocal DNSCache); TCP 53 alone is not enough, as
resolvers ask over UDP first. A `port: 53` without `protocol` is TCP (the API default) and does
not allow DNS. Calico, Cilium and AdminNetworkPolicy objects are not evaluated. Labels added by
mutating webhooks other than the training operators are not known. Plain Jobs with `parallelism`
and Ray clusters are not checked, nor a Volcano Job of one task type without a plugin that
connects its pods (`svc`, `ssh`, `pytorch`, `mpi`, `tensorflow`, `ray`).

## References
- Kubernetes, Network Policies: https://kubernetes.io/docs/concepts/services-networking/network-policies/
- Kubernetes API, NetworkPolicy v1: https://kubernetes.io/docs/reference/kubernetes-api/policy-resources/network-policy-v1/
- AKS, Secure traffic between pods with network policies: https://learn.microsoft.com/azure/aks/use-network-policies
"""

from mlops_lint.model.distributed import is_distributed, pod_count, replicas_phrase, template_anchor
from mlops_lint.model.k8s import Workload
from mlops_lint.rule import WORKLOAD, Finding, rule


def _reason(flow) -> str:
    from mlops_lint.model.netpol import names

    t = flow.traffic
    if t.ingress.isolated and not t.ingress.ports.only("TCP"):
        return f"ingress to the {flow.destination.describe()} is isolated by {names(t.ingress.isolating)}, " \
               f"and no rule admits the {flow.source.describe()}"
    if t.egress.isolated and not t.egress.ports.only("TCP"):
        return f"egress of the {flow.source.describe()} is isolated by {names(t.egress.isolating)}, " \
               f"and no rule lets them reach the {flow.destination.describe()}"
    return (f"ingress ({names(t.ingress.isolating) or 'not isolated'}) allows {t.ingress.ports.describe('TCP')} "
            f"and egress ({names(t.egress.isolating) or 'not isolated'}) allows {t.egress.ports.describe('TCP')}, "
            "which do not overlap")


@rule(code="DST007", name="network-policy-blocks-replicas", severity="error", scope=WORKLOAD,
      tags=("distributed", "networking", "network-policy"))
def check(workload: Workload, ctx):
    if not is_distributed(workload) or not ctx.index.of_kind("NetworkPolicy"):
        return
    # imported here: a project with no NetworkPolicy (as most one-file runs) never loads the model
    from mlops_lint.model.netpol import CLUSTER_DNS, egress, endpoint_of, names, policies_near, replica_flows, selecting
    found = policies_near(ctx.index, workload.pods[0])
    if not found or not any(selecting(found, endpoint_of(pod)) for pod in workload.pods):
        return
    flows = replica_flows(workload, found)
    for destination in workload.pods:
        blocked = [f for f in flows if f.destination is destination and not f.traffic.ports.only("TCP")]
        if blocked:
            span, node = template_anchor(destination)
            if all(f.source is destination for f in blocked):
                between = f"among the {destination.describe()}"
            else:
                between = f"from the {replicas_phrase(f.source for f in blocked)} to the {destination.describe()}"
            yield Finding(span, f"NetworkPolicies block traffic {between} of this {workload.kind}: "
                                f"{_reason(blocked[0])}; allow all traffic among the job's replicas",
                          node=node + ("ingress",))
    for source in workload.pods:
        if pod_count(source) == 0:
            continue
        dns = egress(found, endpoint_of(source), CLUSTER_DNS)
        if dns.isolated and not dns.ports.contains("UDP", 53):
            span, node = template_anchor(source)
            yield Finding(span, f"egress of the {source.describe()} of this {workload.kind} is isolated by "
                                f"{names(dns.isolating)} without DNS: allow UDP and TCP port 53 to kube-system "
                                "pods labelled k8s-app: kube-dns", node=node + ("dns",))
