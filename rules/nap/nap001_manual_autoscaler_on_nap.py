"""Cluster-autoscaler settings in a project whose nodes node auto-provisioning makes.

## What it does
In a project linted in the `aks-automatic` profile (given, or inferred from `az aks create --sku
automatic` or `--node-provisioning-mode Auto`, see LNT005), or on a cluster the project itself
makes AKS Automatic or node auto-provisioned (NAP), flags the manual autoscaler settings:

- on `az aks create`, `az aks update`, `az aks nodepool add` and `az aks nodepool update`:
  `--enable-cluster-autoscaler` (`-e`), `--update-cluster-autoscaler` (`-u`), `--min-count`,
  `--max-count` (one finding per command, at the first of them, naming all), and
  `--cluster-autoscaler-profile` (`--ca-profile`, its own finding);
- in Terraform: `auto_scaling_enabled = true` (or `enable_auto_scaling`) of a node pool or a
  cluster's `default_node_pool`, and a cluster's `auto_scaler_profile` block;
- in Bicep and ARM templates: `enableAutoScaling: true` of an `agentPoolProfiles` item or an
  `agentPools` resource, and a cluster's `autoScalerProfile`.

Only the commands and resources of that cluster are judged when the project makes several (a
Terraform or Bicep cluster by its literal `name`, a node pool by its `kubernetes_cluster_id`
reference, or its `parent`, to a cluster of the same file; a name the project does not determine
may be any of them); `--disable-cluster-autoscaler` (the
repair) is not flagged; Terraform and Bicep values are judged when literal.

## Why is this bad?
On AKS Automatic "node provisioning is managed from pod requests": Karpenter (NAP) creates nodes
to fit pending pods, and the article says so plainly: "AKS Automatic manages node provisioning
and scaling as part of the service baseline. Focus on accurate pod requests and supported
constraints instead of configuring a manual GPU node pool autoscaler." NAP does not read the
cluster autoscaler profile (AKS's migration guide maps each key to a NodePool setting or "not
applicable"), so `--cluster-autoscaler-profile` there changes nothing while reading as if it
tuned scale-down; a cluster-autoscaler pool beside NAP is a second autoscaler on the same
pending pods (AKS warns of over-provisioning), and on Automatic the managed system pool is not
the user's to scale. Either way the script does not do what it says.

## Example
```bash
az aks create --resource-group "$RESOURCE_GROUP" --name "$AKS_CLUSTER" --sku automatic
az aks nodepool add --resource-group "$RESOURCE_GROUP" --cluster-name "$AKS_CLUSTER" \
  --name gpunp --node-vm-size Standard_NC4as_T4_v3 \
  --enable-cluster-autoscaler --min-count 0 --max-count 4
```

Use instead (a NodePool that lets NAP make GPU nodes, with its limits):
```yaml
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  limits:
    nvidia.com/gpu: 4
  template:
    spec:
      nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}
      requirements:
      - {key: karpenter.azure.com/sku-family, operator: In, values: [N]}
```

## Known problems
- A project migrating from the cluster autoscaler to NAP runs both for a while; suppress the
  finding on the commands of that migration (`# mlops-lint: disable=NAP001 until=… migrating`).
- Terraform and Bicep values from variables are not judged.

## References
- AKS, Node auto-provisioning: https://learn.microsoft.com/azure/aks/node-auto-provisioning
- AKS, Migrate from the cluster autoscaler to node auto-provisioning: https://learn.microsoft.com/azure/aks/migrate-from-autoscaler-to-node-auto-provisioning
- AKS Automatic overview: https://learn.microsoft.com/azure/aks/intro-aks-automatic
"""

from mlops_lint.model.azcli import ShellScript
from mlops_lint.model.cluster.modes import managed_cluster
from mlops_lint.rule import SHELL, Finding, rule

_COMMANDS = (("aks", "create"), ("aks", "update"), ("aks nodepool", "add"), ("aks nodepool", "update"))
_SCALING = ("--enable-cluster-autoscaler", "--update-cluster-autoscaler", "--min-count", "--max-count")
_PROFILE = ("--cluster-autoscaler-profile", "--ca-profile")
_NAP = "node auto-provisioning makes the nodes from pod requests"


@rule(code="NAP001", name="manual-autoscaler-on-nap", severity="error", scope=SHELL, tags=("aks", "autoscaling"))
def check(source, ctx):
    managed = managed_cluster(ctx.index, ctx.config)
    if managed is None:
        return
    if not isinstance(source, ShellScript):
        yield from _iac(source, managed)
        return
    for az in source.az_commands:
        if not any(az.is_(group, verb) for group, verb in _COMMANDS):
            continue
        cluster = az.flag("--name") if az.group == "aks" else az.flag("--cluster-name")
        if not managed.covers(cluster.value.value if cluster is not None and cluster.value is not None else None):
            continue
        command = f"az {az.group} {az.verb}"
        flags = [flag for flag in (az.flag(name) for name in _SCALING) if flag is not None]
        if flags:
            first = min(flags, key=lambda f: (f.span.line, f.span.col))
            named = ", ".join(f"`{f.name}`" for f in sorted(flags, key=lambda f: (f.span.line, f.span.col)))
            yield Finding(first.span,
                          f"{named} on `{command}`: {managed.why}, where {_NAP}; a cluster-autoscaler pool beside it "
                          "is a second autoscaler on the same pending pods",
                          node=(az.group, az.verb, "--enable-cluster-autoscaler"),
                          fix="drop the autoscaler flags and let NAP provision (a NodePool's requirements and `limits` "
                              "bound what it makes)")
        profile = az.flag(*_PROFILE)
        if profile is not None:
            yield Finding(profile.span,
                          f"`{profile.name}` on `{command}`: {managed.why}, and node auto-provisioning does not read "
                          "the cluster autoscaler profile: these settings change nothing",
                          node=(az.group, az.verb, "--cluster-autoscaler-profile"),
                          fix="drop it; NAP's scale-down is the NodePools' `disruption` settings")


