"""A checkpoint volume whose storage is deleted together with its claim.

## What it does
Flags claims that hold checkpoints and whose volume reclaims with `Delete` (or the deprecated
`Recycle`, which wipes it):

- a PersistentVolumeClaim, or a StatefulSet `volumeClaimTemplates` entry, whose name mentions
  checkpoints (`checkpoint` or `ckpt` anywhere, any case: `model-checkpoints`, `ckpts`,
  `llama-ckpt`);
- a claim that a training workload (Job, CronJob, Kubeflow and Volcano jobs, RayJob, JobSet, a
  run-to-completion Pod) mounts for checkpoints: the mount path or the volume name mentions
  checkpoints, or a checkpoint destination of the container (`CHECKPOINT_DIR=/data/ckpt`,
  `--checkpoint-dir /data/ckpt`) lies on the mount (longest mount-path prefix).

The reclaim policy is resolved as Kubernetes does: a claim bound to a PersistentVolume of the
project (`spec.volumeName`, or a PV whose `claimRef` names the claim) keeps that PV's
`persistentVolumeReclaimPolicy` (default `Retain` for a PV written by hand); otherwise the
StorageClass provisions the volume with its `reclaimPolicy` (default `Delete`). The class is the
`volume.beta.kubernetes.io/storage-class` annotation, else `spec.storageClassName`, else the
cluster default class: a project class annotated `storageclass.kubernetes.io/is-default-class:
"true"`, else AKS's `default`. AKS's built-in classes (`default`, `managed-csi`,
`managed-csi-premium`, `azurefile-csi`, `azurefile-csi-premium`, `azureblob-nfs-premium`,
`azureblob-fuse-premium` and the legacy names) all reclaim with `Delete`.

The finding sits where the reader fixes it. For a claim named as a checkpoint claim: at its
`storageClassName` (or the annotation, `volumeName`, or its `spec:` key when no class is given),
since changing the class is the fix. For a claim found through a training workload's mount: at
the pod volume's `claimName`, in the workload's file, since the claim may live in another file
and the workload is what makes it a checkpoint store.

## Why is this bad?
With `Delete`, removing the PVC (a `kubectl delete -f` of the training manifests, a namespace
clean-up, a Helm uninstall) deletes the Azure disk or file share and every checkpoint on it. The
article: "Use a Retain reclaim policy or an independently managed storage account for production
checkpoints so deleting a PVC doesn't unintentionally delete the only recovery point." Every AKS
built-in class reclaims with `Delete`, so a checkpoint claim that names no class of its own loses
its data this way.

## Example
```yaml
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: model-checkpoints
  namespace: ml-training
spec:
  accessModes: [ReadWriteMany]
  storageClassName: azurefile-csi-premium
  resources:
    requests:
      storage: 100Gi
```

Use instead:
```yaml
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: ml-checkpoints-azurefile
provisioner: file.csi.azure.com
parameters:
  skuName: Premium_LRS
reclaimPolicy: Retain
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: model-checkpoints
  namespace: ml-training
spec:
  accessModes: [ReadWriteMany]
  storageClassName: ml-checkpoints-azurefile
  resources:
    requests:
      storage: 100Gi
```

## Fix safety
Unsafe. The fix sets `reclaimPolicy: Retain` on the project's StorageClass that provisions the
claim (in whichever file of the project defines it), or `persistentVolumeReclaimPolicy: Retain`
on the project's PersistentVolume it is bound to, as the article's `ml-checkpoints-azurefile`
class does. It changes more than the one claim: every volume the class provisions from then on is
kept when its claim goes, and must be deleted by hand (and paid for until then). A StorageClass's
`reclaimPolicy` cannot be updated in place either: applying the fixed class fails until the old
one is deleted and created again, and volumes provisioned before keep the policy they were made
with (`kubectl patch pv … persistentVolumeReclaimPolicy: Retain` for those). A dedicated
checkpoint class, as the article has, is often the better repair. No fix for an AKS built-in class
(AKS reconciles it; pick a class with `Retain`) or a class or volume outside the project.

## Known problems
- A class or PersistentVolume that is not in the project is not judged (STO004 reports unknown
  class names); a claim bound to a PV outside the project (`storageClassName: ""` or a
  `volumeName` not in the project) is taken to be managed on purpose.
- A StorageClass written in several variant files (alternatives, one applied) deletes only if
  every definition does. A claim written in several files is read from the workload's own file,
  else its first definition.
- A project manifest that redefines an AKS built-in class (`default`, `managed-csi` …) with
  `reclaimPolicy: Retain` does not change it: AKS reconciles its built-in classes, and a
  StorageClass's `reclaimPolicy` cannot be updated. The built-in's `Delete` is what counts.
- Mount-based evidence is read only from training workloads: an inference Deployment that mounts
  a model "checkpoint" reads it and does not write recovery points. A claim whose own name says
  checkpoint is flagged whoever mounts it.
- Generic ephemeral volumes and emptyDir are deleted with the pod whatever their class: STO002
  reports checkpoints written there.

## References
- Kubernetes, Persistent Volumes, reclaiming: https://kubernetes.io/docs/concepts/storage/persistent-volumes/#reclaiming
- Kubernetes, Change the reclaim policy of a PersistentVolume: https://kubernetes.io/docs/tasks/administer-cluster/change-pv-reclaim-policy/
- AKS, Storage options (built-in storage classes): https://learn.microsoft.com/azure/aks/concepts-storage#storage-classes
"""

from __future__ import annotations

from typing import Iterator

