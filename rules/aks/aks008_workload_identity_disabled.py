"""Workloads use Azure workload identity on a cluster the project creates without it.

## What it does
Joins the manifests that rely on Microsoft Entra Workload ID with the cluster definitions of the
project:

- a pod template labelled `azure.workload.identity/use: "true"` (what the workload identity
  webhook mutates), or a ServiceAccount annotated `azure.workload.identity/client-id` (the identity
  its pods exchange their token for);
- the clusters the project makes: `az aks create` / `az aks update` in shell scripts
  (`--enable-workload-identity`, `--enable-oidc-issuer`), `azurerm_kubernetes_cluster` in
  Terraform (`workload_identity_enabled`, `oidc_issuer_enabled`), `managedClusters` in Bicep or an
  ARM template (`securityProfile.workloadIdentity.enabled`, `oidcIssuerProfile.enabled`).

It fires at the command or resource that creates a cluster without workload identity (AKS's,
azurerm's and the API's default; a later `az aks update --enable-workload-identity` turns it on),
or at the attribute that turns it or the OIDC issuer off, naming a workload that needs it. A
project with no cluster definition is not judged (the cluster is made elsewhere), nor a cluster
whose setting is unknown (a variable without a default, words of unknown value), nor a project
where another cluster that governs the same manifests has it on. The OIDC issuer counts as off
only when written off: AKS enables it by default on clusters created with Kubernetes 1.34 or
later. The webhook installed by the project itself (azure-workload-identity's
`workload-identity-webhook` Helm chart, by a script or a Terraform `helm_release`, or its
`MutatingWebhookConfiguration`) stands in for the add-on. In a folder of unrelated repositories linted by path, a cluster definition counts only for
the manifests of its own top-level folder (`linter.model.locality`). In the `aks-automatic` profile
nothing is judged: AKS Automatic preconfigures workload identity and the OIDC issuer.

## Why is this bad?
The article's KAITO section asks for "private access and workload identity where supported" for
the training data and the model registry, and its security section for "access controls" and
"access management policies". Workload identity only works when the cluster runs it: without the
add-on no webhook mutates the labelled pods, so they get no projected service account token, no
`AZURE_CLIENT_ID`, `AZURE_TENANT_ID` or `AZURE_FEDERATED_TOKEN_FILE`, and every Azure SDK call of
the job (reading the dataset from Blob storage, pushing the model to the registry) fails to
authenticate; without the OIDC issuer Microsoft Entra ID cannot verify the cluster's tokens and
no federated credential can trust it. The job fails at run time, typically after it was scheduled
on an expensive GPU node.

## Example
```sh
az aks create --resource-group ml-rg --name ml-aks --node-vm-size Standard_D4s_v5 --generate-ssh-keys
```

```yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: fine-tune
spec:
  template:
    metadata:
      labels:
        azure.workload.identity/use: "true"
    spec:
      serviceAccountName: training-sa
      restartPolicy: Never
      containers:
      - name: trainer
        image: mlacr.azurecr.io/trainer:1.4.2
```

Use instead:
```sh
az aks create --resource-group ml-rg --name ml-aks --node-vm-size Standard_D4s_v5 --generate-ssh-keys \
  --enable-oidc-issuer --enable-workload-identity
```

In Terraform `oidc_issuer_enabled = true` and `workload_identity_enabled = true`; in Bicep
`oidcIssuerProfile: { enabled: true }` and `securityProfile: { workloadIdentity: { enabled: true } }`.

## Fix safety
Unsafe. For a cluster made by `az aks create` without the flags (and that no other command of the
project turns off), the fix appends `--enable-oidc-issuer --enable-workload-identity` (only the
second when the command already enables the issuer) to that command, after its last word. It
changes the cluster beyond the manifests: AKS installs the workload identity webhook, and the OIDC
issuer cannot be turned off once on. Terraform, Bicep and ARM definitions and `az aks update`
commands get the hint only.

## Known problems
- Workload identity enabled outside the project (the portal, another repository's pipeline) is
  not seen: the project's own cluster definition is taken at its word.
- Several clusters are not told apart by the manifests: a workload is left alone when any
  cluster that governs it has workload identity on or unknown.
- Workload identity used without the label (a pod that mounts the projected token itself) is
  not seen.

## References
- AKS, deploy and configure workload identity: https://learn.microsoft.com/azure/aks/workload-identity-deploy-cluster
- AKS, OIDC issuer: https://learn.microsoft.com/azure/aks/use-oidc-issuer
- azurerm_kubernetes_cluster `workload_identity_enabled`: https://registry.terraform.io/providers/hashicorp/azurerm/latest/docs/resources/kubernetes_cluster#workload_identity_enabled
"""

