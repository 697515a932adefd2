"""A script that labels or taints nodes with kubectl instead of setting it on the node pool.

## What it does
Flags `kubectl label` and `kubectl taint` commands on nodes in shell scripts: the resource is
`node`, `nodes`, `no` or `node/<name>`, named directly or through a selector
(`kubectl label nodes -l accelerator=nvidia nvidia.com/mig.config=…`). Global options before
the verb (`--context`, `-n`, `--kubeconfig`) and the verb's own options (`-l`, `--overwrite`)
are read as kubectl reads them. Not flagged: a `--dry-run` (nothing changes), a command whose
resource comes from a file (`-f`), and one that only removes labels or taints (`key-`,
`key:NoSchedule-`).

The finding points at the `label` or `taint` word. It is a warning, and an error in the
`aks-automatic` profile, where Deployment Safeguards reject the edit.

## Why is this bad?
A node pool's labels and taints are part of its template: every node the cluster autoscaler or
node auto-provisioning adds later, and every node AKS replaces in an upgrade or a reimage,
gets them. A label set with kubectl is on today's nodes only, so the pods that select it (the
article's MIG Job selects `nvidia.com/mig.config`; its GPU pods select `accelerator: nvidia`)
stay pending on new nodes, or scale up nodes they can never use. The article creates the GPU
pool with `--labels accelerator=nvidia workload=training` and `--node-taints
sku=gpu:NoSchedule` for that reason, and its own MIG step (`kubectl label nodes -l
accelerator=nvidia nvidia.com/mig.config=hptuning-1g10gb`) is the pattern this rule reports.
On AKS Automatic the nodes are managed: Deployment Safeguards and the managed node
configuration deny direct node edits ("Enforce best practices with Deployment Safeguards").

## Example
```sh
kubectl label nodes \
  -l accelerator=nvidia \
  nvidia.com/mig.config=hptuning-1g10gb \
  --overwrite
```

Use instead:
```sh
az aks nodepool update \
  --resource-group "$RESOURCE_GROUP" \
  --cluster-name "$AKS_CLUSTER" \
  --name gpunp \
  --labels accelerator=nvidia workload=training nvidia.com/mig.config=hptuning-1g10gb
```

## Known problems
- A one-off label for a test on a fixed set of nodes (a node pool without autoscaling, in a
  lab) is reported all the same; suppress it there.
- Commands run through a variable (`$KUBECTL label …`), an alias or a wrapper function are not
  seen, nor kubectl commands inside manifests (a Job that labels its own node).

## References
- AKS, node pool labels: https://learn.microsoft.com/azure/aks/use-labels
- AKS, node pool taints: https://learn.microsoft.com/azure/aks/use-node-taints
- AKS, Deployment Safeguards: https://learn.microsoft.com/azure/aks/deployment-safeguards
- kubectl label: https://kubernetes.io/docs/reference/kubectl/generated/kubectl_label/
"""

from __future__ import annotations

from mlops_lint.model.azcli import ShellScript
from mlops_lint.rule import SHELL, Finding, rule

# kubectl's global options that take a value as the next word
GLOBAL_VALUE_OPTIONS = frozenset({
    "-n", "--namespace", "--context", "--kubeconfig", "--cluster", "--user", "-s", "--server", "--as", "--as-group",
    "--as-uid", "--token", "--request-timeout", "-v", "--v", "--certificate-authority", "--client-key",
    "--client-certificate", "--tls-server-name", "--cache-dir", "--profile", "--profile-output", "--password",
    "--username", "--log-file",
})
# options of `label` and `taint` that take a value as the next word
VERB_VALUE_OPTIONS = frozenset({
    "-l", "--selector", "--field-selector", "-o", "--output", "--resource-version", "--template", "--field-manager",
    "-f", "--filename", "-k", "--kustomize",
})
NODE_RESOURCES = frozenset({"node", "nodes", "no"})


def _text(token) -> str:
    return token.value if isinstance(token.value, str) else token.raw


def _node_edit(words):
    """(the verb's token, the resource as written, the changes) of a kubectl label or taint of
    nodes, else None."""
    if not words or _text(words[0]).rsplit("/", 1)[-1] != "kubectl":
        return None
    position, verb = 1, None
    while position < len(words):
        text = _text(words[position])
        if text in GLOBAL_VALUE_OPTIONS:
            position += 2
            continue
        if text.startswith("-"):
            position += 1
            continue
        verb = words[position]
        break
    if verb is None or _text(verb) not in ("label", "taint"):
        return None
    resource, changes, options = None, [], set()
    position += 1
    while position < len(words):
        text = _text(words[position])
        name = text.split("=", 1)[0]
        if text.startswith("-"):
            options.add(name)
            position += 2 if text in VERB_VALUE_OPTIONS else 1
            continue
        if resource is None:
            resource = text
        elif "/" in resource or resource not in NODE_RESOURCES or changes or "=" in text or ":" in text \
                or text.endswith("-"):
            changes.append(text)  # after `nodes`, the first word is a node name unless it is a change
        position += 1
    if resource is None or resource.split("/", 1)[0] not in NODE_RESOURCES:
        return None
    if options & {"--dry-run", "-f", "--filename", "-k", "--kustomize"}:
        return None
    if changes and all(change.endswith("-") for change in changes):
        return None  # only removals
    return verb, resource, changes


@rule(code="SHL001", name="node-edited-with-kubectl", severity="warning", scope=SHELL, tags=("aks", "node-pools"))
def check(script: ShellScript, ctx):
    automatic = getattr(ctx.config, "profile", None) == "aks-automatic"
    for command in script.commands:
        found = _node_edit(command.words)
        if found is None:
            continue
        verb, resource, changes = found
        what = "labels" if _text(verb) == "label" else "taints"
        shown = f" ({', '.join(f'`{c}`' for c in changes[:3])}{' …' if len(changes) > 3 else ''})" if changes else ""
        message = (f"`kubectl {_text(verb)} {resource}` sets {what}{shown} on today's nodes only: nodes the autoscaler "
                   "adds or AKS replaces in an upgrade lack them, and pods that select them stay pending there")
        if automatic:
            message += "; on AKS Automatic, Deployment Safeguards deny editing nodes"
        flag = "--labels" if what == "labels" else "--node-taints"
        yield Finding(verb.span, message, severity="error" if automatic else None,
                      node=("kubectl", _text(verb), resource, *changes),
                      fix=(f"set them on the node pool (`az aks nodepool update {flag} …`, or the NodePool template on "
                           "AKS Automatic)"))
