"""A GPU node pool without the label GPU workloads select.

## What it does
Flags each node pool made by the project's `az aks` commands (later updates applied) whose VM
size is an NVIDIA GPU size and whose node labels lack one of the configured GPU node labels
(`gpu-node-labels` in the config; by default `accelerator=nvidia`, the label the article's pods
select). Labels AKS sets itself count: configuring `kubernetes.azure.com/accelerator: nvidia`
is met by every NVIDIA GPU pool. The finding points at the pool's `--labels` (or, at creation,
`--nodepool-labels`) when it has some, else at its `--node-vm-size`.

Terraform pools are read the same way: the finding points at the pool's `node_labels` (else its
`vm_size`) attribute, and a `node_labels` the module does not determine is not judged.
Bicep pools and ARM templates' pools too, at `nodeLabels` (else `vmSize`). And the entries of
`node-pools:` in `.mlops-lint.yaml`, when the run lints the config: at the entry's `labels` (else
`vm-size`) key, with the hint `labels: {accelerator: nvidia}`.

## Why is this bad?
GPU pods find their nodes by label: the article's pods use `nodeSelector: {accelerator: nvidia}`
and the pool is created with `--labels accelerator=nvidia workload=training` so that "the label
used by the preceding pod" is there. A GPU pool without it is invisible to those pods, which stay
Pending, while pods that select nothing may fill it.

## Example
```bash
az aks nodepool add \
  --cluster-name "$AKS_CLUSTER" --resource-group "$RESOURCE_GROUP" \
  --name gpunp --mode User \
  --node-vm-size Standard_NC24ads_A100_v4 \
  --labels workload=training \
  --node-taints sku=gpu:NoSchedule
```

In Terraform:
```hcl
resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  name                  = "gpunp"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.aks.id
  vm_size               = "Standard_NC4as_T4_v3"
  node_taints           = ["sku=gpu:NoSchedule"]
}
```

Use instead:
```bash
az aks nodepool add \
  --cluster-name "$AKS_CLUSTER" --resource-group "$RESOURCE_GROUP" \
  --name gpunp --mode User \
  --node-vm-size Standard_NC24ads_A100_v4 \
  --labels accelerator=nvidia workload=training \
  --node-taints sku=gpu:NoSchedule
```

In Terraform:
```hcl
resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  name                  = "gpunp"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.aks.id
  vm_size               = "Standard_NC4as_T4_v3"
  node_taints           = ["sku=gpu:NoSchedule"]
  node_labels           = { accelerator = "nvidia" }
}
```

## Fix safety
Safe. The fix adds the missing `key=value` labels as words of their own before the first value
of the `--labels` (`--nodepool-labels` on `az aks create`) that the finding points at
(`--labels accelerator=nvidia workload=training`, as the article writes it), or appends
`--labels key=value` to the command that made the pool when it has none (after its last word).
A label only lets pods that select it find the pool; it takes no pod off it. No fix when the
pool already has the key with another value (`accelerator=nvida`: a typo or a choice the author
makes), for a key under `kubernetes.io/`, `k8s.io/` or `kubernetes.azure.com/` (and their
subdomains: AKS and the kubelet keep those, and the CLI refuses them), or when the flag's values
are empty, unknown or attached (`--labels=team=ml`: the CLI reads no word after it).
No fix in a script that records commands rather than runs them (`$ ` prompts,
Markdown fences: a terminal session, a README snippet) or that does not read cleanly (an
unclosed quote or heredoc).
In Terraform, Bicep and ARM, a pool that writes no labels gets the attribute on a new line below
its VM size (`node_labels = { accelerator = "nvidia" }`, `nodeLabels: { accelerator: 'nvidia' }`;
in ARM above `"vmSize"`, `"nodeLabels": {"accelerator": "nvidia"},`), indented as that line, and
a literal empty map is filled, and a literal map gets the label before its first pair (right
after the `{` of a map written on one line: `{ accelerator = "nvidia", workload = "training" }`;
on a line of its own above the first key of a Bicep or ARM map written over several lines);
nothing else of the file changes. No fix for a Terraform map written over several lines (the
reader keeps no position of its keys), for labels that come from a variable or parameter (the
hint says so: other pools may share it), or when the line the fix would go beside holds other code.
A config `node-pools` entry gets the label added to its `labels` mapping (or a `labels` mapping
with it), in the entry's style; no fix when the entry has the key with another value.

## Known problems
- AMD GPU sizes (`Standard_ND96isr_MI300X_v5`) are not checked: the default label names NVIDIA.
- AKS's deprecated bare `accelerator=nvidia` node label may still appear on some GPU nodes; it is
  not relied on, since AKS replaced it with `kubernetes.azure.com/accelerator`.
- A pool whose labels come from a value the script does not determine (`--labels $LABELS`) is
  not judged.

## References
- AKS, Use GPUs for compute-intensive workloads: https://learn.microsoft.com/azure/aks/use-nvidia-gpu
- AKS, Use labels in an AKS cluster: https://learn.microsoft.com/azure/aks/use-labels
"""

import shlex

from mlops_lint.fix import Plan, Replace
from mlops_lint.fix.iac import IAC, NAMES, add_beside, add_to_map, config_set, not_literal
from mlops_lint.model.azcli import UNKNOWN, ShellScript
from mlops_lint.model.position import Span
from mlops_lint.model.cluster import cluster_of, describe_pool, hint
from mlops_lint.rule import SHELL, Finding, rule