from __future__ import annotations

from msgspec import Struct

from mlops_lint.fix import Plan, Replace
from mlops_lint.model.cluster import cluster_of
from mlops_lint.model.cluster.features import (OIDC_ISSUER, WORKLOAD_IDENTITY, cluster_label, cluster_name,
                                               first_and_more, hint_for, needs_unmet)
from mlops_lint.model.installs import WORKLOAD_IDENTITY_WEBHOOK, project_installs
from mlops_lint.model.locality import together, unit_of
from mlops_lint.rule import PROJECT, Finding, rule

USE_LABEL = "azure.workload.identity/use"
CLIENT_ID = "azure.workload.identity/client-id"
WEBHOOK = "mutation.azure-workload-identity.io"  # the webhook's name in its MutatingWebhookConfiguration


class NeedsIdentity(Struct, frozen=True):
    """A manifest that relies on workload identity: how messages name it, and where."""

    what: str
    why: str
    path: str
    line: int


class SelfManagedWebhook(Struct, frozen=True):
    """azure-workload-identity's mutating webhook, deployed by the project's manifests."""

    path: str


def identity_facts(obj, ctx):
    """The facts AKS008 collects from every file (kind first: most objects are neither)."""
    kind = obj.kind
    if kind == "ServiceAccount":
        annotations = obj.metadata.get_map("annotations") if obj.group == "" and obj.metadata is not None else None
        client = annotations.get(CLIENT_ID) if annotations is not None else None
        if isinstance(client, str) and client.strip():
            yield NeedsIdentity(f"ServiceAccount `{obj.name}`", f"annotated `{CLIENT_ID}`", obj.path,
                                annotations.key_span(CLIENT_ID).line)
        return
    if kind == "MutatingWebhookConfiguration":
        hooks = obj.body.get("webhooks")
        if isinstance(hooks, list) and any(isinstance(h, dict) and h.get("name") == WEBHOOK for h in hooks):
            yield SelfManagedWebhook(obj.path)
        return
    workload = ctx.index.workload(obj)
    if workload is None:
        return
    for pod in workload.pods:
        value = pod.labels.get(USE_LABEL)
        if value is not None and str(value).strip().lower() == "true":
            labels = pod.metadata.get_map("labels")
            yield NeedsIdentity(f"{obj.kind} `{obj.name}`", f"pods labelled `{USE_LABEL}: \"true\"`", obj.path,
                                labels.key_span(USE_LABEL).line)
            return  # one per workload


def _named(needs: list[NeedsIdentity]) -> str:
    return first_and_more(needs, lambda first: f"{first.what} ({first.path}:{first.line}, {first.why})")


def _hint(anchor, oidc_on: bool) -> str:
    name = cluster_name(anchor)
    if oidc_on:
        return hint_for(anchor,
                        f"`az aks update --resource-group <rg> --name {name} --enable-workload-identity`"
                        + (" (or add `--enable-workload-identity` to `az aks create`)" if anchor.creates else ""),
                        "`workload_identity_enabled = true` in the azurerm_kubernetes_cluster",
                        "`securityProfile: { workloadIdentity: { enabled: true } }` in the cluster's properties",
                        '`"securityProfile": {"workloadIdentity": {"enabled": true}}` in the cluster\'s properties')
    return hint_for(anchor,
                    f"`az aks update --resource-group <rg> --name {name} --enable-oidc-issuer --enable-workload-identity`"
                    + (" (or add both flags to `az aks create`)" if anchor.creates else ""),
                    "`oidc_issuer_enabled = true` and `workload_identity_enabled = true` in the azurerm_kubernetes_cluster",
                    "`oidcIssuerProfile: { enabled: true }` and `securityProfile: { workloadIdentity: { enabled: true } }` "
                    "in the cluster's properties",
                    '`"oidcIssuerProfile": {"enabled": true}` and `"securityProfile": {"workloadIdentity": '
                    '{"enabled": true}}` in the cluster\'s properties')