def _literal_name(block):
    """A Terraform or Bicep cluster's `name` when it is a literal string, else None (any)."""
    attr = block.attrs.get("name")
    return attr.expr[1] if attr is not None and attr.expr[0] == "lit" and isinstance(attr.expr[1], str) else None


def _is_cluster(kind: str) -> bool:
    """A Terraform or Bicep resource type that makes a cluster."""
    return kind == "azurerm_kubernetes_cluster" or (kind.startswith("Microsoft.ContainerService/managedClusters")
                                                    and "/agentPools" not in kind)


def _cluster_name(block, names: dict):
    """The name of the cluster a Terraform or Bicep cluster or node pool block belongs to (None:
    not known): a cluster's literal `name`; a Terraform pool's by its `kubernetes_cluster_id`
    reference, a Bicep pool's by its `parent`, to a cluster of the same file."""
    if _is_cluster(block.labels[0]):
        return names.get(block.labels[1]) if len(block.labels) > 1 else None
    attr = block.attrs.get("kubernetes_cluster_id") or block.attrs.get("parent")
    if attr is None or attr.expr[0] != "ref" or not attr.expr[1]:
        return None
    if attr.expr[1][0] == "azurerm_kubernetes_cluster":
        return names.get(attr.expr[1][1]) if len(attr.expr[1]) >= 2 else None
    return names.get(attr.expr[1][0]) if len(attr.expr[1]) == 1 else None


def _true(expr) -> bool:
    return expr[0] == "lit" and expr[1] is True


def _iac(source, managed):
    """Terraform's and Bicep's autoscaling switches and profiles (literal values), of the clusters
    ``managed`` covers (a Terraform cluster's literal `name`, a pool's by its `kubernetes_cluster_id`
    reference to a cluster of the same file; any cluster when the name is not known there)."""
    blocks = getattr(source, "blocks", ())
    names = {block.labels[1]: _literal_name(block) for block in blocks
             if block.type == "resource" and len(block.labels) > 1 and _is_cluster(block.labels[0])}
    for block in blocks:
        if block.type != "resource" or not block.labels:
            continue
        kind = block.labels[0]
        if not managed.covers(_cluster_name(block, names)):
            continue  # a Standard cluster beside the NAP one, or its pool
        if kind == "azurerm_kubernetes_cluster":
            profile = block.block("auto_scaler_profile")
            if profile is not None:
                yield Finding(profile.span, f"`auto_scaler_profile`: {managed.why}, and node auto-provisioning does "
                              "not read the cluster autoscaler profile: these settings change nothing",
                              node=("cluster", block.labels[1], "auto_scaler_profile"),
                              fix="drop it; NAP's scale-down is the NodePools' `disruption` settings")
            pools = [block.block("default_node_pool")]
        elif kind == "azurerm_kubernetes_cluster_node_pool":
            pools = [block]
        elif kind.startswith("Microsoft.ContainerService/managedClusters"):
            yield from _bicep(block, managed)
            continue
        else:
            continue
        for pool in pools:
            for name in ("auto_scaling_enabled", "enable_auto_scaling"):
                attr = pool.attrs.get(name) if pool is not None else None
                if attr is not None and _true(attr.expr):
                    yield Finding(attr.span, f"`{name} = true`: {managed.why}, where {_NAP}; a cluster-autoscaler "
                                  "pool beside it is a second autoscaler on the same pending pods",
                                  node=("pool", block.labels[1], name), fix=f"drop `{name}`, `min_count` and `max_count`")


def _field(obj, key):
    if obj is None or obj[0] != "object" or len(obj) < 3:
        return None
    for (k, value), (key_span, value_span) in zip(obj[1], obj[2]):
        if k == ("lit", key):
            return value, key_span, value_span
    return None


def _bicep(block, managed):
    properties = block.attrs.get("properties")
    properties = properties.expr if properties is not None else None
    pools = []
    if block.labels[0] == "Microsoft.ContainerService/managedClusters":
        profile = _field(properties, "autoScalerProfile")
        if profile is not None:
            yield Finding(profile[1], f"`autoScalerProfile`: {managed.why}, and node auto-provisioning does not read "
                          "the cluster autoscaler profile: these settings change nothing",
                          node=("cluster", block.labels[1], "autoScalerProfile"),
                          fix="drop it; NAP's scale-down is the NodePools' `disruption` settings")
        items = _field(properties, "agentPoolProfiles")
        if items is not None and items[0][0] == "tuple":
            pools = [item for item in items[0][1] if item[0] == "object"]
    elif block.labels[0] == "Microsoft.ContainerService/managedClusters/agentPools":
        pools = [properties]
    for pool in pools:
        found = _field(pool, "enableAutoScaling")
        if found is not None and _true(found[0]):
            yield Finding(found[1], f"`enableAutoScaling: true`: {managed.why}, where {_NAP}; a cluster-autoscaler "
                          "pool beside it is a second autoscaler on the same pending pods",
                          node=("pool", block.labels[1], "enableAutoScaling"),
                          fix="drop `enableAutoScaling`, `minCount` and `maxCount`")
