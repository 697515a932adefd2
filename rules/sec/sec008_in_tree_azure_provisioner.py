"""A StorageClass that names the in-tree Azure Disk or Azure Files provisioner.

## What it does
Flags a StorageClass whose `provisioner` is `kubernetes.io/azure-disk` or
`kubernetes.io/azure-file`, the volume plugins compiled into Kubernetes before the Azure CSI
drivers (`disk.csi.azure.com`, `file.csi.azure.com`) replaced them. The finding points at the
value. It is a warning, and an error in the `aks-automatic` profile.

## Why is this bad?
The in-tree Azure plugins are deprecated: from Kubernetes 1.26 AKS no longer supports the
`kubernetes.io/azure-disk` and `kubernetes.io/azure-file` volume types, and Kubernetes has
removed their code; such a class keeps working only because CSI migration translates it to the
CSI driver, without the CSI drivers' features (snapshots, Premium SSD v2, zone-redundant disks,
NFS shares, batched attach and detach). The article's storage classes all name CSI drivers
(`file.csi.azure.com`, `blob.csi.azure.com`) for the checkpoints and datasets that training must
not lose. Azure Policy has a built-in definition against these classes ("Kubernetes clusters
should use Container Storage Interface(CSI) driver StorageClass"), and Deployment Safeguards, on
by default in AKS Automatic, enforce best practices through such Azure Policy controls: hence an
error in the `aks-automatic` profile.

## Example
```yaml
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: ml-checkpoints
provisioner: kubernetes.io/azure-disk
parameters:
  storageaccounttype: Premium_LRS
  kind: Managed
```

Use instead:
```yaml
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: ml-checkpoints
provisioner: disk.csi.azure.com
parameters:
  skuName: Premium_LRS
```

## Known problems
Whether an AKS Automatic cluster denies or only warns depends on its safeguards' level.
PersistentVolumes and pod volumes written with the in-tree `azureDisk` or `azureFile` source
are not checked. A StorageClass cannot change its provisioner in place: a new class (and a
migration of the claims that use the old one) is needed, so there is no automatic fix.

## References
- AKS, CSI storage drivers (in-tree drivers removed): https://learn.microsoft.com/azure/aks/csi-storage-drivers
- Kubernetes, deprecated and removed volume plugins: https://kubernetes.io/docs/concepts/storage/volumes/#azuredisk
- Azure Disk CSI driver, StorageClass parameters: https://github.com/kubernetes-sigs/azuredisk-csi-driver/blob/master/docs/driver-parameters.md
"""

from mlops_lint.rule import Finding, Kind, rule

IN_TREE = {"kubernetes.io/azure-disk": "disk.csi.azure.com", "kubernetes.io/azure-file": "file.csi.azure.com"}


@rule(code="SEC008", name="in-tree-azure-provisioner", severity="warning", scope=Kind("StorageClass"),
      tags=("security", "storage", "aks"))
def check(obj, ctx):
    if obj.group != "storage.k8s.io":
        return
    provisioner = obj.body.get("provisioner")
    if not isinstance(provisioner, str) or provisioner not in IN_TREE:
        return
    automatic = getattr(ctx.config, "profile", None) == "aks-automatic"
    csi = IN_TREE[provisioner]
    yield Finding(obj.body.value_span("provisioner"),
                  f"StorageClass `{obj.name}` names the deprecated in-tree provisioner `{provisioner}`: it works only "
                  f"through CSI migration, without the features of the CSI driver `{csi}`"
                  + ("; AKS Automatic's Deployment Safeguards reject it" if automatic else ""),
                  node=("provisioner",), severity="error" if automatic else None,
                  fix=f"a new class with `provisioner: {csi}` (its parameters: `skuName` for `storageaccounttype`)")
