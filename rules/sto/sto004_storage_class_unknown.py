"""A claim names a StorageClass that exists neither in the project nor on AKS.

## What it does
Flags PersistentVolumeClaims, StatefulSet `volumeClaimTemplates` and generic ephemeral volume
templates whose class (the `volume.beta.kubernetes.io/storage-class` annotation, else
`spec.storageClassName`) is none of:

- a StorageClass of the project;
- the `storageClassName` of a PersistentVolume of the project (a static PV binds to claims of
  its class even when no StorageClass object of that name exists);
- an AKS built-in class: `default`, `managed-csi`, `managed-csi-premium`,
  `managed-csi-premium-v2`, `azurefile-csi`, `azurefile-csi-premium`, `azureblob-nfs-premium`,
  `azureblob-fuse-premium`, the legacy `managed`, `managed-premium`, `azurefile`,
  `azurefile-premium`, and Azure Container Storage's `local-csi`, `azuresan-csi`, `acstor-<pool>`.

This is a reference rule: it runs only when the project defines at least one StorageClass; a
project without any is taken to get its classes from elsewhere (a platform repository, a CSI
driver's chart). An empty class (`""`, static binding), a missing one (the cluster default) and a
name filled in later (`${SC}`, `{{ … }}`) are not judged. The finding points at the class name
and suggests the closest known name; a StorageClass of the project outranks an AKS built-in
about as close (a typo of the project's `fast-ssd` is more likely meant as `fast-ssd` than as
`managed-csi`).

## Why is this bad?
No provisioner answers a claim for a class that does not exist: the claim stays `Pending`, and
every pod that mounts it stays `Pending` with it, holding its queue slot while the GPUs it waits
for sit idle. The article asks to "select storage based on access pattern, throughput, sharing,
and recovery requirements": the class is where that choice is made (Azure Disk, Azure Files,
Blob), so a misspelt or missing class silently loses it. The Blob classes
(`azureblob-nfs-premium`, `azureblob-fuse-premium`) exist only once the Blob CSI driver is enabled
(`az aks update --enable-blob-driver`).

## Example
```yaml
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: shared-training-data
spec:
  accessModes: [ReadWriteMany]
  storageClassName: azurefile-premium-csi
```

Use instead:
```yaml
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: shared-training-data
spec:
  accessModes: [ReadWriteMany]
  storageClassName: azurefile-csi-premium
```

## Known problems
- Classes created outside the project (by a platform team, an operator, another cluster add-on)
  are unknown to the linter; add their manifests to the project, or suppress the finding.
- Built-in classes that exist only with an add-on (Blob CSI driver, Azure Container Storage) or
  a Kubernetes version (`managed-csi-premium-v2` from 1.35) are accepted without checking that
  the add-on is enabled.

## References
- Kubernetes, Storage Classes: https://kubernetes.io/docs/concepts/storage/storage-classes/
- AKS, Storage classes: https://learn.microsoft.com/azure/aks/concepts-storage#storage-classes
- AKS, Azure Blob CSI driver: https://learn.microsoft.com/azure/aks/azure-blob-csi
"""

from __future__ import annotations

import heapq
from collections import Counter
from typing import Iterator

from mlops_lint.model.document import K8sObject
from mlops_lint.model.k8s import is_templated
from mlops_lint.model.storage import (BUILTIN_STORAGE_CLASSES, Claim, builtin_class, claim_templates, ephemeral_claim,
                                  pvc_claim)
from mlops_lint.rule import OBJECT, Finding, rule

LEGACY = frozenset({"managed", "managed-premium", "azurefile", "azurefile-premium"})


def _claims(obj: K8sObject, index) -> Iterator[tuple[str, Claim]]:
    if obj.kind == "PersistentVolumeClaim" and obj.group == "":
        claim = pvc_claim(obj)
        if claim is not None:
            yield f"PVC `{claim.name}`", claim
        return
    for claim in claim_templates(obj):
        yield f"volumeClaimTemplate `{claim.name}`", claim
    workload = index.workload(obj)
    for pod in workload.pods if workload is not None else ():
        for volume_index, volume in pod.volumes:
            claim = ephemeral_claim(pod, volume_index, volume)
            if claim is not None:
                yield f"ephemeral volume `{volume.get('name')}`", claim


