"""The profile given to the linter contradicts the cluster the project makes.

## What it does
mlops-lint infers the `aks-automatic` profile when the project's scripts or IaC make its
cluster AKS Automatic or turn on node auto-provisioning (NAP), and says so in a note. A profile
given with `--profile` or `profile:` in the config always wins; this rule reports where the
project's own cluster says otherwise:

- with `aks-standard` given: `az aks create --sku automatic`, `--node-provisioning-mode Auto`
  (on `az aks create` or `az aks update`), Terraform `sku_tier = "Automatic"`,
  `sku { name = "Automatic" }` or `node_provisioning_profile { mode = "Auto" }`, Bicep/ARM
  `sku: { name: 'Automatic' }` or `nodeProvisioningProfile: { mode: 'Auto' }`. The finding
  points at the value;
- with `aks-automatic` given: an `az aks create`, `azurerm_kubernetes_cluster` or
  `managedClusters` resource with neither (and no NAP update of that cluster), or an
  `az aks update --node-provisioning-mode Manual` (which turns NAP off). The finding points at the
  command or the resource (at the value for `Manual`).

Scripts are read in order (files by path, then line by line): node auto-provisioning that a
later `--node-provisioning-mode Manual` of the same cluster turns off is not reported under
`aks-standard`, and is not what the profile is inferred from.

A value the project does not determine (`--sku "$SKU"`) is not judged. This rule was asked for
as LNT003 in issue 37; LNT003 is the expired-suppression rule, so it is LNT005.

## Why is this bad?
The profile decides what is checked. In `aks-standard` the node-pool rules (`AKS…`) and the
placement rules judge pools the user owns; on AKS Automatic "node provisioning is managed from
pod requests" and the article tells Automatic users to "focus on accurate pod requests and
supported constraints instead of configuring a manual GPU node pool autoscaler", so those
findings are noise there, while the NAP rules (NAP001-NAP004) and the Deployment Safeguards
messages of RES001/RES002 only run in `aks-automatic`. The reverse hides the AKS rules from a
cluster whose pools the user does own. A profile that contradicts the project is usually a
leftover from before the cluster changed.

## Example
```bash
# mlops-lint --profile aks-standard .
az aks create --resource-group "$RESOURCE_GROUP" --name "$AKS_CLUSTER" --sku automatic
```

Use instead:
```bash
# mlops-lint .   (aks-automatic is inferred from --sku automatic)
az aks create --resource-group "$RESOURCE_GROUP" --name "$AKS_CLUSTER" --sku automatic
```

## Known problems
- The profile is not inferred from an ARM template (`.json`; inferring reads the project's
  scripts, Terraform and Bicep only, before the run): this rule reports such a template under
  an explicit `aks-standard`, and the default profile stays `aks-standard` for it.
- A project that makes an Automatic cluster and a Standard one is linted as `aks-standard`
  (a note says so); given a profile, the cluster of the other kind is reported.
- Only the project's own files are read: a cluster made elsewhere (a portal, another
  repository) says nothing, and the profile given is taken as it is.

## References
- AKS Automatic overview: https://learn.microsoft.com/azure/aks/intro-aks-automatic
- AKS node auto-provisioning: https://learn.microsoft.com/azure/aks/node-auto-provisioning
"""

from mlops_lint.profiles import AUTOMATIC_PROFILE, explicit, given_by
from mlops_lint.model.cluster.modes import live, may_be_same, modes_of
from mlops_lint.model.cluster.pools import AUTOMATIC, MANUAL, NAP, STANDARD
from mlops_lint.rule import SHELL, Finding, rule


@rule(code="LNT005", name="profile-mismatch", severity="warning", scope=SHELL, tags=("aks",))
def check(source, ctx):
    config = ctx.config
    if not explicit(config):
        return
    path = getattr(source, "path", None)
    modes = modes_of(ctx.index, config)
    if not any(m.origin.path == path for m in modes):
        return
    automatic = config.profile == AUTOMATIC_PROFILE
    modes = live(modes)
    managed = [m for m in modes if m.kind in (AUTOMATIC, NAP)]
    for mode in modes:
        if mode.origin.path != path:
            continue
        if not automatic and mode.kind in (AUTOMATIC, NAP):
            what = "an AKS Automatic" if mode.kind == AUTOMATIC else "a node auto-provisioning"
            yield Finding(mode.origin.target,
                          f"{mode.how} makes {what} cluster but the profile is aks-standard ({given_by(config)}): "
                          "the AKS node-pool and placement rules judge pools NAP never makes and the NAP rules do not "
                          "run; give --profile aks-automatic, or drop the profile to have it inferred",
                          node=("cluster", str(mode.cluster), "profile"))
        elif automatic and mode.kind == MANUAL and not any(may_be_same(mode.cluster, m.cluster) for m in managed):
            yield Finding(mode.origin.target,
                          f"{mode.how} turns node auto-provisioning off, making an AKS Standard cluster, but the "
                          f"profile is aks-automatic ({given_by(config)}): the AKS node-pool rules (AKS001-AKS007, "
                          "GPU006) are off for the pools this project then owns; give --profile aks-standard, or drop "
                          "the update",
                          node=("cluster", str(mode.cluster), "profile"))
        elif automatic and mode.kind == STANDARD and not any(may_be_same(mode.cluster, m.cluster) for m in managed):
            yield Finding(mode.origin.target,
                          f"{mode.how} makes an AKS Standard cluster but the profile is aks-automatic "
                          f"({given_by(config)}): the AKS node-pool rules (AKS001-AKS007, GPU006) are off for pools "
                          "this project owns; give --profile aks-standard, or make the cluster with `--sku automatic`",
                          node=("cluster", str(mode.cluster), "profile"))

