"""A workload that sets labels in AKS's reserved `kubernetes.azure.com/` domain on itself or its pods.

## What it does
Flags every label key under `kubernetes.azure.com/` in a workload's own `metadata.labels` and in
the `metadata.labels` of its pod templates (a Pod's own labels, a Deployment's template, each
replica type of a training job …). Selecting nodes by those labels (`nodeSelector`, node
affinity, tolerations) is what they are for and is not flagged. The finding points at the label
key. It is a warning, and an error in the `aks-automatic` profile.

## Why is this bad?
AKS owns the `kubernetes.azure.com/` domain: it sets those labels on nodes
(`kubernetes.azure.com/agentpool`, `kubernetes.azure.com/accelerator`,
`kubernetes.azure.com/scalesetpriority` …) and on its own add-ons
(`kubernetes.azure.com/managedby`), and refuses them as node-pool labels. A workload that wears
them passes for an AKS component to whatever selects by the domain. Deployment Safeguards, which AKS
Automatic enforces (the article's "Enforce best practices with Deployment Safeguards"), include a
policy against AKS-specific labels on workloads: the API server refuses the object there, hence
an error in the `aks-automatic` profile. The article uses the domain only to select nodes
(`kubectl get nodes -L kubernetes.azure.com/agentpool`).

## Example
```yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: bert-finetune
  labels:
    kubernetes.azure.com/team: nlp
spec:
  template:
    metadata:
      labels:
        kubernetes.azure.com/managedby: aks
```

Use instead (a domain of your own):
```yaml
metadata:
  name: bert-finetune
  labels:
    ml.example.com/team: nlp
```

## Known problems
Whether an AKS Standard cluster with Deployment Safeguards at the Warning level only warns
depends on its configuration. Labels added later (by a mutating webhook, kustomize's
`commonLabels` before the build) are not seen. There is no automatic fix: the replacement domain
is the organisation's choice.

## References
- AKS, Deployment Safeguards: https://learn.microsoft.com/azure/aks/deployment-safeguards
- AKS, use labels (reserved prefixes): https://learn.microsoft.com/azure/aks/use-labels
"""

from __future__ import annotations

from mlops_lint.rule import WORKLOAD, Finding, rule

RESERVED = "kubernetes.azure.com/"


def _reserved(labels, node: tuple, whose: str, severity, automatic: bool):
    if not hasattr(labels, "key_span"):
        return
    for key in labels:
        if isinstance(key, str) and key.startswith(RESERVED):
            yield Finding(labels.key_span(key),
                          f"{whose} sets the label `{key}` in AKS's reserved `kubernetes.azure.com/` domain, which AKS "
                          "uses for its nodes and add-ons"
                          + ("; AKS Automatic's Deployment Safeguards reject it" if automatic else "")
                          + "; use a label domain of your own",
                          node=node + (key,), severity=severity)


@rule(code="SEC009", name="aks-reserved-labels", severity="warning", scope=WORKLOAD, tags=("security", "aks"))
def check(workload, ctx):
    automatic = getattr(ctx.config, "profile", None) == "aks-automatic"
    severity = "error" if automatic else None
    obj = workload.obj
    yield from _reserved(obj.metadata.get("labels"), ("metadata", "labels"), f"{obj.kind} `{obj.name}`",
                         severity, automatic)
    for pod in workload.pods:
        template = pod.template
        if template is None:
            continue  # a bare Pod: its own labels are the object's
        metadata = template.get("metadata")
        labels = metadata.get("labels") if isinstance(metadata, dict) else None
        whose = f"the pod template of the {pod.role} replicas" if pod.role else "the pod template"
        yield from _reserved(labels, pod.path[:-1] + ("metadata", "labels"), whose, severity, automatic)
