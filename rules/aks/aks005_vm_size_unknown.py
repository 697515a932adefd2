"""A node pool VM size that the catalogue does not know.

## What it does
Flags the `--node-vm-size` (`-s`) value of `az aks create` and `az aks nodepool add` when it is
neither a GPU size of mlops-lint's catalogue (the GPU sizes AKS supports, from Azure's size
pages) nor a CPU size that Azure's naming convention explains: general purpose D (`Standard_D4s_v5`,
`Standard_D4ps_v5`, `Standard_DS3_v2`), memory optimised E and M (`Standard_E16as_v5`,
`Standard_M32ms`), compute optimised F (`Standard_F8s_v2`), burstable B, confidential DC and EC v5
(`Standard_DC4as_v5`, `Standard_EC8as_v5`, also the `_cc_v5` sizes of confidential containers)
and storage optimised L v3 (`Standard_L8s_v3`). A size of a family AKS offers but the catalogue
does not describe (FX, the HPC families H, HB, HC and HX, NP, NG) gets a finding that says so,
without a "did you mean". Sizes are compared
case-insensitively, with or without the `Standard_` prefix, as AKS compares them. Values the
script does not determine (`"$VM_SIZE"` from `$(...)`, `<vm-size>`) are skipped. The message
suggests close catalogue names.

In Terraform, the `vm_size` of an `azurerm_kubernetes_cluster_node_pool` or `default_node_pool`
(a literal, or a variable's default) is checked the same way, at the attribute's value.
Bicep's and ARM templates' `vmSize` likewise, and the `vm-size` of a `node-pools:` entry of
`.mlops-lint.yaml` when the run lints the config.

## Why is this bad?
A misspelt or retired size fails the provisioning script (`The VM size of ... is not allowed in
your subscription`), and a size the linter cannot read switches off the checks that depend on
it: GPU pool isolation (AKS001–AKS003) and the placement rules that compare pods with the VM
(XPL003–XPL005, DST005). The article asks to "select an NC-series size based on GPU memory, GPU
count, CPU-to-GPU ratio" and to verify that "the VM SKU is available in the cluster region".

## Example
```bash
az aks nodepool add --cluster-name "$AKS_CLUSTER" --resource-group "$RESOURCE_GROUP" \
  --name gpunp --node-vm-size Standard_NC4as_T4_v4
```

In Terraform:
```hcl
resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  name                  = "gpunp"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.aks.id
  vm_size               = "Standard_NC4as_T4_v4"
}
```

Use instead:
```bash
az aks nodepool add --cluster-name "$AKS_CLUSTER" --resource-group "$RESOURCE_GROUP" \
  --name gpunp --node-vm-size Standard_NC4as_T4_v3
```

In Terraform:
```hcl
resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  name                  = "gpunp"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.aks.id
  vm_size               = "Standard_NC4as_T4_v3"
}
```

## Known problems
The catalogue is not every Azure size: families whose memory does not follow from the name are
only known by their vCPUs (B, M), and series outside the naming table (L, H, DC, EC, A, older D
versions) are reported here although Azure may accept them. The finding is informational; add
the size to `linter/data/vm_sizes.json` or suppress it with
`# mlops-lint: disable=AKS005 <reason>`.

## References
- Azure, VM size naming conventions: https://learn.microsoft.com/azure/virtual-machines/vm-naming-conventions
- Azure, GPU-accelerated VM sizes: https://learn.microsoft.com/azure/virtual-machines/sizes/overview#gpu-accelerated
- AKS, Use GPUs: https://learn.microsoft.com/azure/aks/use-nvidia-gpu
"""

from mlops_lint.model.azcli import UNKNOWN, ShellScript, resolved
from mlops_lint.model.vmsizes import lookup, suggest, unknown_family
from mlops_lint.rule import SHELL, Finding, rule


@rule(code="AKS005", name="vm-size-unknown", severity="info", scope=SHELL, tags=("aks",))
def check(script: ShellScript, ctx):
    if not isinstance(script, ShellScript):  # a Terraform file: its pools' vm_size
        yield from _terraform(script.path, ctx)
        return
    for az in script.az_commands:
        if not (az.is_("aks", "create") or az.is_("aks nodepool", "add")):
            continue
        value = az.value("--node-vm-size")
        if value is None:
            continue
        size = resolved(value.value)
        if size is UNKNOWN or not str(size).strip() or lookup(str(size)) is not None:
            continue
        family = unknown_family(str(size))
        if family is not None:
            yield Finding(
                value.span,
                f"VM size `{size}` is of the {family} family, which AKS offers but mlops-lint's VM size catalogue "
                "does not describe: its vCPUs, memory and accelerators are unknown, so the node pool checks that "
                "depend on them are skipped",
                node=(az.group, az.verb, "--node-vm-size"),
            )
            continue
        close = suggest(str(size))
        hint = f"; did you mean {' or '.join(f'`{name}`' for name in close)}?" if close else ""
        yield Finding(
            value.span,
            f"VM size `{size}` is not in mlops-lint's VM size catalogue, so its GPUs, vCPUs and memory are "
            f"unknown and the node pool checks that depend on them are skipped{hint}",
            node=(az.group, az.verb, "--node-vm-size"),
            fix=close[0] if close else None,
        )


_SETTING = {"bicep": "vmSize", "arm": "vmSize", "config": "vm-size"}  # the VM size's name in each source


def _terraform(path: str, ctx):
    """The ``vm_size`` of each Terraform pool defined in ``path``, once per attribute."""
    from mlops_lint.model.cluster import cluster_of

    seen = set()
    for pool in cluster_of(ctx.index, ctx.config).pools_defined_in(path):
        size, origin = pool.vm_size, pool.vm_origin
        if pool.source not in ("terraform", "bicep", "arm", "config") or origin is None \
                or not isinstance(size, str) or not size.strip() \
                or lookup(size) is not None or origin.target in seen:
            continue
        seen.add(origin.target)
        family = unknown_family(size)
        if family is not None:
            yield Finding(origin.target, f"VM size `{size}` is of the {family} family, which AKS offers but mlops-lint's "
                                         "VM size catalogue does not describe: its vCPUs, memory and accelerators are "
                                         "unknown, so the node pool checks that depend on them are skipped",
                          node=("pool", pool.display, _SETTING.get(pool.source, "vm_size")))
            continue
        close = suggest(size)
        hint = f"; did you mean {' or '.join(f'`{name}`' for name in close)}?" if close else ""
        yield Finding(origin.target, f"VM size `{size}` is not in mlops-lint's VM size catalogue, so its GPUs, vCPUs and "
                                     f"memory are unknown and the node pool checks that depend on them are skipped{hint}",
                      node=("pool", pool.display, _SETTING.get(pool.source, "vm_size")),
                      fix=close[0] if close else None)
