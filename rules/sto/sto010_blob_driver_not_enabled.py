"""Azure Blob volumes in a project whose cluster never enables the Blob CSI driver.

## What it does
Reads the cluster definitions of the project (`az aks create` / `az aks update` in shell
scripts, `azurerm_kubernetes_cluster` in Terraform, `Microsoft.ContainerService/managedClusters`
in Bicep or an ARM template) and whether each enables the Azure Blob CSI driver
(`--enable-blob-driver`, `storage_profile { blob_driver_enabled = true }`,
`storageProfile.blobCSIDriver.enabled: true`; a cluster created without it has it off, and a later
`az aks update --enable-blob-driver` turns it on). When every cluster the project defines has the
driver off, it flags what needs the driver:

- a StorageClass whose `provisioner` is `blob.csi.azure.com` (at the provisioner);
- a PersistentVolume with `csi.driver: blob.csi.azure.com` (at the driver);
- a PersistentVolumeClaim of the AKS built-in Blob classes `azureblob-nfs-premium` or
  `azureblob-fuse-premium`, which AKS creates only with the driver (at the class name; a claim of a
  project Blob class is reported once, at its class).

A project with no cluster definition is not judged (the cluster is made elsewhere), nor one where
a definition leaves the setting unknown (a word of unknown value, a variable without a default)
or any cluster enables the driver. In a folder of unrelated repositories linted by path, a
cluster definition counts only for the manifests of its own top-level folder (see
`linter.model.locality`). In the `aks-automatic` profile the project's scripts and templates do
not describe the cluster, so nothing is judged.

## Why is this bad?
The article: "Enable the Azure Blob CSI driver on AKS Standard if it isn't already enabled"
(`az aks update --enable-blob-driver`) before its Blob NFS StorageClass for training datasets.
AKS does not install the driver by default: without it no controller answers
`blob.csi.azure.com`, so a claim of the class stays `Pending` forever ("waiting for a volume to be
created by external provisioner"), a static Blob volume never mounts, and the training pods that
read their dataset from it never start. The built-in `azureblob-*` classes do not even exist.

## Example
```yaml
# the cluster: az aks create --resource-group ml-rg --name ml-aks ...   (no --enable-blob-driver)
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: ml-azureblob-nfs
provisioner: blob.csi.azure.com
parameters:
  protocol: nfs
```

Use instead:
```sh
az aks update --resource-group ml-rg --name ml-aks --enable-blob-driver
```

## Known problems
The driver enabled outside the project (the portal, another repository's pipeline) is not seen:
the project's own cluster definition is taken at its word. Several clusters are not told apart: a
Blob class is left alone when any cluster of the project enables the driver. Clusters of the same
name are one cluster when their resource groups are written the same and their files go together
(one project; in a folder of repositories, the same repository): a later command there replaces
what an earlier one said; two repositories that each make a cluster `ml-aks` keep one each. StatefulSet claim
templates, generic ephemeral volumes and inline `csi:` pod volumes are not read. There is no
automatic fix: enabling the driver is a change to the cluster, not to the manifest.

## References
- AKS, Azure Blob storage CSI driver: https://learn.microsoft.com/azure/aks/azure-blob-csi
- AKS, create and use a Blob volume: https://learn.microsoft.com/azure/aks/azure-csi-blob-storage-provision
- azurerm_kubernetes_cluster `storage_profile`: https://registry.terraform.io/providers/hashicorp/azurerm/latest/docs/resources/kubernetes_cluster#storage_profile
"""

from __future__ import annotations

from mlops_lint.model.cluster import cluster_of
from mlops_lint.model.locality import together, unit_of
from mlops_lint.model.storage import builtin_class, pvc_claim
from mlops_lint.model.unknown import UNKNOWN
from mlops_lint.rule import Finding, Kind, rule

BLOB = "blob.csi.azure.com"


def _needs_driver(obj):
    """(span, node, what, what follows) where ``obj`` needs the Blob driver, or None."""
    body = obj.body
    if obj.kind == "StorageClass":
        if obj.group != "storage.k8s.io" or body.get("provisioner") != BLOB:
            return None
        return body.value_span("provisioner"), ("provisioner",), f"StorageClass `{obj.name}` provisions Blob volumes", \
            "no driver answers, so its claims stay Pending and the pods that mount them never start"
    if obj.kind == "PersistentVolume":
        spec = body.get_map("spec")
        csi = spec.get_map("csi") if spec is not None and obj.group == "" else None
        if csi is None or csi.get("driver") != BLOB:
            return None
        return csi.value_span("driver"), ("spec", "csi", "driver"), f"PersistentVolume `{obj.name}` is a Blob volume", \
            "no driver mounts it, so the pods that use it stay in ContainerCreating"
    return None


def _said(settings) -> str:
    shown = []
    for cluster, setting in settings[:3]:
        named = f"`{cluster}`" if isinstance(cluster, str) else "the project's cluster"
        shown.append(f"{named} ({setting.origin.path}:{setting.origin.span.line})")
    return ", ".join(shown) + (f" and {len(settings) - 3} more" if len(settings) > 3 else "")


def _hint(cluster, setting) -> str:
    path = setting.origin.path
    if path.endswith(".tf"):
        return "enable the driver: `storage_profile { blob_driver_enabled = true }` in the azurerm_kubernetes_cluster"
    if path.endswith((".bicep", ".json")):
        return "enable the driver: `storageProfile: { blobCSIDriver: { enabled: true } }` in the cluster's properties"
    name = cluster if isinstance(cluster, str) else "<cluster>"
    return f"enable the driver: `az aks update --resource-group <rg> --name {name} --enable-blob-driver`"


@rule(code="STO010", name="blob-driver-not-enabled", severity="error",
      scope=Kind("StorageClass", "PersistentVolume", "PersistentVolumeClaim"), tags=("storage", "cluster"))
def check(obj, ctx):
    if obj.kind == "PersistentVolumeClaim":
        found = _claim_need(obj, ctx)
    else:
        found = _needs_driver(obj)
    if found is None:
        return
    settings = cluster_of(ctx.index, ctx.config).blob_driver
    if not settings:
        return  # no cluster definition in the project
    unit = unit_of(ctx.index, ctx.config, [obj.path, *(s.origin.path for s in settings.values())])
    latest: dict[tuple, tuple] = {}  # a cluster (name, resource group) -> its last record that governs obj
    for (cluster, group, _), setting in settings.items():
        if together(unit, setting.origin.path, obj.path):
            latest.pop((cluster, group), None)
            latest[(cluster, group)] = (cluster, setting)
    governing = list(latest.values())
    if not governing or any(setting.value is True or setting.value is UNKNOWN for _, setting in governing):
        return
    span, node, what, then = found
    yield Finding(
        span,
        f"{what} ({BLOB}), but the project's cluster definition never enables the Azure Blob CSI driver: "
        f"{_said(governing)}; {then}",
        node=node,
        fix=_hint(*governing[0]),
    )


def _claim_need(obj, ctx):
    claim = pvc_claim(obj) if obj.group == "" else None
    name = claim.class_name if claim is not None else None
    builtin = builtin_class(name) if name else None
    if builtin is None or builtin.provisioner != BLOB:
        return None
    if any(sc.group == "storage.k8s.io" for sc in ctx.index.named("StorageClass", name)):
        return None  # the project's own class of that name: reported (or not) as a StorageClass
    return claim.class_span, claim.class_node, \
        f"PersistentVolumeClaim `{obj.name}` asks for `{name}`, an AKS class that exists only with the Blob driver", \
        "the class does not exist, so the claim stays Pending and the pods that mount it never start"
