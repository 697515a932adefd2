"""KAITO objects in a project whose cluster never enables the AI toolchain operator (KAITO) add-on.

## What it does
Joins the project's KAITO objects (`Workspace`, `InferenceSet` and `RAGEngine` of `kaito.sh`)
with its cluster definitions and whether each enables the AI toolchain operator add-on:
`az aks create` / `az aks update` in shell scripts (`--enable-ai-toolchain-operator`,
`--disable-ai-toolchain-operator`), `azurerm_kubernetes_cluster` in Terraform
(`ai_toolchain_operator_enabled`), `managedClusters` in Bicep or an ARM template
(`aiToolchainOperatorProfile.enabled`). It fires at the command or resource that creates a cluster
without the add-on (the default everywhere), or at the attribute that turns it off, naming a
KAITO object that needs it.

Left alone: a project with no cluster definition (the cluster is made elsewhere); a cluster
whose setting is unknown (a variable without a default, words of unknown value); a project where
another cluster that governs the same objects enables the add-on; a project that installs KAITO
itself, with a script's `helm install` (or a Terraform `helm_release`) of KAITO's `workspace` or
`ragengine` chart or with
KAITO's `CustomResourceDefinition`s (`*.kaito.sh`) among its manifests. In a folder of unrelated
repositories linted by path, a cluster definition counts only for the objects of its own
top-level folder (`linter.model.locality`). In the `aks-automatic` profile the project's scripts
and templates do not describe the cluster, so nothing is judged.

## Why is this bad?
The article: "Enable the KAITO add-on or install a compatible KAITO release before applying a
Workspace." Without it the cluster has neither the `kaito.sh` custom resource definitions nor
the controller that reconciles them: `kubectl apply` of the Workspace fails with "no matches for
kind \"Workspace\" in version \"kaito.sh/v1beta1\"" (ensure CRDs are installed first), or, where
the CRDs linger without the controller, the Workspace is accepted and nothing happens: no GPU
node is provisioned, no inference or tuning job starts, and the pipeline waits on a status that
never comes.

## Example
```sh
az aks create --resource-group ml-rg --name ml-aks --enable-oidc-issuer --generate-ssh-keys
```

```yaml
apiVersion: kaito.sh/v1beta1
kind: Workspace
metadata:
  name: workspace-phi-3-mini
resource:
  instanceType: Standard_NC24ads_A100_v4
  labelSelector:
    matchLabels:
      apps: phi-3-mini
inference:
  preset:
    name: phi-3-mini-4k-instruct
```

Use instead:
```sh
az aks create --resource-group ml-rg --name ml-aks --enable-oidc-issuer --enable-ai-toolchain-operator \
  --generate-ssh-keys
```

In Terraform `ai_toolchain_operator_enabled = true`; in Bicep
`aiToolchainOperatorProfile: { enabled: true }`; or install KAITO with its Helm chart.

## Known problems
- The add-on enabled outside the project (the portal, another repository's pipeline), or KAITO
  installed by a GitOps tool, is not seen: the project's own cluster definition is taken at its word.
- The add-on's KAITO release may lack a kind the project uses (RAGEngine ships as its own chart);
  that is not checked. There is no automatic fix: enabling the add-on is a change to the cluster.

## References
- AKS, deploy an AI model with the AI toolchain operator (KAITO): https://learn.microsoft.com/azure/aks/ai-toolchain-operator
- KAITO installation (Helm charts): https://github.com/kaito-project/kaito
- azurerm_kubernetes_cluster `ai_toolchain_operator_enabled`: https://registry.terraform.io/providers/hashicorp/azurerm/latest/docs/resources/kubernetes_cluster#ai_toolchain_operator_enabled
"""

from __future__ import annotations

from msgspec import Struct

from mlops_lint.model.cluster import cluster_of
from mlops_lint.model.cluster.features import (AI_TOOLCHAIN, cluster_label, cluster_name, first_and_more, hint_for,
                                               needs_unmet)
from mlops_lint.model.installs import KAITO, project_installs
from mlops_lint.model.locality import together, unit_of
from mlops_lint.rule import PROJECT, Finding, rule

GROUP = "kaito.sh"
KINDS = frozenset({"Workspace", "InferenceSet", "RAGEngine"})


class KaitoObject(Struct, frozen=True):
    """A KAITO object: how messages name it, and where."""

    what: str
    path: str
    line: int


def kaito_objects(obj, ctx):
    """The facts KAI006 collects from every file: KAITO's objects (kind first)."""
    if obj.kind in KINDS and obj.group == GROUP:
        yield KaitoObject(f"{obj.kind} `{obj.name}`", obj.path, obj.span.line)


def _installs(ctx) -> list[str]:
    """Where the project installs KAITO itself: Helm charts in scripts, KAITO's CRDs in manifests."""
    paths = [i.path for i in project_installs(ctx.index, terraform=True) if i.component == KAITO]
    for crd in ctx.index.of_kind("CustomResourceDefinition"):
        spec = crd.body.get("spec")
        if isinstance(spec, dict) and spec.get("group") == GROUP:
            paths.append(crd.path)
    return paths


def _named(objects: list[KaitoObject]) -> str:
    return first_and_more(objects, lambda first: f"{first.what} ({first.path}:{first.line})")


def _hint(anchor) -> str:
    name = cluster_name(anchor)
    return "enable the AI toolchain operator add-on: " + hint_for(
        anchor,
        f"`az aks update --resource-group <rg> --name {name} --enable-ai-toolchain-operator`"
        + (" (or add the flag to `az aks create`)" if anchor.creates else ""),
        "`ai_toolchain_operator_enabled = true` in the azurerm_kubernetes_cluster",
        "`aiToolchainOperatorProfile: { enabled: true }` in the cluster's properties",
        '`"aiToolchainOperatorProfile": {"enabled": true}` in the cluster\'s properties',
    ) + ", or install KAITO with its Helm chart"


@rule(code="KAI006", name="kaito-not-enabled", severity="error", scope=PROJECT, collect=kaito_objects,
      tags=("kaito", "aks"))
def check(found, ctx):
    objects = sorted((fact for fact in found if isinstance(fact, KaitoObject)), key=lambda o: (o.path, o.line))
    if not objects:
        return
    settings = [s for s in cluster_of(ctx.index, ctx.config).features if s.feature == AI_TOOLCHAIN]
    if not settings:
        return  # no cluster definition in the project
    installs = _installs(ctx)
    unit = unit_of(ctx.index, ctx.config, [*(o.path for o in objects), *(s.origin.path for s in settings), *installs])
    for anchor, governed in needs_unmet(settings, AI_TOOLCHAIN, objects, unit):
        governed = [o for o in governed if not any(together(unit, path, o.path) for path in installs)]
        if not governed:
            continue  # the project installs KAITO itself
        said = "turns the AI toolchain operator (KAITO) add-on off" if anchor.written \
            else "is created without the AI toolchain operator (KAITO) add-on"
        yield Finding(
            anchor.origin.target,
            f"{cluster_label(anchor)} {said} ({anchor.how}), and the project installs no KAITO release, but it "
            f"applies {_named(governed)}: the cluster has no `kaito.sh` resource definitions or controller, so "
            "applying the object fails (or nothing reconciles it) and no model is deployed or tuned",
            path=anchor.origin.path, node=("cluster", str(anchor.cluster), AI_TOOLCHAIN), fix=_hint(anchor),
        )