def _autofix(anchor, settings, oidc_on: bool):
    """The flags appended to the `az aks create` that made the cluster without them, when nothing
    else of the project turns workload identity off for that cluster (else the flag would not be
    the cluster's last word)."""
    command = anchor.origin.command
    if anchor.source != "script" or not anchor.creates or anchor.written or command is None \
            or not command.editable or command.has_unknown_words or not command.is_("aks", "create"):
        return None
    if any(s.feature == WORKLOAD_IDENTITY and s.written and s.cluster == anchor.cluster for s in settings):
        return None
    flags = "--enable-workload-identity" if oidc_on else "--enable-oidc-issuer --enable-workload-identity"
    return Plan.unsafe_fix(f"add `{flags}` to `az aks create`", Replace(command.end, " " + flags))


THEN = ("no webhook gives the pods a federated token or the `AZURE_CLIENT_ID`/`AZURE_FEDERATED_TOKEN_FILE` "
        "variables, so their Azure SDK calls (datasets, registries, Key Vault) fail to authenticate")
THEN_OIDC = ("without the issuer Microsoft Entra ID cannot verify the cluster's service account tokens, so no "
             "federated credential trusts them and the pods' Azure SDK calls fail to authenticate")


@rule(code="AKS008", name="workload-identity-disabled", severity="error", scope=PROJECT, collect=identity_facts,
      tags=("aks", "security", "identity"))
def check(found, ctx):
    needs = [fact for fact in found if isinstance(fact, NeedsIdentity)]
    if not needs:
        return
    settings = cluster_of(ctx.index, ctx.config).features
    if not settings:
        return  # no cluster definition in the project
    webhooks = [fact.path for fact in found if isinstance(fact, SelfManagedWebhook)]
    webhooks += [i.path for i in project_installs(ctx.index, terraform=True) if i.component == WORKLOAD_IDENTITY_WEBHOOK]
    unit = unit_of(ctx.index, ctx.config, [*(n.path for n in needs), *(s.origin.path for s in settings), *webhooks])
    needs.sort(key=lambda n: (n.path, n.line))
    reported: set[str] = set()
    for anchor, governed in needs_unmet(settings, WORKLOAD_IDENTITY, needs, unit):
        if any(together(unit, path, anchor.origin.path) for path in webhooks):
            continue  # the project runs the webhook itself
        oidc_on = any(s.feature == OIDC_ISSUER and s.on is True and s.cluster == anchor.cluster for s in settings)
        reported.add(str(anchor.cluster))
        said = "leaves workload identity off" if anchor.written else "is created without workload identity"
        yield Finding(
            anchor.origin.target,
            f"{cluster_label(anchor)} {said} ({anchor.how}), but it is needed by {_named(governed)}: {THEN}",
            path=anchor.origin.path, node=("cluster", str(anchor.cluster), WORKLOAD_IDENTITY),
            fix=("enable workload identity: " if oidc_on else "enable workload identity and the OIDC issuer: ")
            + _hint(anchor, oidc_on),
            autofix=_autofix(anchor, settings, oidc_on),
        )
    for anchor, governed in needs_unmet(settings, OIDC_ISSUER, needs, unit):
        if str(anchor.cluster) in reported:
            continue  # said with workload identity
        yield Finding(
            anchor.origin.target,
            f"{cluster_label(anchor)} turns the OIDC issuer off ({anchor.how}), but workload identity is needed by "
            f"{_named(governed)}: {THEN_OIDC}",
            path=anchor.origin.path, node=("cluster", str(anchor.cluster), OIDC_ISSUER),
            fix="enable the OIDC issuer: " + hint_for(
                anchor, "`az aks update --resource-group <rg> --name <cluster> --enable-oidc-issuer`",
                "`oidc_issuer_enabled = true` in the azurerm_kubernetes_cluster",
                "`oidcIssuerProfile: { enabled: true }` in the cluster's properties",
                '`"oidcIssuerProfile": {"enabled": true}` in the cluster\'s properties'),
        )
