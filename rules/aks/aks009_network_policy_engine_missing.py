"""NetworkPolicies in a project whose cluster runs no network policy engine: they are not enforced.

## What it does
Joins the project's `NetworkPolicy` objects (`networking.k8s.io`) with its cluster definitions and
the network policy engine each one chooses:

- `az aks create` / `az aks update` in shell scripts: `--network-policy azure|calico|cilium`
  (`none`, or no flag on `az aks create`, is no engine), or `--network-dataplane cilium`
  (Azure CNI powered by Cilium enforces policies itself);
- `azurerm_kubernetes_cluster` in Terraform: `network_profile { network_policy }`, or
  `network_data_plane = "cilium"` (`ebpf_data_plane` in azurerm 3);
- `managedClusters` in Bicep or an ARM template: `networkProfile.networkPolicy`, or
  `networkProfile.networkDataplane: 'cilium'`.

It fires at the command or resource that creates a cluster without an engine (or at the
`--network-policy none` / `network_policy` value that leaves it without one), naming a
NetworkPolicy it would have to enforce. A project with no cluster definition is not judged (the
cluster is made elsewhere), nor a cluster whose engine is unknown (a variable without a default,
words of unknown value), nor a project where another cluster that governs the same policies has
an engine. A later `az aks update --network-policy …` gives the cluster one; the network plugin
`none` (bring your own CNI) leaves the engine unknown, and a script's `helm install` (or a
Terraform `helm_release`) of Cilium's or Calico's chart (`cilium/cilium`,
`projectcalico/tigera-operator`) installs one. In a folder of
unrelated repositories linted by path, a cluster definition counts only for the policies of its
own top-level folder (`linter.model.locality`). In the `aks-automatic` profile nothing is judged:
AKS Automatic runs Cilium.

## Why is this bad?
AKS creates a cluster without a network policy engine unless one is chosen. Kubernetes accepts
NetworkPolicy objects on such a cluster and stores them, but nothing enforces them: every pod
can still reach every other pod. The article asks for "network isolation" for compliance
(HIPAA) and relies on NetworkPolicies to confine distributed training traffic ("If network
policy is enabled, allow all required rendezvous and NCCL traffic among replicas", followed by
its `allow-pytorch-nccl` policy). A default-deny policy that looks like isolation in review
isolates nothing, and the project's tests pass against a network that is open.

## Example
```sh
az aks create --resource-group ml-rg --name ml-aks --network-plugin azure --generate-ssh-keys
```

```yaml
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: default-deny
  namespace: ml-training
spec:
  podSelector: {}
  policyTypes: [Ingress]
```

Use instead:
```sh
az aks create --resource-group ml-rg --name ml-aks --network-plugin azure --network-policy azure \
  --generate-ssh-keys
```

In Terraform `network_profile { network_plugin = "azure"  network_policy = "azure" }`; in Bicep
`networkProfile: { networkPlugin: 'azure', networkPolicy: 'azure' }` (or `cilium` with the Cilium
dataplane).

## Known problems
- An engine enabled outside the project (the portal, another repository's pipeline) is not seen:
  the project's own cluster definition is taken at its word.
- Several clusters are not told apart by the manifests: the policies are left alone when any
  cluster that governs them has an engine or an unknown one.
- Whether the chosen engine supports the network plugin (Azure NPM with kubenet, for example) is
  not checked. There is no automatic fix: choosing an engine is a change to the cluster.

## References
- AKS, secure traffic between pods with network policies: https://learn.microsoft.com/azure/aks/use-network-policies
- AKS, Azure CNI powered by Cilium: https://learn.microsoft.com/azure/aks/azure-cni-powered-by-cilium
- azurerm_kubernetes_cluster `network_profile`: https://registry.terraform.io/providers/hashicorp/azurerm/latest/docs/resources/kubernetes_cluster#network_policy
"""

from __future__ import annotations

from mlops_lint.model.cluster import cluster_of
from mlops_lint.model.cluster.features import (NETWORK_POLICY, cluster_label, cluster_name, first_and_more, hint_for,
                                               needs_unmet)
from mlops_lint.model.installs import POLICY_CNI, project_installs
from mlops_lint.model.locality import together, unit_of
from mlops_lint.rule import PROJECT, Finding, rule

GROUP = "networking.k8s.io"


class _Policy:
    """A NetworkPolicy as the join sees it: its file and how messages name it."""

    __slots__ = ("path", "line", "name")

    def __init__(self, obj):
        self.path, self.line, self.name = obj.path, obj.span.line, obj.name


def _named(policies: list[_Policy]) -> str:
    return first_and_more(policies, lambda first: f"NetworkPolicy `{first.name}` ({first.path}:{first.line})")


def _hint(anchor) -> str:
    name = cluster_name(anchor)
    return "choose a network policy engine: " + hint_for(
        anchor,
        ("`--network-policy azure` (or `calico`; `cilium` with `--network-dataplane cilium`) on `az aks create`"
         if anchor.creates else
         f"`az aks update --resource-group <rg> --name {name} --network-policy azure` (or `calico`, `cilium`)"),
        '`network_profile { network_policy = "azure" }` (or "calico"; "cilium" with `network_data_plane = "cilium"`)',
        "`networkProfile: { networkPolicy: 'azure' }` (or 'calico'; 'cilium' with `networkDataplane: 'cilium'`)",
        '`"networkProfile": {"networkPolicy": "azure"}` (or "calico"; "cilium" with `"networkDataplane": "cilium"`)')


@rule(code="AKS009", name="network-policy-engine-missing", severity="warning", scope=PROJECT,
      requires=("NetworkPolicy",), tags=("aks", "security", "network"))
def check(_found, ctx):
    policies = [_Policy(obj) for obj in ctx.index.of_kind("NetworkPolicy") if obj.group == GROUP]
    if not policies:
        return
    settings = [s for s in cluster_of(ctx.index, ctx.config).features if s.feature == NETWORK_POLICY]
    if not settings:
        return  # no cluster definition in the project
    policies.sort(key=lambda p: (p.path, p.line))
    engines = [i.path for i in project_installs(ctx.index, terraform=True) if i.component == POLICY_CNI]
    unit = unit_of(ctx.index, ctx.config, [*(p.path for p in policies), *(s.origin.path for s in settings), *engines])
    for anchor, governed in needs_unmet(settings, NETWORK_POLICY, policies, unit):
        if any(together(unit, path, anchor.origin.path) for path in engines):
            continue  # the project installs a CNI that enforces policies (Cilium, Calico)
        said = "has no network policy engine" if anchor.written else "is created without a network policy engine"
        yield Finding(
            anchor.origin.target,
            f"{cluster_label(anchor)} {said} ({anchor.how}), but the project applies {_named(governed)} to it: "
            "Kubernetes stores the policies and nothing enforces them, so every pod still reaches every other pod",
            path=anchor.origin.path, node=("cluster", str(anchor.cluster), NETWORK_POLICY), fix=_hint(anchor),
        )