def _known(index) -> set[str]:
    return index.memo("storage-class-names", lambda: _names(index))


def _names(index) -> set[str]:
    names = {sc.name for sc in index.of_kind("StorageClass")}
    for pv in index.of_kind("PersistentVolume"):
        spec = pv.body.get("spec")
        name = spec.get("storageClassName") if isinstance(spec, dict) else None
        if isinstance(name, str) and name:
            names.add(name)
    return names


THRESHOLD = 0.75  # the least score a suggestion needs
PROJECT_BONUS = 0.05  # a class of the project outranks a built-in name about as close (within 0.05)


def _candidates(index) -> list[tuple[str, list[str], Counter]]:
    """Each class a misspelling may mean, with its sorted words, its letters and the bonus of a
    class the project defines (once per index)."""
    def build():
        known = _known(index)
        return [(c, sorted(c.split("-")), Counter(c), PROJECT_BONUS if c in known else 0.0)
                for c in known | set(BUILTIN_STORAGE_CLASSES)]
    return index.memo("STO004-candidates", build)


def _closest(name: str, candidates) -> list[str]:
    """The known class a misspelling most likely meant: the same words in another order first
    (`azurefile-premium-csi`), then by similarity; a class of the project outranks a built-in
    one about as close (PROJECT_BONUS: the project's own names are what its authors type); legacy
    built-in names come last.

    A candidate must reach the threshold on its own score; the best ranked wins (ties: the
    greater name); a candidate is compared in full only when the
    bounds difflib's ratio never exceeds (the length bound, then the shared-characters bound)
    say it could still reach the threshold and the best so far, so a project of thousands of
    classes is not compared thousands of times per finding."""
    import difflib  # only for a class name the project and AKS do not know

    words = sorted(name.split("-"))
    letters = Counter(name)
    best: tuple[float, str] | None = None
    for candidate, candidate_words, candidate_letters, project in candidates:
        if candidate == name:
            continue
        bonus = (0.5 if candidate_words == words else 0) - (0.05 if candidate in LEGACY else 0)
        total = len(name) + len(candidate)
        for bound in (2.0 * min(len(name), len(candidate)) / total,
                      2.0 * sum((letters & candidate_letters).values()) / total):
            if bound + bonus < THRESHOLD or (best is not None and bound + bonus + project < best[0]):
                break
        else:
            score = difflib.SequenceMatcher(None, name, candidate).ratio() + bonus
            if score >= THRESHOLD and (best is None or (score + project, candidate) > best):
                best = (score + project, candidate)
    return [best[1]] if best is not None else []


@rule(code="STO004", name="storage-class-unknown", severity="warning", scope=OBJECT, tags=("storage",))
def check(obj: K8sObject, ctx):
    index = ctx.index
    if not index.has_kind("StorageClass"):
        return  # a reference rule: the project's classes come from elsewhere
    known: set[str] | None = None
    for subject, claim in _claims(obj, index):
        name = claim.class_name
        if not name or is_templated(name) or builtin_class(name) is not None:
            continue
        if known is None:
            known = _known(index)
        if name in known:
            continue
        # the same for every claim naming this class
        close = index.memo(("STO004-closest", name), lambda: _closest(name, _candidates(index)))
        if close:
            hint = f"; did you mean `{close[0]}`?"
        else:  # the same for every finding: once per index, not a scan of every class per finding
            hint = "; the project defines " + index.memo(
                "STO004-defined", lambda: ", ".join(f"`{n}`" for n in heapq.nsmallest(4, known)))
        yield Finding(
            claim.class_span,
            f"{subject} names StorageClass `{name}`, which is neither a StorageClass of the project nor an AKS "
            f"built-in class, so the claim stays Pending{hint}",
            node=claim.class_node,
            fix=f"storageClassName: {close[0]}" if close else None,
        )
