"""A pod requests a MIG device without selecting nodes whose MIG layout is applied.

## What it does
Flags pod templates with a container that requests or limits `nvidia.com/mig-<profile>` when
the `nodeSelector` (or every required node-affinity term, `In`/`Exists`) does not pin both
`nvidia.com/mig.config` (the mig-parted layout MIG Manager applies to the node) and
`nvidia.com/mig.config.state: success` (MIG Manager's report that the layout is in place). The
finding names what is missing and points at `nodeSelector:`, else the pod template's `spec:`.

{{pod-views}}

{{placement}}

## Why is this bad?
MIG devices exist only on nodes whose GPUs are partitioned with a layout that creates that
profile, and the layout is per node: MIG Manager applies the layout named by the node's
`nvidia.com/mig.config` label, and "changing a MIG layout disrupts workloads already using the
GPU". While it is applied the node's state is `pending` or `rebooting`, and it can end
`failed`. Selecting `nvidia.com/mig.config` keeps the pod on nodes meant for its layout;
selecting `nvidia.com/mig.config.state: success` keeps it off nodes being reconfigured or
left half-configured. The article's MIG job selects both.

## Example
```yaml
    spec:
      nodeSelector:
        accelerator: nvidia
      containers:
      - name: trial
        resources:
          limits: {nvidia.com/mig-1g.10gb: 1}
```

Use instead:
```yaml
    spec:
      nodeSelector:
        accelerator: nvidia
        nvidia.com/mig.config: all-1g.10gb
        nvidia.com/mig.config.state: success
```

## Known problems
- AKS-managed MIG pools (`--gpu-instance-profile MIG1g`…) have a fixed layout and no MIG
  Manager labels: when every pool of the project the pod's labels can reach was created with
  `--gpu-instance-profile` (Terraform's `gpu_instance`, `gpu-instance-profile` under
  `node-pools:`), the rule is silent, with or without a node selector. Pools the project does
  not describe are not counted when one of its pools offers the profile asked for: nothing in
  the project says a MIG Manager partitions any node.
- Any layout name counts; GPU008 checks mig-parted layouts themselves.
- A pod that asks only for MIG devices and selects no node at all is reported here, not also by
  GPU006 (no GPU node selection): the MIG Manager labels this rule asks for exist only on GPU
  nodes, so one fix settles both; one cause, the more specific finding.

## References
- NVIDIA GPU Operator, GPU Operator with MIG: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-mig.html
- NVIDIA mig-parted (MIG Manager labels): https://github.com/NVIDIA/mig-parted
- AKS, Multi-instance GPU node pools: https://learn.microsoft.com/azure/aks/gpu-multi-instance
"""

from mlops_lint.model.admission import admissions
from mlops_lint.model.cluster import on_aks_managed_mig_pools
from mlops_lint.model.gpunodes import gpu_entries, pins_value
from mlops_lint.model.k8s import PodSpec
from mlops_lint.model.mig import is_mig_resource, normalise_profile
from mlops_lint.rule import POD, Finding, rule

MIG_CONFIG = "nvidia.com/mig.config"
MIG_STATE = "nvidia.com/mig.config.state"


@rule(code="GPU007", name="mig-selector-missing", severity="warning", scope=POD, tags=("gpu", "mig", "scheduling"))
def check(pod: PodSpec, ctx):
    mig = [(c, s, r) for c, s, r in gpu_entries(pod) if is_mig_resource(r.name)]
    if not mig:
        return
    options = [a.placement for a in admissions(pod, ctx.index, ctx.config)]  # with what Kueue flavors inject
    missing = []
    if not all(placement.selects(MIG_CONFIG) for placement in options):
        missing.append(f"`{MIG_CONFIG}`")
    if not all(pins_value(placement, MIG_STATE, "success") for placement in options):
        missing.append(f"`{MIG_STATE}: success`")
    if not missing or on_aks_managed_mig_pools(pod, ctx.index, ctx.config):
        return
    container, _, resource = mig[0]
    if "nodeSelector" in pod.spec.kspans:
        span, node = pod.spec.kspans["nodeSelector"], pod.path + ("nodeSelector",)
    else:
        span, node = pod.span, pod.path
    profile = normalise_profile(resource.name)
    layout = f"all-{profile.replace('+', '.')}" if profile else "<layout>"
    yield Finding(
        span,
        f"{pod.describe()} asks for {resource.name} ({container.kind_label} `{container.name}`) but its node "
        f"selection lacks {' and '.join(missing)}: it can land on a node whose MIG layout is another one, or is "
        "still being applied",
        node=node,
        fix=f"add `nodeSelector: {{{MIG_CONFIG}: {layout}, {MIG_STATE}: success}}`",
    )