from mlops_lint.fix.plans import plan, set_path
from mlops_lint.model.document import K8sObject
from mlops_lint.model.storage import (Claim, Reclaim, builtin_class, checkpoint_mounts, claim_name, claim_name_span,
                                  claim_object, claim_reclaim, claim_templates, mentions_checkpoint, pvc_claim,
                                  retain_classes)
from mlops_lint.rule import OBJECT, Finding, rule

LOSES_DATA = ("Delete", "Recycle")


def _consequence(reclaim: Reclaim) -> tuple[str, str]:
    """(how the volume is reclaimed, what deleting the claim does)."""
    if reclaim.class_name is None:
        how = f"is bound to {reclaim.via}, whose persistentVolumeReclaimPolicy is {reclaim.policy}"
    elif reclaim.via.startswith("the cluster default"):
        how = f"names no storageClassName, leaving it to {reclaim.via}, which reclaims with {reclaim.policy}"
    else:
        how = f"uses {reclaim.via}, which reclaims with {reclaim.policy}"
    return how, "deletes the volume and every checkpoint on it" if reclaim.policy == "Delete" else "wipes the volume"


def _advice(reclaim: Reclaim) -> str:
    if reclaim.class_name is None:
        return f"set `persistentVolumeReclaimPolicy: Retain` on PersistentVolume `{reclaim.obj.name}`"
    return "use a StorageClass with `reclaimPolicy: Retain`"


def _fix(index, reclaim: Reclaim) -> str:
    if reclaim.class_name is None:
        return "persistentVolumeReclaimPolicy: Retain"
    kept = retain_classes(index)
    if kept:
        return f"storageClassName: {kept[0]}"
    return "storageClassName: <a StorageClass with reclaimPolicy: Retain>"


def _autofix(obj: K8sObject, reclaim: Reclaim):
    """Retain on the project's StorageClass (``reclaimPolicy``) or static PersistentVolume
    (``spec.persistentVolumeReclaimPolicy``) that decides, in whichever file defines it; none for
    an AKS built-in class or a volume outside the project."""
    owner = reclaim.obj
    if owner is None or (reclaim.class_name is not None and builtin_class(reclaim.class_name) is not None):
        return None  # AKS reconciles its built-in classes: a redefinition changes nothing
    where = owner.path if owner.path != obj.path else None
    if owner.kind == "StorageClass":
        return plan(f"set `reclaimPolicy: Retain` on StorageClass `{owner.name}`",
                    set_path(owner.body, ("reclaimPolicy",), "Retain"), safe=False, path=where)
    return plan(f"set `persistentVolumeReclaimPolicy: Retain` on PersistentVolume `{owner.name}`",
                set_path(owner.body, ("spec", "persistentVolumeReclaimPolicy"), "Retain"), safe=False, path=where)


def _claim_finding(index, claim: Claim, subject: str, obj: K8sObject) -> Iterator[Finding]:
    reclaim = claim_reclaim(index, claim)
    if reclaim is None or reclaim.policy not in LOSES_DATA:
        return
    if reclaim.class_name is None and "volumeName" in claim.spec:
        span, node = claim.spec.value_span("volumeName"), claim.path + ("spec", "volumeName")
    elif reclaim.class_name is None:
        span, node = claim.span, claim.path + ("spec",)
    else:
        span, node = claim.class_span, claim.class_node
    how, loss = _consequence(reclaim)
    yield Finding(span, f"{subject} {how}, so deleting the claim {loss}; {_advice(reclaim)}",
                  node=node, fix=_fix(index, reclaim), autofix=_autofix(obj, reclaim))


@rule(code="STO001", name="checkpoint-reclaim-delete", severity="error", scope=OBJECT, tags=("storage", "checkpoints"))
def check(obj: K8sObject, ctx):
    index = ctx.index
    if obj.kind == "PersistentVolumeClaim" and obj.group == "":
        claim = pvc_claim(obj)
        if claim is not None and mentions_checkpoint(claim.name):
            yield from _claim_finding(index, claim, f"checkpoint PVC `{claim.name}`", obj)
        return
    for claim in claim_templates(obj):
        if mentions_checkpoint(claim.name):
            yield from _claim_finding(index, claim, f"checkpoint volumeClaimTemplate `{claim.name}`", obj)
    workload = index.workload(obj)
    if workload is None or not workload.is_training:
        return
    for pod in workload.pods:
        reported: set[int] = set()
        for container in pod.containers:
            for found in checkpoint_mounts(container):
                name = claim_name(found.volume) if found.volume is not None else None
                if name is None or found.volume_index in reported:
                    continue
                pvc = claim_object(index, name, obj.namespace or "default", obj)
                claim = pvc_claim(pvc) if pvc is not None else None
                if claim is None or mentions_checkpoint(name):
                    continue  # unknown claim, or one named for checkpoints (reported at the claim)
                reclaim = claim_reclaim(index, claim)
                if reclaim is None or reclaim.policy not in LOSES_DATA:
                    continue
                reported.add(found.volume_index)
                how, loss = _consequence(reclaim)
                yield Finding(
                    claim_name_span(found.volume),
                    f"{container.kind_label} `{container.name}` keeps checkpoints on PVC `{name}` ({found.reason}); "
                    f"the claim {how}, so deleting it {loss}; {_advice(reclaim)}",
                    node=pod.path + ("volumes", found.volume_index, "persistentVolumeClaim", "claimName"),
                    fix=_fix(index, reclaim),
                    autofix=_autofix(obj, reclaim),
                )
