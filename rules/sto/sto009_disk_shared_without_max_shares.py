"""An Azure Disk claim asks for ReadWriteMany or ReadOnlyMany on a class that makes no shared disk.

## What it does
Flags a PersistentVolumeClaim or a StatefulSet `volumeClaimTemplate` whose `accessModes` hold
`ReadWriteMany` or `ReadOnlyMany` (a volume mounted on several nodes) when the class it names
provisions Azure Disks (`disk.csi.azure.com`: a StorageClass of the project, or an AKS built-in
disk class such as `managed-csi`, `managed-csi-premium` or `default`) and that class does not set
`parameters.maxShares` to 2 or more (the built-in classes never do). The finding points at the
multi-node access mode.

A claim bound to a named PersistentVolume (`spec.volumeName`), one without a class (the cluster
default, which may be changed outside the project), an empty class (static binding) and a
templated class or `maxShares` are not judged, nor a class of another driver.

## Why is this bad?
An Azure Disk attaches to one VM at a time unless it is created as a shared disk
(`maxShares` ≥ 2). The Azure Disk CSI driver refuses a multi-node access mode on a non-shared
disk (`access mode: MULTI_NODE_MULTI_WRITER is not supported for non-shared disk`), so the claim
stays `Pending` and every training pod that mounts it waits with it. The article: "Use Azure
Disk for high-performance, single-node read-write checkpoint or cache workloads where
ReadWriteOnce is sufficient" and "Azure Files supports ReadWriteMany, which allows distributed
workers on different nodes to mount the same share"; AKS's storage facts: disks are
ReadWriteOnce, "use `maxShares` ≥ 2 for shared disks".

## Example
```yaml
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: shared-dataset
spec:
  accessModes: [ReadWriteMany]
  storageClassName: managed-csi-premium
  resources:
    requests:
      storage: 512Gi
```

Use instead:
```yaml
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: shared-dataset
spec:
  accessModes: [ReadWriteMany]
  storageClassName: azurefile-csi-premium   # or a disk class with maxShares: "2" and volumeMode: Block
  resources:
    requests:
      storage: 512Gi
```

## Known problems
A shared disk is a block device: even with `maxShares` the driver mounts `ReadWriteMany` only
with `volumeMode: Block`, which this rule does not check. Claims without a class are left alone
(AKS's default class is a disk class, but a project may change the default elsewhere), as are
generic ephemeral volumes. Several definitions of one class name: the claim is judged only when
every one of them makes a non-shared disk.

## References
- AKS, Azure Disk CSI driver parameters (`maxShares`): https://learn.microsoft.com/azure/aks/azure-csi-disk-storage-provision
- Azure shared disks: https://learn.microsoft.com/azure/virtual-machines/disks-shared
- Azure Disk CSI driver, shared disk: https://github.com/kubernetes-sigs/azuredisk-csi-driver/tree/master/deploy/example/sharedisk
"""

from __future__ import annotations

from mlops_lint.model.k8s import is_templated
from mlops_lint.model.storage import builtin_class, claim_templates, pvc_claim
from mlops_lint.rule import Finding, Kind, rule

DISK = "disk.csi.azure.com"
MULTI_NODE = ("ReadWriteMany", "ReadOnlyMany")


def _max_shares(sc) -> int | None | str:
    """A project class's maxShares: an int, None when unset, "?" when not a plain number."""
    params = sc.body.get_map("parameters")
    if params is None:
        return None
    for key, value in params.items():
        if isinstance(key, str) and key.lower() == "maxshares":
            text = str(value).strip() if isinstance(value, (str, int)) and not isinstance(value, bool) else ""
            return int(text) if text.isdigit() and len(text) < 6 else "?"
    return None


def _non_shared_disk(index, name: str) -> str | None:
    """How a message names the class ``name`` when every definition of it makes a non-shared Azure
    Disk, else None."""
    found = [sc for sc in index.named("StorageClass", name) if sc.group == "storage.k8s.io"]
    if found:
        for sc in found:
            if sc.body.get("provisioner") != DISK:
                return None
            shares = _max_shares(sc)
            if shares == "?" or (isinstance(shares, int) and shares >= 2):
                return None
        shares = _max_shares(found[0])
        said = "sets no `maxShares`" if shares is None else f"sets `maxShares: {shares}`"
        return f"StorageClass `{name}` provisions Azure Disks ({DISK}) and {said}"
    builtin = builtin_class(name)
    if builtin is not None and builtin.provisioner == DISK:
        return f"`{name}` is an AKS built-in Azure Disk class ({DISK}), which makes non-shared disks"
    return None


def _claims(obj):
    if obj.kind == "PersistentVolumeClaim":
        claim = pvc_claim(obj) if obj.group == "" else None
        if claim is not None:
            yield f"PersistentVolumeClaim `{claim.name}`", claim
        return
    for claim in claim_templates(obj):
        yield f"volumeClaimTemplate `{claim.name}`", claim


@rule(code="STO009", name="disk-shared-without-max-shares", severity="error",
      scope=Kind("PersistentVolumeClaim", "StatefulSet"), tags=("storage",))
def check(obj, ctx):
    for subject, claim in _claims(obj):
        modes = claim.spec.get_seq("accessModes")
        multi = [i for i, mode in enumerate(modes or ()) if mode in MULTI_NODE]
        if not multi:
            continue
        name = claim.class_name
        volume = claim.spec.get("volumeName")
        if not name or is_templated(name) or (isinstance(volume, str) and volume):
            continue
        why = ctx.index.memo(("STO009", name), lambda: _non_shared_disk(ctx.index, name))
        if why is None:
            continue
        mode = modes[multi[0]]
        yield Finding(
            modes.item_span(multi[0]),
            f"{subject} asks for {mode}, but {why}: an Azure Disk attaches to one node unless it is a shared "
            f"disk, so the CSI driver refuses the access mode and the claim stays Pending",
            node=claim.path + ("spec", "accessModes", multi[0]),
            fix="use an Azure Files class (`azurefile-csi-premium`) for volumes several nodes mount, or a disk "
                "class with `maxShares: \"2\"` or more and `volumeMode: Block`",
        )