def _by_script(cluster, wanted: dict) -> dict[str, list]:
    """(pool, missing labels, where) of each NVIDIA GPU pool without the wanted labels, by the
    script its finding goes to, in pool order: once per cluster, not once per script."""
    found: dict[str, list] = {}
    for pool in cluster.pools:
        vm = pool.vm
        if not pool.in_linted_file or not pool.created or vm is None or vm.gpu_resource != "nvidia.com/gpu":
            continue
        if pool.labels_open or any(pool.labels.get(key) is UNKNOWN for key in wanted):
            continue
        known = pool.label_view().known
        missing = {key: value for key, value in wanted.items() if known.get(key) != value}
        if not missing:
            continue
        where = pool.labels_origin or pool.vm_origin
        if where is not None:
            found.setdefault(where.path, []).append((pool, missing, where))
    return found


LABELS_SETTING = {"terraform": "node_labels", "bicep": "nodeLabels", "arm": "nodeLabels", "config": "labels"}
RESERVED = ("kubernetes.io", "k8s.io", "kubernetes.azure.com")


def _reserved(key: str) -> bool:
    """A label prefix AKS or the kubelet keep for themselves (``node.kubernetes.io/…`` too)."""
    prefix, slash, _ = key.rpartition("/")
    return bool(slash) and any(prefix == r or prefix.endswith("." + r) for r in RESERVED)


def add_labels(pool, missing: dict, where) -> Plan | None:
    """The missing labels appended to the command's labels flag, or the flag to the command; in
    Terraform, Bicep and ARM the labels attribute added beside the pool's VM size when the pool
    writes none (or a literal empty map filled)."""
    if pool.source in IAC:
        return _iac_labels(pool, missing, where)
    if pool.source == "config":
        written = pool.entry.get("labels") if pool.entry is not None else None
        if any(key in pool.labels or _reserved(key) for key in missing) \
                or not (written is None or isinstance(written, dict)):
            return None
        intent = config_set(pool, "labels", dict(missing))  # merged into a labels mapping written
        pairs = " ".join(f"{k}={v}" for k, v in missing.items())
        return Plan.safe_fix(f"add the GPU node label {pairs}", intent) if intent is not None else None
    command = where.command
    if command is None or not command.editable or any(key in pool.labels or _reserved(key) for key in missing):
        return None
    name = "--nodepool-labels" if command.is_("aks", "create") else "--labels"
    words = " ".join(shlex.quote(f"{key}={value}") for key, value in missing.items())
    if where is pool.labels_origin:
        flag = command.flag(name)
        if flag is None or flag.span != where.span or not flag.values \
                or any(v.value is UNKNOWN or not str(v.value).strip() for v in flag.values):
            return None
        if any(w.span.line == flag.span.line and w.span.col == flag.span.col and "=" in w.raw
               for w in command.command.words):
            return None  # `--labels=a=b`: the CLI takes no further word after an attached value
        first = flag.values[0].span
        at, text = Span(first.line, first.col, first.line, first.col), f"{words} "
    elif pool.labels_origin is None:
        at, text = command.end, f" {name} {words}"
    else:
        return None
    return Plan.safe_fix(f"add the GPU node label {' '.join(f'{k}={v}' for k, v in missing.items())}", Replace(at, text))


def _iac_labels(pool, missing: dict, where) -> Plan | None:
    if any(key in pool.labels or _reserved(key) for key in missing):
        return None
    origin, name = pool.labels_origin, NAMES[pool.source]["labels"]
    if origin is None:
        intent = add_beside(pool.source, pool.vm_origin, name, dict(missing)) if where is pool.vm_origin else None
    else:
        intent = add_to_map(pool.source, origin, dict(missing)) if where is origin else None
    pairs = " ".join(f"{k}={v}" for k, v in missing.items())
    return Plan.safe_fix(f"add the GPU node label {pairs}", intent) if intent is not None else None


@rule(code="AKS002", name="gpu-pool-without-label", severity="warning", scope=SHELL, tags=("aks", "gpu", "scheduling"))
def check(script: ShellScript, ctx):
    wanted = ctx.config.effective_gpu_node_labels
    cluster = cluster_of(ctx.index, ctx.config)
    found = cluster.memo(("AKS002", tuple(wanted.items())), lambda: _by_script(cluster, wanted))
    for pool, missing, where in found.get(script.path, ()):
        pairs = " ".join(f"{key}={value}" for key, value in missing.items())
        have = ", ".join(f"{k}={v}" for k, v in pool.labels.items()) or "none"
        command = where.command
        flag = command.flag("--labels", "--nodepool-labels") if command is not None else None
        repeated = flag is not None and sum(o.canonical == flag.canonical for o in command.options) > 1
        note = f"; {flag.name} is given more than once and the CLI keeps only the last" if repeated else ""
        yield Finding(
            where.span,
            f"GPU node pool {describe_pool(pool)} lacks the GPU node label {pairs} that GPU pods select "
            f"(its labels: {have}{note}); add it to `{LABELS_SETTING.get(pool.source, '--labels')}`",
            node=("pool", pool.display, "labels"),
            fix=hint(pool, "labels", pairs) + not_literal(pool.source, pool.labels_origin),
            autofix=add_labels(pool, missing, where),
        )
